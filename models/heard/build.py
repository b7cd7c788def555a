"""Build the heard corpus of a language: render generated requests through many voices and rooms, decode each
with every recognizer the product ships for that language, align the slots, write the file (models/heard/corpus.py).

`assistant build-corpus --language en` (`make corpus`) runs it with progress; it takes tens of minutes on 2 cores
(most of it decoding), so the file is built once and kept in the repository, and a model build only reads it.
The requests are the model's own generator's (the same seed): "train" rows from its training templates, "dev" rows
from the held-out templates. The texts are the recognizers' own, before any transcript rewrite of the product
(assistant/language/*/transcript.py), so the model learns every form a recognizer writes.
"""

from __future__ import annotations

import hashlib
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from models.datagen.splits import generate_splits
from models.example import Example
from models.heard.acoustics import Acoustics, apply, draw_acoustics
from models.heard.align import Misaligned, align
from models.heard.corpus import HeardRow, corpus_path, read_corpus, write_corpus
from models.heard.voices import HELD_OUT_ESPEAK, render, training_voices
from models.model_cache import language_recipe

__all__ = ["CorpusPlan", "build_heard_corpus", "realign_corpus", "Recognizer", "product_recognizers", "hear"]

_SOURCES = ("acoustics.py", "align.py", "build.py", "corpus.py", "voices.py")
_BATCH = 8


class Recognizer(Protocol):
    def transcribe_batch(self, pcms: list[bytes], priority: int = 0) -> list[str]: ...


@dataclass(frozen=True)
class CorpusPlan:
    language: str = "en"
    train_requests: int = 1000
    dev_requests: int = 120
    seed: int = 41


def product_recognizers(language: str, cache_dir: Path, rooms_file: Path) -> dict[str, Recognizer]:
    """Every recognizer the product ships for `language` on a CPU, as the server builds it (its hotwords), but
    writing their own text (no transcript rewrite)."""
    from assistant.asr.whisper import WhisperRecognizer
    from assistant.booking.rooms import RoomDirectory
    from assistant.language.registry import DEFAULT, get

    rooms = RoomDirectory.load(rooms_file).rooms
    hotwords = get(language).hotwords(rooms)
    if language == DEFAULT.code:  # English: the server's Whisper and Moonshine; others: their [asr] models
        from assistant.asr.moonshine import MoonshineRecognizer

        return {"whisper tiny.en int8": WhisperRecognizer(cache_dir, "tiny.en", hotwords=hotwords,
                                                          rewrite=lambda text: text),
                "moonshine tiny": MoonshineRecognizer([room.name for room in rooms], rewrite=None)}
    return {"whisper base int8": WhisperRecognizer(cache_dir, "base", hotwords=hotwords, language=language,
                                                   rewrite=lambda text: text)}


def _say(message: str) -> None:
    print(f"[heard] {message}", file=sys.stderr, flush=True)


def _requests(plan: CorpusPlan) -> list[tuple[str, Example]]:
    """(split, request): a sample of the model's own training and dev requests, fixed by the plan's seed."""
    train, dev = generate_splits(language_recipe(plan.language)[0])
    rng = random.Random(plan.seed)
    return [("train", e) for e in rng.sample(train, plan.train_requests)] + \
        [("dev", e) for e in rng.sample(dev, plan.dev_requests)]


def hear(requests: Sequence[tuple[str, Example]], recognizers: dict[str, Recognizer], language: str, seed: int,
         progress: Callable[[int, int], None] | None = None, engines: tuple[str, ...] | None = None,
         draw_room: Callable[[random.Random], Acoustics] = draw_acoustics) -> tuple[list[HeardRow], Counter[str]]:
    """Each request rendered in a drawn voice and room, decoded by every recognizer, its slots aligned; returns
    the rows and the count of requests dropped, by reason. `engines`: draw voices of these TTS engines only;
    `draw_room`: the room each is heard in."""
    rng = random.Random(seed)
    rows: list[HeardRow] = []
    dropped: Counter[str] = Counter()
    for first in range(0, len(requests), _BATCH):
        batch = requests[first:first + _BATCH]
        voiced = []
        for split, example in batch:
            voice = training_voices(language, rng, engines)
            acoustics = draw_room(rng)
            samples = apply(_padded(render(voice, example.text)), acoustics)
            voiced.append((split, example, voice, acoustics, samples.tobytes()))
        for name, recognizer in recognizers.items():
            texts = _decoded(recognizer, name, [pcm for *_, pcm in voiced])
            for (split, example, voice, acoustics, _), text in zip(voiced, texts, strict=True):
                if text is None:
                    dropped[f"{name} failed"] += 1
                    continue
                try:
                    heard = align(example, text)
                except Misaligned as exc:
                    dropped[exc.reason] += 1
                    continue
                rows.append(HeardRow(heard, example, split, voice.name, voice.rate, voice.pitch, acoustics.name,
                                     name))
        if progress is not None:
            progress(min(first + _BATCH, len(requests)), len(requests))
    return rows, dropped


