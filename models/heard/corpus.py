"""The heard corpus's file: one per language, `models/heard/data/<language>.jsonl.gz`, kept in the repository.

The first line is the header (what was rendered, by which voices and recognizers, how many requests were dropped
and why, the builder's key); every other line is one recognized request: the recognizer's text, the intent and
the slots as character spans of that text (models/heard/align.py), what was said, and how (voice, rate, pitch,
room, recognizer). Training reads the rows of the "train" split (requests of the training templates); the "dev"
rows (held-out templates) measure the model on recognizer text. Written with a zero gzip time stamp, so the same
rows give the same bytes, and the model's cache key can be the file's digest.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from models.example import Example

__all__ = ["HeardRow", "corpus_path", "read_corpus", "write_corpus", "heard_examples", "corpus_digest",
           "corpus_summary"]

DATA = Path(__file__).resolve().parent / "data"


@dataclass(frozen=True)
class HeardRow:
    example: Example  # the recognizer's text, with the request's intent and slots moved onto it
    said: Example  # the request as the generator wrote it, and the voice said it
    split: str  # "train" or "dev" (held-out templates)
    voice: str
    rate: float
    pitch: int
    acoustics: str
    recognizer: str

    def to_json(self) -> dict[str, Any]:
        return {"text": self.example.text, "intent": self.example.intent,
                "spans": [list(span) for span in self.example.spans], "template": self.example.template,
                "said": self.said.text, "said_spans": [list(span) for span in self.said.spans], "split": self.split,
                "voice": self.voice, "rate": self.rate,
                "pitch": self.pitch, "acoustics": self.acoustics, "recognizer": self.recognizer}

    @classmethod
    def from_json(cls, row: dict[str, Any]) -> HeardRow:
        example = Example(row["text"], row["intent"], _spans(row["spans"]), row["template"])
        said = Example(row["said"], row["intent"], _spans(row["said_spans"]), row["template"])
        return cls(example, said, row["split"], row["voice"], float(row["rate"]), int(row["pitch"]),
                   row["acoustics"], row["recognizer"])


def _spans(spans: list[list[Any]]) -> tuple[tuple[int, int, str], ...]:
    return tuple((int(start), int(end), str(name)) for start, end, name in spans)


def corpus_path(language: str, folder: Path = DATA) -> Path:
    return folder / f"{language}.jsonl.gz"


def write_corpus(path: Path, header: dict[str, Any], rows: Iterable[HeardRow]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(header, ensure_ascii=False, sort_keys=True)]
    lines += [json.dumps(row.to_json(), ensure_ascii=False, sort_keys=True) for row in rows]
    with path.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as out:
        out.write(("\n".join(lines) + "\n").encode())


def read_corpus(path: Path) -> tuple[dict[str, Any], list[HeardRow]]:
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        header = json.loads(next(lines))
        return header, [HeardRow.from_json(json.loads(line)) for line in lines if line.strip()]


def heard_examples(language: str, split: str = "train", folder: Path = DATA) -> list[Example]:
    """The corpus's requests of `split` as training examples; none when the language has no corpus."""
    path = corpus_path(language, folder)
    if not path.is_file():
        return []
    return [row.example for row in read_corpus(path)[1] if row.split == split]


def corpus_digest(language: str, folder: Path = DATA) -> str | None:
    """The file's sha256 (a part of the model's cache key); None when the language has no corpus."""
    path = corpus_path(language, folder)
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def corpus_summary(language: str, folder: Path = DATA) -> dict[str, Any] | None:
    """What the model's manifest says it was trained on: the header's voices, recognizers and counts."""
    path = corpus_path(language, folder)
    if not path.is_file():
        return None
    header = read_corpus(path)[0]
    keep = ("key", "voices", "recognizers", "requests", "rows", "rows_by_split", "dropped", "acoustics",
            "held_out_voices")
    return {k: header[k] for k in keep if k in header} | {"file": path.name, "sha256": corpus_digest(language, folder)}
