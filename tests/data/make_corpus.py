"""Regenerate the spoken request corpus (tests/data/corpus/*.wav) from requests.json with hibari TTS, at 16 kHz.

pip install --no-deps hibari-tts==0.2.1 (the default voice is bundled: nothing is downloaded).
Usage: python tests/data/make_corpus.py
"""

from __future__ import annotations

import json
import tempfile
import wave
from pathlib import Path

HERE = Path(__file__).resolve().parent / "corpus"


def main() -> None:
    from hibari import Hibari

    from assistant.audio.pcm import PcmDecoder

    tts = Hibari()
    for item in json.loads((HERE / "requests.json").read_text()):
        with tempfile.TemporaryDirectory() as tmp:
            raw = Path(tmp) / "tts.wav"
            tts.save(item["text"], str(raw), seed=0)
            with wave.open(str(raw), "rb") as wav:
                decoder = PcmDecoder(wav.getframerate(), wav.getnchannels())
                pcm = b"".join(decoder.feed(wav.readframes(wav.getnframes())) + decoder.flush())
        with wave.open(str(HERE / item["file"]), "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(16_000)
            out.writeframes(pcm)
        print(f"{item['file']}: {item['text']}")


if __name__ == "__main__":
    main()
