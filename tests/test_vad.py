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


def _last_voiced_ms(pcm: bytes, gate_db: float, until_ms: int) -> int:
    vad, last = WebRtcVad(quiet_below_peak_db=gate_db), 0
    for at in range(0, until_ms, 20):
        if vad.is_voiced(pcm[at * 32 : (at + 20) * 32]):
            last = at + 20
    return last


def test_the_energy_gate_ends_speech_where_the_sound_ends() -> None:
    """webrtcvad alone calls ~100 ms of digital silence after a word speech (its overhang); under the gate the
    last voiced frame is within a frame or two of the last sound. Speech itself stays voice."""
    import json
    import wave
    from pathlib import Path

    pauses = Path(__file__).resolve().parent / "data" / "pauses"
    item = json.loads((pauses / "pauses.json").read_text())[0]  # "Book Everest tomorrow at" [600 ms] ...
    with wave.open(str(pauses / item["file"]), "rb") as wav:
        pcm = wav.readframes(wav.getnframes())
    first_end, second_start = item["segments_ms"][0][1], item["segments_ms"][1][0]
    plain, gated = (_last_voiced_ms(pcm, gate, second_start - 20) for gate in (0.0, 40.0))
    assert plain - first_end >= 60 and gated - first_end <= 40, (plain, gated, first_end)
    voiced = sum(WebRtcVad(quiet_below_peak_db=40).is_voiced(pcm[at * 32 : (at + 20) * 32])
                 for at in range(item["segments_ms"][0][0], first_end - 20, 20))
    assert voiced >= 0.8 * (first_end - item["segments_ms"][0][0]) / 20  # the words themselves are voice


def test_steady_noise_is_left_to_webrtcvad() -> None:
    noise = (np.random.default_rng(0).normal(0, 300, 320 * 100)).astype("<i2").tobytes()
    gated, plain = WebRtcVad(quiet_below_peak_db=40), WebRtcVad()
    assert [gated.is_voiced(noise[i : i + 640]) for i in range(0, len(noise), 640)] == \
        [plain.is_voiced(noise[i : i + 640]) for i in range(0, len(noise), 640)]
