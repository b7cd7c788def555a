"""Intent accuracy, entity-level slot F1 (conlleval: a slot counts only if name and exact span match) and
sentence accuracy (intent and every slot right)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from assistant.nlu.bio import tags_to_spans

__all__ = ["Scores", "score"]

Labelled = tuple[str, Sequence[str]]  # (intent, word tags)


@dataclass(frozen=True)
class Scores:
    intent_accuracy: float  # percent
    slot_precision: float
    slot_recall: float
    slot_f1: float
    sentence_accuracy: float
    count: int

    def as_dict(self) -> dict[str, float | int]:
        return {k: (round(v, 2) if isinstance(v, float) else v) for k, v in asdict(self).items()}

    def line(self) -> str:
        return (f"intent accuracy {self.intent_accuracy:.2f} %, slot F1 {self.slot_f1:.2f}, "
                f"sentence accuracy {self.sentence_accuracy:.2f} % (n={self.count})")


def score(gold: Sequence[Labelled], predicted: Sequence[Labelled]) -> Scores:
    if len(gold) != len(predicted):
        raise ValueError("gold and predicted differ in length")
    intents_right = sentences_right = 0
    true_pos = gold_total = pred_total = 0
    for (gold_intent, gold_tags), (pred_intent, pred_tags) in zip(gold, predicted, strict=True):
        gold_spans = set(tags_to_spans(gold_tags))
        pred_spans = set(tags_to_spans(pred_tags))
        true_pos += len(gold_spans & pred_spans)
        gold_total += len(gold_spans)
        pred_total += len(pred_spans)
        intent_ok = gold_intent == pred_intent
        intents_right += intent_ok
        sentences_right += intent_ok and gold_spans == pred_spans
    n = max(len(gold), 1)
    precision = true_pos / pred_total if pred_total else 0.0
    recall = true_pos / gold_total if gold_total else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Scores(100 * intents_right / n, 100 * precision, 100 * recall, 100 * f1, 100 * sentences_right / n,
                  len(gold))
