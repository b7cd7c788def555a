"""A transcript that carries the recognizer's other readings of the same audio.

Whisper's beam search ends with several hypotheses, each with its score (the mean log-probability of its tokens).
`Heard` is the best of them, a `str` wherever text goes (events, turns, the reading at a pause), with the others
along as `alternatives`, best first, so understanding can choose among them (assistant/nlu/nbest.py) without a
second path for speech. Text made from it by string operations is plain text again: only the recognizer makes
hypotheses, and only the turn built from its transcript reads them.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["Heard", "Hypothesis", "alternatives_of", "score_of"]

Hypothesis = tuple[str, float]  # (text, mean log-probability per token)


class Heard(str):
    score: float
    alternatives: tuple[Hypothesis, ...]

    def __new__(cls, text: str, score: float = 0.0, alternatives: Sequence[Hypothesis] = ()) -> Heard:
        heard = super().__new__(cls, text)
        heard.score = score
        heard.alternatives = tuple((t, s) for t, s in alternatives if t and t != text)
        return heard


def alternatives_of(text: str) -> tuple[Hypothesis, ...]:
    return text.alternatives if isinstance(text, Heard) else ()


def score_of(text: str) -> float:
    return text.score if isinstance(text, Heard) else 0.0
