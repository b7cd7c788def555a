"""The label set a trained model predicts, saved beside it (labels.json)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LabelSet"]


@dataclass(frozen=True)
class LabelSet:
    intents: tuple[str, ...]
    slot_labels: tuple[str, ...]  # BIO tags, "O" first

    def save(self, path: Path) -> None:
        path.write_text(json.dumps({"intents": self.intents, "slot_labels": self.slot_labels}, indent=1))

    @classmethod
    def load(cls, path: Path) -> LabelSet:
        data = json.loads(path.read_text())
        return cls(tuple(data["intents"]), tuple(data["slot_labels"]))