def _decoded(recognizer: Recognizer, name: str, pcms: list[bytes]) -> list[str | None]:
    """The batch's texts; where the recognizer fails, each audio alone, None for the one it fails on (said, so the
    failure can be reproduced: a recognizer that raises on some audio is a product bug, not corpus noise)."""
    try:
        return list(recognizer.transcribe_batch(pcms))
    except Exception:  # noqa: BLE001 - found, told and counted; the corpus goes on
        out: list[str | None] = []
        for pcm in pcms:
            try:
                out.append(recognizer.transcribe_batch([pcm])[0])
            except Exception as exc:  # noqa: BLE001
                _say(f"{name} failed on {len(pcm) / 32_000:.2f} s of audio: {type(exc).__name__}: {str(exc)[-160:]}")
                out.append(None)
        return out


def _padded(samples: np.ndarray) -> np.ndarray:
    """300 ms of silence each side, as the endpointer's pre-roll and hangover give the recognizer."""
    edge = np.zeros(4800, np.int16)
    return np.concatenate([edge, samples, edge])


def realign_corpus(path: Path) -> Path:
    """The stored decodes aligned again with today's aligner (no audio): rows that no longer align are dropped
    and counted; the header's counts follow. For a change to the aligner, not to the voices or recognizers."""
    header, rows = read_corpus(path)
    kept: list[HeardRow] = []
    dropped: Counter[str] = Counter(header["dropped"])
    for row in rows:
        try:
            kept.append(replace(row, example=align(row.said, row.example.text)))
        except Misaligned as exc:
            dropped[exc.reason] += 1
    header |= _counts(kept, dropped)
    header["realigned"] = {"aligner": corpus_key(CorpusPlan(**header["plan"])), "rows_before": len(rows)}
    write_corpus(path, header, kept)
    _say(f"{len(kept)} of {len(rows)} stored rows align again ({len(rows) - len(kept)} dropped) -> {path}")
    return path


def _counts(rows: list[HeardRow], dropped: Counter[str]) -> dict[str, Any]:
    return {"rows": len(rows), "rows_by_split": dict(Counter(row.split for row in rows)),
            "dropped": dict(dropped.most_common()), "voices": dict(Counter(row.voice.split("+")[0] for row in rows)),
            "recognizers": dict(Counter(row.recognizer for row in rows)),
            "acoustics": dict(Counter(row.acoustics.split(",")[0] for row in rows))}


def corpus_key(plan: CorpusPlan) -> str:
    digest = hashlib.sha256(repr(asdict(plan)).encode())
    here = Path(__file__).resolve().parent
    for name in _SOURCES:
        digest.update((here / name).read_bytes())
    return digest.hexdigest()[:12]


def build_heard_corpus(plan: CorpusPlan, cache_dir: Path, rooms_file: Path, out: Path | None = None) -> Path:
    """Writes the corpus file (default: the repository's, models/heard/data/<language>.jsonl.gz)."""
    from tqdm import tqdm

    started = time.monotonic()
    out = out or corpus_path(plan.language)
    requests = _requests(plan)
    _say(f"{len(requests)} {plan.language} requests ({plan.train_requests} train, {plan.dev_requests} dev), "
         f"each in a drawn voice and room, decoded by every recognizer")
    recognizers = product_recognizers(plan.language, cache_dir, rooms_file)
    with tqdm(total=len(requests), desc="rendering and decoding", unit="request", file=sys.stderr) as bar:
        rows, dropped = hear(requests, recognizers, plan.language, plan.seed, lambda done, _: bar.update(done - bar.n))
    decoded = len(requests) * len(recognizers)
    header: dict[str, Any] = {
        "corpus": "heard", "language": plan.language, "key": corpus_key(plan), "plan": asdict(plan),
        "requests": len(requests), "decoded": decoded, **_counts(rows, dropped),
        "held_out_voices": sorted(HELD_OUT_ESPEAK) + ["flite", "festival"],
        "build_seconds": round(time.monotonic() - started, 1),
    }
    write_corpus(out, header, rows)
    _say(f"{len(rows)} of {decoded} decoded requests aligned ({sum(dropped.values())} dropped: "
         f"{', '.join(f'{k} {v}' for k, v in dropped.most_common()) or 'none'}) -> {out}")
    return out
