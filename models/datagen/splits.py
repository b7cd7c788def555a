"""A language's training and dev requests, by the generator its profile names (assistant/language/*/profile.py
`model.data`): the one place that goes from a language code to its generator, so no generator imports another."""

from __future__ import annotations

import importlib
from types import ModuleType

from assistant.language.registry import get
from models.datagen.sampling import GeneratorConfig
from models.example import Example

__all__ = ["GeneratorConfig", "language_data", "generate_splits"]


def language_data(language: str) -> ModuleType:
    """The language's generator module: `TEMPLATES` (by intent), `render_example`, `generate_language_splits`."""
    return importlib.import_module(get(language).model.data)


def generate_splits(config: GeneratorConfig) -> tuple[list[Example], list[Example]]:
    """(train, dev) of `config.language`: dev uses only the held-out templates; junk text goes to both."""
    splits: tuple[list[Example], list[Example]] = language_data(config.language).generate_language_splits(config)
    return splits
