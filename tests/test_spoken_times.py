"""Spoken times nobody says, and the recognizer's n-best, with the real models.

tiny.en writes "ten thirty four" as "1034" (and "ten thirty for forty five" as "103445"): a run-together time is a
question that offers the likely reading, never a booking (assistant/booking/guard.py), through the real server.
The n-best path runs on the real tiny.en: a final decode carries its other readings, and understanding acts on
one of them (assistant/nlu/nbest.py). The WAVs are tests/data/times (tests/data/make_corpus.py --listed times).
"""

from __future__ import annotations

import asyncio
import sqlite3
import wave
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from assistant.asr.hypotheses import Heard
from assistant.asr.whisper import WhisperRecognizer
from assistant.config import Settings
from assistant.nlu.parser import IntentSlotParser
from assistant.text_pipeline import spoken_turn
from tests.test_spoken_corpus import _utterances

TIMES = Path(__file__).resolve().parent / "data" / "times"
NOW = datetime(2026, 12, 2, 10, 0, tzinfo=ZoneInfo("Europe/Berlin"))


def _booked(store: Path) -> list[tuple[str, str, str]]:
    if not store.exists():
        return []
    with sqlite3.connect(store) as db:
        return list(db.execute("SELECT room, start_text, end_text FROM bookings WHERE cancelled_utc IS NULL"))


def _pcm(name: str) -> bytes:
    with wave.open(str(TIMES / name), "rb") as wav:
        assert wav.getframerate() == 16_000
        return wav.readframes(wav.getnframes())


def test_a_run_together_spoken_time_is_a_question_never_a_booking(own_server: str, tmp_path: Path) -> None:
    events = asyncio.run(_utterances(own_server, TIMES / "ten_thirty_four_joe.wav"))
    heard = " | ".join(e["text"] for e in events if e["type"] == "transcript")
    results = [e["result"] for e in events if e["type"] == "result"]
    assert results, events
    last = results[-1]
    assert last["type"] == "clarify", (heard, last)
    assert last["doubt"]["check"] == "odd_minutes", (heard, last)
    assert "Did you mean 10:30 am?" in last["question"] or "Did you mean 10:35 am?" in last["question"], last
    assert _booked(tmp_path / "bookings.sqlite") == [], heard


def test_a_time_run_into_the_next_number_books_nothing_wrong(own_server: str, tmp_path: Path) -> None:
    # "... at ten thirty for forty five minutes": tiny.en wrote "at 103445 minutes" on a Xeon; whatever another
    # processor writes, nothing but Everest on Friday 10:30-11:15 may be booked
    asyncio.run(_utterances(own_server, TIMES / "ten_thirty_for_espeak.wav"))
    assert set(_booked(tmp_path / "bookings.sqlite")) <= {
        ("everest", "2026-12-04T10:30:00+01:00", "2026-12-04T11:15:00+01:00")}


def test_the_real_tiny_en_gives_its_n_best(settings: Settings) -> None:
    recognizer = WhisperRecognizer(settings.cache_dir, "tiny.en", hypotheses=4)
    pcm = _pcm("ten_thirty_four_joe.wav")
    readings = recognizer.transcribe_nbest([pcm], 4)[0]
    assert len(readings) == 4
    scores = [score for _, score in readings]
    assert scores == sorted(scores, reverse=True) and all(score < 0 for score in scores)
    final = recognizer.transcribe_batch([pcm], priority=0)[0]  # a final: the best, with the others along
    assert isinstance(final, Heard) and final == readings[0][0] and final.score == readings[0][1]
    assert {text for text, _ in final.alternatives} <= {text for text, _ in readings[1:]}
    partial = recognizer.transcribe_batch([pcm], priority=2)[0]  # a partial: the greedy text alone
    assert not isinstance(partial, Heard)


def test_understanding_chooses_among_the_real_n_best(settings: Settings, parser: IntentSlotParser,
                                                     tmp_path: Path) -> None:
    from assistant.wiring import build_text_pipeline

    pipeline = build_text_pipeline(settings, tmp_path / "bookings.sqlite", parser=parser)
    heard = WhisperRecognizer(settings.cache_dir, "tiny.en", hypotheses=4).transcribe_batch(
        [_pcm("ten_thirty_four_joe.wav")], priority=0)[0]
    assert isinstance(heard, Heard) and heard.alternatives, heard
    outcome = pipeline.act_many([spoken_turn(heard, "c", NOW, None)], commit=True)[0]
    assert outcome.turn.text in {str(heard), *(text for text, _ in heard.alternatives)}
    assert outcome.result is not None and outcome.result.to_dict()["type"] == "clarify", outcome.result
    assert pipeline.store.bookings(NOW, NOW.replace(day=9)) == []


def test_a_likely_rival_reading_with_another_time_is_proposed_not_booked(settings: Settings,
                                                                         parser: IntentSlotParser,
                                                                         tmp_path: Path) -> None:
    """The recognizer was unsure between "at nine" and "at five" (scores 0.05 apart): the guard's way, a
    proposal; "yes" books the likelier reading."""
    from assistant.wiring import build_text_pipeline

    pipeline = build_text_pipeline(settings, tmp_path / "bookings.sqlite", parser=parser)
    heard = Heard("Book Everest tomorrow at nine for an hour.", -0.20,
                  [("Book Everest tomorrow at five for an hour.", -0.25)])
    outcome = pipeline.act_many([spoken_turn(heard, "c", NOW, None)], commit=True)[0]
    assert outcome.result is not None
    result = outcome.result.to_dict()
    assert result["type"] == "clarify" and "yes" in result["question"].lower(), result
    assert pipeline.store.bookings(NOW, NOW.replace(day=9)) == []
    yes = pipeline.act_many([spoken_turn(Heard("Yes."), "c", NOW, None)], commit=True)[0]
    assert yes.result is not None and yes.result.to_dict()["type"] == "command", yes.result
    booked = pipeline.store.bookings(NOW, NOW.replace(day=9))
    assert [(b.room, b.start.hour) for b in booked] == [("everest", 9)]
