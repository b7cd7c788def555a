"""The sans-I/O voice stream with scripted voice decisions: no clock, no loop, no model. What a session is told
to do, and when, in audio time."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import pytest

from assistant.audio.endpointer import EndpointerConfig
from assistant.audio.stream import (
    PartialDue,
    PauseDue,
    StreamConfig,
    StreamEvent,
    UtteranceDropped,
    UtteranceEnded,
    UtteranceStarted,
    VoiceStream,
)
from assistant.errors import InputError
from tests.fakes import ScriptedVad

FRAME = 640  # bytes of 20 ms at 16 kHz
DATA = Path(__file__).resolve().parent / "data"


def feed(script: str, config: StreamConfig | None = None, finish: bool = True) -> list[StreamEvent]:
    """'.' = a frame the VAD calls silence, 'x' = a voiced one; each frame's samples are its index."""
    stream = VoiceStream(16_000, config=config, vad=ScriptedVad(script))
    events: list[StreamEvent] = []
    for i in range(len(script)):
        events += stream.feed(np.full(320, i, dtype="<i2").tobytes())
    return events + (stream.finish() if finish else [])


def kinds(events: list[StreamEvent]) -> list[str]:
    return [type(e).__name__ for e in events]


def test_an_utterance_is_started_then_ended_with_its_audio() -> None:
    events = feed("." * 50 + "x" * 40 + "." * 30, StreamConfig(partial_interval_ms=0))
    assert kinds(events) == ["UtteranceStarted", "UtteranceEnded"]
    started, ended = events
    assert isinstance(started, UtteranceStarted) and isinstance(ended, UtteranceEnded)
    assert started.utterance == ended.utterance == 1
    assert started.start_ms == ended.start_ms == (50 + 3) * 20 - 300  # 300 ms of pre-roll
    assert ended.end_ms == 90 * 20 and 280 <= ended.decided_ms - ended.end_ms <= 300
    first = np.frombuffer(ended.audio[:FRAME], "<i2")
    assert first[0] == ended.start_ms // 20 and len(ended.audio) == (ended.decided_ms - ended.start_ms) // 20 * FRAME


