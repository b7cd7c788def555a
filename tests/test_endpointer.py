"""The endpointing state machine with scripted voice decisions (no model, no clock)."""

from assistant.audio.endpointer import (
    Endpointer,
    EndpointerConfig,
    PauseStarted,
    SpeechDropped,
    SpeechEnded,
    SpeechResumed,
    SpeechStarted,
)

FRAME = b"\x00\x00" * 320  # 20 ms at 16 kHz


def run(decisions: str, config: EndpointerConfig | None = None, flush: bool = True) -> list[object]:
    """'.' = silence frame, 'x' = voiced frame (20 ms each)."""
    ep = Endpointer(config)
    events: list[object] = []
    for i, mark in enumerate(decisions):
        events += ep.push(FRAME[:-2] + bytes([i % 256, 0]), mark == "x")
    return events + (ep.flush() if flush else [])


def test_silence_gives_nothing() -> None:
    assert run("." * 500) == []


def test_an_utterance_with_pre_roll_and_hangover() -> None:
    events = run("." * 50 + "x" * 40 + "." * 30)
    assert [type(e) for e in events] == [SpeechStarted, SpeechEnded]
    started, ended = events
    assert isinstance(started, SpeechStarted) and isinstance(ended, SpeechEnded)
    # speech detected once 3 of the last 5 frames (60 % of 100 ms) are voiced; 300 ms of pre-roll before that
    assert started.start_ms == (50 + 3) * 20 - 300
    assert ended.end_ms == 90 * 20  # last voiced frame
    # the hangover confirmed it: at most 10 % voiced over the last 300 ms, so 280-300 ms after the last voice
    assert 280 <= ended.decided_ms - ended.end_ms <= 300
    assert len(ended.audio) == (ended.decided_ms - started.start_ms) // 20 * len(FRAME)
    assert not ended.forced


def test_a_short_pause_does_not_end_the_utterance() -> None:
    events = run("." * 20 + "x" * 30 + "." * 10 + "x" * 30 + "." * 30)
    assert [type(e) for e in events] == [SpeechStarted, SpeechEnded]


def test_a_click_does_not_start_one_and_a_cough_is_dropped() -> None:
    assert run("." * 20 + "x" + "." * 5 + "xx" + "." * 40) == []
    cough = run("." * 20 + "x" * 6 + "." * 30, EndpointerConfig(min_speech_ms=200))
    assert [type(e) for e in cough] == [SpeechStarted, SpeechDropped]


def test_long_speech_is_cut_and_goes_on() -> None:
    events = run("." * 10 + "x" * 400 + "." * 20, EndpointerConfig(max_utterance_ms=3000))
    kinds = [type(e) for e in events]
    assert kinds[:3] == [SpeechStarted, SpeechEnded, SpeechStarted]
    assert isinstance(events[1], SpeechEnded) and events[1].forced
    assert sum(isinstance(e, SpeechEnded) for e in events) >= 3


def test_stream_end_flushes_an_open_utterance() -> None:
    events = run("." * 10 + "x" * 30)
    assert [type(e) for e in events] == [SpeechStarted, SpeechEnded]
    assert run("." * 10 + "x" * 30, flush=False)[-1].__class__ is SpeechStarted


def test_speech_ms_is_the_length_of_the_audio_so_far_without_joining_it() -> None:
    endpointer = Endpointer()
    frame = b"\x01\x00" * 320
    for voiced in [True] * 30 + [False] * 3:
        endpointer.push(frame, voiced)
        assert endpointer.speech_ms == len(endpointer.current_audio()) // 32  # 16 kHz, 2 bytes: 32 bytes a ms
    assert endpointer.in_speech and endpointer.speech_ms > 0


def _paused(decisions: str, hangover_at_pause: int | None, pause_ms: int = 120) -> list[object]:
    """Like run(), with pauses reported, and the hangover set to `hangover_at_pause` at each pause."""
    ep = Endpointer(EndpointerConfig(pause_ms=pause_ms))
    events: list[object] = []
    for i, mark in enumerate(decisions):
        new = ep.push(FRAME[:-2] + bytes([i % 256, 0]), mark == "x")
        if hangover_at_pause is not None and any(isinstance(e, PauseStarted) for e in new):
            ep.set_hangover(hangover_at_pause)
        events += new
    return events + ep.flush()


def test_a_pause_is_reported_once_and_its_end_when_speech_resumes() -> None:
    events = _paused("." * 20 + "x" * 30 + "." * 10 + "x" * 30 + "." * 30, None)
    assert [type(e) for e in events] == [SpeechStarted, PauseStarted, SpeechResumed, PauseStarted, SpeechEnded]
    pause = events[1]
    assert isinstance(pause, PauseStarted)
    assert pause.speech_end_ms == 50 * 20 and pause.at_ms == (50 + 6) * 20  # 120 ms after the last voice


def test_a_held_pause_outlasts_the_hangover_and_a_shortened_one_ends_sooner() -> None:
    # 600 ms of silence inside: the plain 300 ms hangover would end the utterance there; held to 1300 it goes on
    events = _paused("." * 20 + "x" * 30 + "." * 30 + "x" * 30 + "." * 80, 1300)
    assert [type(e) for e in events].count(SpeechEnded) == 1
    ended = next(e for e in events if isinstance(e, SpeechEnded))
    assert ended.end_ms == 110 * 20 and ended.decided_ms - ended.end_ms >= 0.9 * 1300  # up to 10 % may be voice
    # shortened to 180 ms at the pause: ends 180 ms after the last voice, not 300
    events = _paused("." * 20 + "x" * 30 + "." * 30, 180)
    ended = next(e for e in events if isinstance(e, SpeechEnded))
    assert 160 <= ended.decided_ms - ended.end_ms <= 180


def test_speech_resuming_restores_the_hangover_for_the_next_pause() -> None:
    # held at the first pause (1300 ms), the second pause has the plain 300 ms again: the utterance ends there
    ep = Endpointer(EndpointerConfig(pause_ms=120))
    events: list[object] = []
    for i, mark in enumerate("." * 20 + "x" * 30 + "." * 40 + "x" * 10 + "." * 20):
        new = ep.push(FRAME, mark == "x")
        if any(isinstance(e, PauseStarted) for e in new) and i < 80:
            ep.set_hangover(1300)
        events += new
    ended = [e for e in events if isinstance(e, SpeechEnded)]
    assert len(ended) == 1 and ended[0].end_ms == 100 * 20 and ended[0].decided_ms - ended[0].end_ms <= 300
