"""The one accuracy gate every derived model file passes: the CPU's INT8 (dynamic) file that `precision = "auto"`
serves, and the FP16 / INT8 Q/DQ files TensorRT builds from. A file is accepted when neither its intent
accuracy nor its slot F1 on the dev split is more than MAX_DROP_POINTS below the FP32 model's."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["MAX_DROP_POINTS", "GATED_METRICS", "drops", "accepted"]

MAX_DROP_POINTS = 0.5  # percentage points; a wrong booking made with confidence costs more than a faster model saves
GATED_METRICS = ("intent_accuracy", "slot_f1")


def drops(reference: Mapping[str, float | int], candidate: Mapping[str, float | int]) -> dict[str, float]:
    """Points lost per gated metric (negative: the candidate scored higher)."""
    return {name: round(float(reference[name]) - float(candidate[name]), 2) for name in GATED_METRICS}


def accepted(lost: Mapping[str, float]) -> bool:
    return all(points <= MAX_DROP_POINTS for points in lost.values())