def test_partials_are_due_every_interval_and_only_on_voiced_frames() -> None:
    # voiced, a 100 ms pause when the second partial comes due, voiced again, then the end
    script = "." * 10 + "x" * 32 + "." * 5 + "x" * 40 + "." * 20
    events = feed(script, StreamConfig(partial_interval_ms=200))
    partials = [e for e in events if isinstance(e, PartialDue)]
    assert len(partials) >= 4
    voiced = {i for i, mark in enumerate(script) if mark == "x"}
    assert all(p.at_ms // 20 - 1 in voiced for p in partials)  # never in a pause
    gaps = [len(b.audio) - len(a.audio) for a, b in zip(partials, partials[1:], strict=False)]
    assert min(gaps) >= 200 // 20 * FRAME  # at least an interval of new audio between two partials
    ended = next(e for e in events if isinstance(e, UtteranceEnded))
    assert all(p.utterance == 1 and p.at_ms <= ended.end_ms for p in partials)


def test_no_partials_when_the_interval_is_zero() -> None:
    assert not any(isinstance(e, PartialDue) for e in feed("." * 10 + "x" * 200 + "." * 20,
                                                            StreamConfig(partial_interval_ms=0)))


def test_long_speech_is_cut_and_the_next_utterance_starts_at_once() -> None:
    config = StreamConfig(EndpointerConfig(max_utterance_ms=3000), partial_interval_ms=0)
    events = feed("." * 10 + "x" * 400 + "." * 20, config)
    assert kinds(events)[:3] == ["UtteranceStarted", "UtteranceEnded", "UtteranceStarted"]
    assert isinstance(events[1], UtteranceEnded) and events[1].forced
    assert [e.utterance for e in events if isinstance(e, UtteranceStarted)] == [1, 2, 3]


def test_a_cough_is_dropped_and_numbered() -> None:
    events = feed("." * 20 + "x" * 6 + "." * 30 + "x" * 40 + "." * 20, StreamConfig(partial_interval_ms=0))
    assert kinds(events) == ["UtteranceStarted", "UtteranceDropped", "UtteranceStarted", "UtteranceEnded"]
    assert isinstance(events[1], UtteranceDropped) and events[1].utterance == 1
    assert isinstance(events[3], UtteranceEnded) and events[3].utterance == 2


def test_finish_ends_the_open_utterance() -> None:
    assert kinds(feed("." * 10 + "x" * 30, StreamConfig(partial_interval_ms=0))) == [
        "UtteranceStarted", "UtteranceEnded"]
    assert kinds(feed("." * 10 + "x" * 30, StreamConfig(partial_interval_ms=0), finish=False)) == [
        "UtteranceStarted"]


def test_audio_time_counts_frames_whatever_the_chunking_and_rate() -> None:
    stream = VoiceStream(48_000, channels=2, vad=ScriptedVad("." * 100))
    pcm = np.zeros(48_000 * 2, dtype="<i2").tobytes()  # one second of 48 kHz stereo
    for offset in range(0, len(pcm), 777):  # odd chunks split samples and channel pairs
        stream.feed(pcm[offset : offset + 777])
    assert 960 <= stream.audio_ms <= 1000  # the resampler holds back a few ms until the end
    stream.finish()
    assert stream.audio_ms == 1000


@pytest.mark.parametrize(("rate", "channels", "form"), [(12_345, 1, "pcm_s16le"), (16_000, 6, "pcm_s16le"),
                                                         (16_000, 1, "opus")])
def test_audio_it_cannot_take_is_refused_with_a_code(rate: int, channels: int, form: str) -> None:
    with pytest.raises(InputError) as info:
        VoiceStream(rate, channels, form)
    assert info.value.code == "unsupported_audio"


def test_real_speech_through_webrtcvad_is_one_utterance() -> None:
    with wave.open(str(DATA / "book_everest_tomorrow_9.wav"), "rb") as wav:
        rate, pcm = wav.getframerate(), wav.readframes(wav.getnframes())
    stream = VoiceStream(rate, config=StreamConfig(partial_interval_ms=600))
    events = stream.feed(pcm + b"\x00\x00" * rate) + stream.finish()
    assert kinds(events).count("UtteranceStarted") == kinds(events).count("UtteranceEnded") == 1
    assert kinds(events).count("PartialDue") >= 2
    ended = next(e for e in events if isinstance(e, UtteranceEnded))
    assert 1500 <= ended.end_ms - ended.start_ms <= len(pcm) * 1000 // (2 * rate) + 300


def _decided(script: str, hangover_ms: int, chunk_frames: int) -> list[tuple[str, int]]:
    """Feed `chunk_frames` frames per call; answer every pause with `hangover_ms`; (event, audio ms) in order."""
    stream = VoiceStream(16_000, config=StreamConfig(EndpointerConfig(pause_ms=120), partial_interval_ms=0),
                         vad=ScriptedVad(script))
    out: list[tuple[str, int]] = []

    def take(events: list[StreamEvent]) -> None:
        for event in events:
            at = getattr(event, "at_ms", getattr(event, "decided_ms", getattr(event, "start_ms", -1)))
            out.append((type(event).__name__, at))
            if isinstance(event, PauseDue):
                take(stream.decide(hangover_ms))

    pcm = b"".join(np.full(320, i, dtype="<i2").tobytes() for i in range(len(script)))
    for offset in range(0, len(pcm), chunk_frames * FRAME):
        take(stream.feed(pcm[offset : offset + chunk_frames * FRAME]))
    take(stream.finish())
    return out


def test_a_pause_stops_the_stream_until_its_hangover_is_decided() -> None:
    script = "." * 20 + "x" * 30 + "." * 30 + "x" * 30 + "." * 100
    held = _decided(script, 1300, 1)
    assert [k for k, _ in held] == ["UtteranceStarted", "PauseDue", "UtteranceResumed", "PauseDue", "UtteranceEnded"]
    short = _decided(script, 180, 1)  # ended at the first pause, 180 ms after the voice; the rest is a new one
    assert [k for k, _ in short][:3] == ["UtteranceStarted", "PauseDue", "UtteranceEnded"]
    assert short[2][1] - 50 * 20 <= 180
    # The decision is taken where the pause began, however the audio is cut into messages: the same turns
    assert _decided(script, 1300, 50) == held and _decided(script, 180, 37) == short


def test_audio_fed_while_a_pause_waits_is_kept_for_after_the_decision() -> None:
    stream = VoiceStream(16_000, config=StreamConfig(EndpointerConfig(pause_ms=120), partial_interval_ms=0),
                         vad=ScriptedVad("." * 20 + "x" * 30 + "." * 10 + "x" * 30 + "." * 30))
    events = stream.feed(b"\x00" * FRAME * 62)
    assert isinstance(events[-1], PauseDue) and stream.awaiting_decision
    assert stream.feed(b"\x00" * FRAME * 58) == []  # waits: nothing decided behind the owner's back
    with pytest.raises(RuntimeError):
        VoiceStream(16_000).decide(None)
    rest = stream.decide(None)
    assert kinds(rest) == ["UtteranceResumed", "PauseDue"]
    ended = stream.decide(None) + stream.finish()
    assert kinds(ended) == ["UtteranceEnded"] and stream.audio_ms == stream.position_ms == 120 * 20
