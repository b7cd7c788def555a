"""The endpointing state machine with scripted voice decisions (no model, no clock)."""

from assistant.audio.endpointer import Endpointer, EndpointerConfig, SpeechDropped, SpeechEnded, SpeechStarted

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
