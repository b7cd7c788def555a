import numpy as np
import pytest

from assistant.audio.endpointer import Endpointer
from assistant.audio.vad import WebRtcVad


def test_silence_is_not_voice_and_makes_no_utterance() -> None:
    vad, endpointer = WebRtcVad(), Endpointer()
    silence = np.zeros(320, dtype="<i2").tobytes()
    assert not vad.is_voiced(silence)
    events = [e for _ in range(250) for e in endpointer.push(silence, vad.is_voiced(silence))]
    assert events == [] and endpointer.flush() == []


def test_bad_frames_and_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="640 bytes"):
        WebRtcVad().is_voiced(b"\x00" * 100)
    with pytest.raises(ValueError, match="10, 20 or 30 ms"):
        WebRtcVad(frame_ms=25)
    with pytest.raises(ValueError, match="aggressiveness"):
        WebRtcVad(aggressiveness=7)
