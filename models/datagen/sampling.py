"""What every language's generator shares: the settings of a run, the dev split that holds out whole templates,
and sampling requests by intent. Each language's generator (named by its profile's `model.data`) renders them."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from assistant.language.registry import DEFAULT
from models.example import Example

__all__ = ["GeneratorConfig", "INTENT_WEIGHTS", "RenderFn", "split_templates", "generate"]

INTENT_WEIGHTS = {
    "book_meeting": 0.29,
    "cancel_meeting": 0.11,
    "reschedule_meeting": 0.12,
    "check_availability": 0.13,
    "list_bookings": 0.10,
    "out_of_scope": 0.25,  # (0.22 before short requests and fragments became bookings: dates alone must not be)
}

RenderFn = Callable[[str, str, random.Random], Example]  # (template, intent, rng) -> example


@dataclass(frozen=True)
class GeneratorConfig:
    seed: int = 13
    train_size: int = 10000
    dev_size: int = 2000
    dev_template_fraction: float = 0.2
    language: str = DEFAULT.code  # whose requests: the generator its profile names (English: generator.py)


def split_templates(seed: int, fraction: float, by_intent: dict[str, list[str]]
                    ) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Hold out a fraction of each intent's templates (at least two) for the dev split."""
    rng = random.Random(seed)
    train: dict[str, list[str]] = {}
    dev: dict[str, list[str]] = {}
    for intent, templates in by_intent.items():
        order = list(templates)
        rng.shuffle(order)
        held = max(2, round(len(order) * fraction))
        dev[intent] = order[:held]
        train[intent] = order[held:]
    return train, dev


def generate(templates: dict[str, list[str]], n: int, rng: random.Random, render_one: RenderFn) -> list[Example]:
    intents = list(INTENT_WEIGHTS)
    weights = [INTENT_WEIGHTS[i] for i in intents]
    examples: list[Example] = []
    for intent in rng.choices(intents, weights=weights, k=n):
        template = rng.choice(templates[intent])
        examples.append(render_one(template, intent, rng))
    return examples
