"""`assistant bench expressions`: the time-expression table through the whole text path, and Duckling beside it.

Each row of assistant/bench/expression_table.py becomes "book Everest <said>", its own conversation, at its own
reference time, as a dry run: the model tags it, the normalizer reads it, the guard checks it. Outcomes:
- exact: the command for the expected interval (or, where the row must be asked, a question);
- asked: a question where a command was expected (safe, but a miss);
- wrong: a command for another time, or a command where the row must be asked (the outcome that must not happen);
- rejected: not taken for a booking at all.

Duckling (pyduckling-native-phihos, when installed) reads the same date-and-time words on its own, so its exact
rate and its cost per call can be set beside ours; docs/nlu.md says what we decided from it.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from assistant.bench.expression_table import Expression, expressions
from assistant.bench.report import LatencyStats, format_table, machine_info, write_report
from assistant.booking.results import Clarify, Command, Result
from assistant.config import Settings
from assistant.text_pipeline import TextPipeline, Turn

__all__ = ["ExpressionBenchOptions", "judge", "run_expression_bench", "table_outcomes"]


@dataclass(frozen=True)
class ExpressionBenchOptions:
    json: Path | None = None
    duckling: bool = True  # compare with Duckling when it is installed


def judge(row: Expression, result: Result | None) -> str:
    if isinstance(result, Command) and result.executable:
        if row.start is None:
            return "wrong"
        return "exact" if (result.start.isoformat(), result.end.isoformat()) == (row.start, row.end) else "wrong"
    if isinstance(result, Clarify):
        return "exact" if row.start is None else "asked"
    return "rejected"


def table_outcomes(pipeline: TextPipeline, rows: list[Expression]) -> list[tuple[Expression, str, Result | None]]:
    """Each row through the pipeline as a dry run, in its own conversation."""
    out = []
    for i, row in enumerate(rows):
        outcome = pipeline.act_many([Turn(row.request, f"expression-{i}", row.now)], commit=False)[0]
        out.append((row, judge(row, outcome.result), outcome.result))
    return out


def _duckling_reader() -> Any:
    """A function (text, now) -> start ISO or None, reading with Duckling; None when it is not installed."""
    try:
        import duckling
    except ImportError:
        return None
    zones = duckling.load_time_zones("/usr/share/zoneinfo")
    language = duckling.default_locale_lang(duckling.parse_lang("EN"))
    dimensions = duckling.parse_dimensions(["time"])

    def read(text: str, now: datetime) -> tuple[str | None, str | None]:
        reference = duckling.parse_ref_time(zones, str(now.tzinfo), int(now.timestamp()))
        found = duckling.parse(text, duckling.Context(reference, language), dimensions, False)
        if not found:
            return None, None
        value = found[0]["value"]
        if "from" in value:  # an interval: Duckling's end is exclusive of its grain
            return value["from"].get("value"), (value.get("to") or {}).get("value")
        return value.get("value"), None

    return read


def _same_instant(duckling_iso: str | None, expected: str | None) -> bool:
    if duckling_iso is None or expected is None:
        return False
    return datetime.fromisoformat(duckling_iso) == datetime.fromisoformat(expected)


def _duckling_scores(rows: list[Expression]) -> dict[str, Any] | None:
    read = _duckling_reader()
    if read is None:
        return None
    counts: Counter[str] = Counter()
    seconds = []
    for row in rows:
        started = time.perf_counter()
        start, _ = read(row.said, row.now)
        seconds.append(time.perf_counter() - started)
        if row.start is None:
            counts["exact" if start is None else "wrong"] += 1
        elif start is None:
            counts["asked"] += 1
        else:
            counts["exact" if _same_instant(start, row.start) else "wrong"] += 1
    return {"counts": dict(counts), "exact_percent": round(100 * counts["exact"] / len(rows), 2),
            "per_call": LatencyStats.from_seconds(seconds).as_dict(),
            "scored": "the start only (Duckling's interval ends are exclusive of their grain)"}


def run_expression_bench(settings: Settings, options: ExpressionBenchOptions) -> int:
    from assistant.wiring import build_text_pipeline

    rows = expressions()
    pipeline = build_text_pipeline(settings, Path(":memory:"), commit=False)
    started = time.perf_counter()
    judged = table_outcomes(pipeline, rows)
    seconds = time.perf_counter() - started
    counts = Counter(verdict for _, verdict, _ in judged)
    ours = {"counts": dict(counts), "exact_percent": round(100 * counts["exact"] / len(rows), 2),
            "per_request_ms": round(1000 * seconds / len(rows), 3)}
    misses = [{"request": row.request, "verdict": verdict, "expected": [row.start, row.end],
               "result": result.to_dict() if result else None}
              for row, verdict, result in judged if verdict != "exact"]
    duckling = _duckling_scores(rows) if options.duckling else None
    table = [["ours (model + normalizer + guard)", len(rows), counts["exact"], counts["asked"], counts["wrong"],
              counts["rejected"], f"{ours['exact_percent']:.1f}"]]
    if duckling is not None:
        d = duckling["counts"]
        table.append(["Duckling on the time words alone", len(rows), d.get("exact", 0), d.get("asked", 0),
                      d.get("wrong", 0), "-", f"{duckling['exact_percent']:.1f}"])
    print(format_table(["reader", "rows", "exact", "asked", "wrong", "rejected", "exact %"], table))
    for miss in misses:
        print(json.dumps(miss), file=sys.stderr)
    if options.json:
        write_report(options.json, {
            "benchmark": "time-expression table through the whole text path (dry run)",
            "command": " ".join(["assistant", "bench", "expressions", *sys.argv[3:]]),
            "machine": machine_info(), "model": pipeline.parser.backend.info().name, "rows": len(rows),
            "ours": ours, "duckling": duckling, "misses": misses,
        })
    return 0
