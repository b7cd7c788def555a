"""The spoken corpus the load benchmarks replay: its requests, their audio, and what each should come to, with
the reference time and zone its expected results were written for (tests/data/corpus/requests.json)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from assistant.clients.send import read_wav
from assistant.errors import ConfigError

__all__ = ["CorpusItem", "load_corpus", "CORPUS_NOW", "CORPUS_TZ"]

# The reference time and zone the corpus's expected results were written for (tests/data/corpus/requests.json).
CORPUS_NOW = "2026-12-02T10:00:00"
CORPUS_TZ = "Europe/Berlin"


@dataclass(frozen=True)
class CorpusItem:
    file: str
    pcm: bytes
    rate: int
    channels: int
    intent: str
    expected: dict[str, str]  # room, start, end where the corpus gives them

    @property
    def audio_s(self) -> float:
        return len(self.pcm) / (2 * self.channels * self.rate)


def load_corpus(folder: Path) -> list[CorpusItem]:
    listing = folder / "requests.json"
    if not listing.is_file():
        raise ConfigError(f"--corpus {folder}: no requests.json there")
    items = []
    for entry in json.loads(listing.read_text()):
        pcm, rate, channels = read_wav(folder / entry["file"])
        expected = {k: entry[k] for k in ("room", "start", "end") if k in entry}
        items.append(CorpusItem(entry["file"], pcm, rate, channels, entry["intent"], expected))
    if not items:
        raise ConfigError(f"{listing} lists no requests")
    return items
