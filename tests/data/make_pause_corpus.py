"""Regenerate the spoken corpus with pauses inside the turn (tests/data/pauses/*.wav) from pauses.json.

Each turn is said in pieces by hibari TTS; each piece's own leading and trailing silence is trimmed, and the
pauses of pauses.json are put between the pieces, so the true speech segments are known to the millisecond and
written back into pauses.json ("segments_ms": [start, end] of each piece in the file).

pip install --no-deps hibari-tts==0.2.1 (plus numpy, onnxruntime; the default voice is bundled).
Usage: python tests/data/make_pause_corpus.py
"""

from __future__ import annotations

import json
import tempfile
import wave
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "pauses"
RATE = 16_000
LEAD_MS, TAIL_MS = 400, 2000  # silence before the first word and after the last
TRIM_LEVEL = 300  # |sample| above this is speech when trimming a piece's own silence (int16)


def _say(tts: object, text: str) -> np.ndarray:
    from assistant.audio.pcm import PcmDecoder

    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "tts.wav"
        tts.save(text, str(raw), seed=0)  # type: ignore[attr-defined]
        with wave.open(str(raw), "rb") as wav:
            decoder = PcmDecoder(wav.getframerate(), wav.getnchannels())
            pcm = b"".join(decoder.feed(wav.readframes(wav.getnframes())) + decoder.flush())
    samples = np.frombuffer(pcm, dtype=np.int16)
    loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > TRIM_LEVEL)
    return samples[loud[0] : loud[-1] + 1]


def main() -> None:
    from hibari import Hibari

    tts = Hibari()
    manifest = json.loads((HERE / "pauses.json").read_text())
    for item in manifest:
        pieces = [_say(tts, text) for text in item["pieces"]]
        audio = [np.zeros(LEAD_MS * RATE // 1000, np.int16)]
        segments, at = [], LEAD_MS * RATE // 1000
        for i, piece in enumerate(pieces):
            segments.append([round(at * 1000 / RATE), round((at + len(piece)) * 1000 / RATE)])
            audio.append(piece)
            at += len(piece)
            gap = item["pauses_ms"][i] if i < len(item["pauses_ms"]) else TAIL_MS
            audio.append(np.zeros(gap * RATE // 1000, np.int16))
            at += gap * RATE // 1000
        with wave.open(str(HERE / item["file"]), "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(RATE)
            out.writeframes(np.concatenate(audio).tobytes())
        item["segments_ms"] = segments
        print(f"{item['file']}: {' | '.join(item['pieces'])}  {segments}")
    (HERE / "pauses.json").write_text("[\n" + ",\n".join(json.dumps(i, ensure_ascii=False) for i in manifest)
                                      + "\n]\n")


if __name__ == "__main__":
    main()
