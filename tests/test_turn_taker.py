"""The turn taker with scripted voice decisions and scripted readings: no clock, no loop, no model. When a turn
ends, how it ended, and which turn the speech after it reopens, in audio time."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import pytest

from assistant.audio.endpointer import EndpointerConfig
from assistant.audio.silence import shorten_silences
from assistant.audio.stream import StreamConfig, VoiceStream
from assistant.booking.results import Clarify, Command
from assistant.turn.models import AcousticTurnModel, Reading, ReadingTurnModel, turn_model
from assistant.turn.policy import COMPLETE, INCOMPLETE, TurnSettings
from assistant.turn.taker import Decision, ReadDue, TurnBegan, TurnEnded, TurnTaker, Verdict
from tests.fakes import ScriptedVad
from tests.test_turn_policy import BOOKING

FRAME = 640  # bytes of 20 ms at 16 kHz
PAUSES = Path(__file__).resolve().parent / "data" / "pauses"
SETTINGS = TurnSettings()
ASKS = Clarify(("start_time",), "At what time?")


def _taker(script: str, settings: TurnSettings = SETTINGS) -> TurnTaker:
    config = StreamConfig(EndpointerConfig(pause_ms=settings.read_after_ms), partial_interval_ms=0)
    return TurnTaker(VoiceStream(16_000, config=config, vad=ScriptedVad(script)), turn_model(settings), settings)


def _run(script: str, readings: list[Reading | None], settings: TurnSettings = SETTINGS) -> list[Decision]:
    """Feed the scripted frames; answer each read with the next scripted reading (the last one repeats)."""
    taker = _taker(script, settings)
    out: list[Decision] = []
    pending = taker.feed(b"\x00" * FRAME * len(script))
    n = 0
    while pending:
        decision = pending.pop(0)
        out.append(decision)
        if isinstance(decision, ReadDue):
            pending += taker.answer(readings[min(n, len(readings) - 1)])
            n += 1
        if not pending and not taker.awaiting_read and n >= 0:
            pending, n = taker.finish(), -10**6
    return out


def _ended(decisions: list[Decision]) -> list[TurnEnded]:
    return [d for d in decisions if isinstance(d, TurnEnded)]


SPEECH = "." * 20 + "x" * 40  # 0.4 s of silence, then 0.8 s of speech


def test_a_complete_reading_ends_the_turn_soon_and_its_words_are_reused() -> None:
    decisions = _run(SPEECH + "." * 60, [Reading("Book Everest tomorrow at 3 for an hour.", BOOKING, 0.99)])
    (ended,) = _ended(decisions)
    verdict = next(d for d in decisions if isinstance(d, Verdict))
    assert verdict.verdict.kind == COMPLETE and ended.ended_by == COMPLETE
    assert ended.heard == "Book Everest tomorrow at 3 for an hour."  # no second decode
    assert ended.decided_ms - ended.end_ms <= SETTINGS.complete_ms + 20 and ended.reopens is None


def test_an_incomplete_reading_holds_the_turn_through_the_pause() -> None:
    script = SPEECH + "." * 50 + "x" * 40 + "." * 80  # a 1 s pause inside the request
    decisions = _run(script, [Reading("Book Everest tomorrow at", ASKS, 0.99),
                              Reading("Book Everest tomorrow at 3 for an hour.", BOOKING, 0.99)])
    (ended,) = _ended(decisions)  # one turn: held through the pause
    assert ended.ended_by == COMPLETE and ended.pauses == 2 and ended.reopens is None


def test_a_booking_with_no_end_said_waits_complete_open_ms() -> None:
    open_ended = Command("book_meeting", "everest", BOOKING.start, BOOKING.end, executable=True,
                         spans=(("room", "Everest"), ("start_time", "3")))
    settings = TurnSettings(complete_open_ms=600)
    script = SPEECH + "." * 20 + "x" * 20 + "." * 60  # a 400 ms pause after "... at 3", then "until five"
    decisions = _run(script, [Reading("Book Everest at 3", open_ended, 0.99), Reading("... until 5", BOOKING, 0.99)],
                     settings)
    assert [d.verdict.hangover_ms for d in decisions if isinstance(d, Verdict)][0] == 600
    assert len(_ended(decisions)) == 1  # the 400 ms pause did not end it: the end came after it
    cut = _run(script, [Reading("Book Everest at 3", open_ended, 0.99), Reading("... until 5", BOOKING, 0.99)],
               TurnSettings(complete_open_ms=150))
    assert len(_ended(cut)) == 2  # at 150 ms (configs/gpu.toml) the pause ends the turn: the next piece reopens it


@pytest.mark.parametrize("first", ["complete", "hangover", "held"])
def test_speech_soon_after_any_end_reopens_the_turn_with_its_audio(first: str) -> None:
    """However the first turn ended (early on a complete read, on the plain hangover, held to hold_ms), speech
    starting within amend_ms continues it: its reads and its end carry the whole request's audio."""
    gap = {"complete": 40, "hangover": 40, "held": 75}[first]  # 0.8 s; held: past the 1.3 s hold
    reading = {"complete": Reading("Book Denali tomorrow at 10.", BOOKING, 0.99), "hangover": None,
               "held": Reading("Book Denali tomorrow at", ASKS, 0.99)}[first]
    script = SPEECH + "." * gap + "x" * 30 + "." * 100
    decisions = _run(script, [reading, Reading("... for an hour and a half", BOOKING, 0.99)])
    one, two = _ended(decisions)
    assert one.ended_by == {"complete": COMPLETE, "hangover": "hangover", "held": INCOMPLETE}[first]
    began = [d for d in decisions if isinstance(d, TurnBegan)]
    assert [b.reopens for b in began] == [None, one.utterance] and two.reopens == one.utterance
    assert len(two.audio) > len(one.audio)  # the whole request from its start (inner silence shortened)
    read = [d for d in decisions if isinstance(d, ReadDue)][-1]
    assert read.reopens == one.utterance and len(read.audio) > len(one.audio)


