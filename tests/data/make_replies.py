"""Makes tests/data/replies/: spoken replies as the server says them (Piper's joe voice) and a speaker cutting in
(espeak-ng's en-us, Debian), 16 kHz mono, kept as files because neither engine says a text the same way twice
(Piper draws its noise afresh; the eSpeak NG library carries a little state between calls) and the echo tests
must hold on every run.  python tests/data/make_replies.py"""

from __future__ import annotations

import subprocess
import tempfile
import wave
from pathlib import Path

import numpy as np
import soxr

from assistant.speech.voices import load_voice

HERE = Path(__file__).resolve().parent / "replies"
REPLIES = {
    "booked.wav": "Booked Everest tomorrow, nine to ten a.m. Anything else?",
    "which_room.wav": "Which room?",
    "taken.wav": "Fuji is taken then. Denali, Kilimanjaro are free at that time, or Fuji is free from eleven a.m. "
                 "Which would you like?",
    "taken_short.wav": "Fuji is taken then. Denali and Kilimanjaro are free at that time.",
}
CUT_IN = {"no_denali.wav": "No, Denali instead."}


def _write(path: Path, audio: np.ndarray) -> None:
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(16_000)
        out.writeframes(audio.astype("<i2").tobytes())


def main() -> None:
    HERE.mkdir(exist_ok=True)
    voice = load_voice("piper:joe")
    for name, text in REPLIES.items():
        audio = np.concatenate(list(voice.sentences(text)))
        _write(HERE / name, soxr.resample(audio, voice.sample_rate, 16_000).astype(np.int16))
    with tempfile.TemporaryDirectory() as scratch:
        for name, text in CUT_IN.items():
            raw = Path(scratch) / name
            subprocess.run(["espeak-ng", "-v", "en-us", "-s", "160", "-w", str(raw), text], check=True)
            with wave.open(str(raw), "rb") as wav:
                audio = np.frombuffer(wav.readframes(wav.getnframes()), np.int16)
                _write(HERE / name, soxr.resample(audio, wav.getframerate(), 16_000).astype(np.int16))


if __name__ == "__main__":
    main()