def test_speech_after_the_window_is_a_new_request() -> None:
    script = SPEECH + "." * 120 + "x" * 30 + "." * 100  # 2.4 s later: past amend_ms
    decisions = _run(script, [Reading("Book Denali tomorrow at 10.", BOOKING, 0.99)])
    assert [e.reopens for e in _ended(decisions)] == [None, None]
    narrow = _run(SPEECH + "." * 40 + "x" * 30 + "." * 100, [Reading("Book Denali tomorrow at 10.", BOOKING, 0.99)],
                  TurnSettings(amend_ms=0))
    assert [e.reopens for e in _ended(narrow)] == [None, None]


def test_the_acoustic_model_listens_to_the_sound() -> None:
    settings = TurnSettings(model="smart-turn")
    assert isinstance(turn_model(settings), AcousticTurnModel) and isinstance(turn_model(SETTINGS), ReadingTurnModel)
    decisions = _run(SPEECH + "." * 60, [Reading(probability=0.9)], settings)
    (ended,) = _ended(decisions)
    assert ended.ended_by == COMPLETE and ended.heard is None  # no words read: the final decodes


def test_answering_without_a_read_due_is_an_error() -> None:
    with pytest.raises(RuntimeError):
        _taker(SPEECH).answer(None)


def test_long_silences_inside_speech_are_shortened_for_the_recognizer_only() -> None:
    """The two-long-pauses turn (800 and 600 ms inside): every inner silence comes out at most 300 ms; the
    silence before the first word and after the last stays; the speech itself is kept sample for sample."""
    with wave.open(str(PAUSES / "c13.wav"), "rb") as wav:
        pcm = wav.readframes(wav.getnframes())
    short = shorten_silences(pcm)
    samples, kept = np.frombuffer(pcm, "<i2"), np.frombuffer(short, "<i2")
    assert len(pcm) - len(short) == pytest.approx(2 * 16 * (800 + 600 - 2 * 300), abs=2 * 16 * 200)
    loud = np.abs(kept.astype(np.int32)) > 300
    edges = np.flatnonzero(loud)
    assert edges[0] == np.flatnonzero(np.abs(samples.astype(np.int32)) > 300)[0]  # the lead-in is untouched
    runs = np.diff(np.flatnonzero(np.diff(loud.astype(np.int8)) != 0))
    assert runs.max() * 1000 / 16_000 < 1000  # no silence inside near the pauses' length is left
    assert shorten_silences(b"") == b"" and shorten_silences(b"\x01") == b"\x01"
