"""`assistant bench zh-expressions`: the table of Chinese date, time, duration and head-count phrases the
normalizer was chosen by, read by ours (assistant/language/zh/readers.py, cn2an for numerals) and by ChineseTimeNLP
(MIT) on the same spans, as the NLU tags them.

Each row: the kind, the words, and the value they mean at the reference time (Wednesday 2026-12-02 10:00), or
None where the product must ask. A reader is right on a row when it gives that value, or gives nothing where
nothing is meant. jionlp (GPL-3 dependency) and duckling-chinese (needs a Java runtime, via JPype) were not run.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from assistant.bench.report import format_table, machine_info, write_report
from assistant.language.zh.readers import parse_zh_clock, parse_zh_count, parse_zh_date, parse_zh_duration

__all__ = ["ZhRow", "ZH_ROWS", "REFERENCE", "NOT_READ", "ours", "run_zh_expression_bench"]

REFERENCE = datetime(2026, 12, 2, 10, 0)  # a Wednesday, mid-morning, Asia/Shanghai
NOT_READ = "n/a"  # a kind of phrase a reader does not read at all: left out of its score


@dataclass(frozen=True)
class ZhRow:
    kind: str  # date | clock | duration | count
    words: str
    expected: str | None  # date "2026-12-03" (+ " morning"), clock "09:30" / "9:30?" (am/pm open), minutes, count


def _rows(kind: str, pairs: list[tuple[str, str | None]]) -> list[ZhRow]:
    return [ZhRow(kind, words, expected) for words, expected in pairs]


ZH_ROWS: list[ZhRow] = [
    *_rows("date", [("今天", "2026-12-02"), ("明天", "2026-12-03"), ("后天", "2026-12-04"), ("大后天", "2026-12-05"),
                    ("周五", "2026-12-04"), ("星期五", "2026-12-04"), ("礼拜五", "2026-12-04"),
                    ("这周五", "2026-12-04"), ("本周五", "2026-12-04"), ("下周一", "2026-12-07"),
                    ("下星期一", "2026-12-07"), ("下礼拜三", "2026-12-09"), ("周三", "2026-12-02"),
                    ("下周三", "2026-12-09"), ("礼拜天", "2026-12-06"), ("12月3日", "2026-12-03"),
                    ("12月3号", "2026-12-03"), ("十二月三日", "2026-12-03"), ("3号", "2026-12-03"),
                    ("二十号", "2026-12-20"), ("1月5日", "2027-01-05"), ("明天上午", "2026-12-03 morning"),
                    ("明天下午", "2026-12-03 afternoon"), ("今晚", "2026-12-02 evening"),
                    ("下周一早上", "2026-12-07 morning"), ("12月3日周四", "2026-12-03"), ("12月3日周五", None),
                    ("2月30日", None), ("上周五", "2026-11-27"), ("改天", None)]),
    *_rows("clock", [("九点", "9:00?"), ("九点钟", "9:00?"), ("九点半", "9:30?"), ("三点一刻", "3:15?"),
                     ("三点三刻", "3:45?"), ("十点二十", "10:20?"), ("十点二十分", "10:20?"),
                     ("十点零五分", "10:05?"), ("9:30", "9:30?"), ("9点30", "9:30?"), ("两点", "2:00?"),
                     ("十四点", "14:00"), ("下午三点", "15:00"), ("上午九点", "09:00"), ("晚上八点", "20:00"),
                     ("中午十二点", "12:00"), ("中午一点", "13:00"), ("凌晨两点", "02:00"), ("下午三点半", "15:30"),
                     ("上午十四点", None), ("九点前", None), ("二十五点", None), ("三点多", None)]),
    *_rows("duration", [("一个小时", "60"), ("一小时", "60"), ("半小时", "30"), ("半个小时", "30"),
                        ("一个半小时", "90"), ("两个钟头", "120"), ("两个半小时", "150"), ("一刻钟", "15"),
                        ("九十分钟", "90"), ("45分钟", "45"), ("一个小时十五分钟", "75"), ("大概一个小时", "60"),
                        ("小时", None), ("很久", None)]),
    *_rows("count", [("六个人", "6"), ("6人", "6"), ("六位", "6"), ("十二个人", "12"), ("两个人", "2"),
                     ("一共八个人", "8"), ("人", None), ("很多人", None)]),
]


def ours(row: ZhRow) -> str | None:
    """Our reader's value for a row, in the table's notation."""
    today = REFERENCE.date()
    if row.kind == "date":
        resolved = parse_zh_date(row.words, today)
        if resolved is None:
            return None
        return resolved.day.isoformat() + (f" {resolved.part.value}" if resolved.part else "")
    if row.kind == "clock":
        clock = parse_zh_clock(row.words)
        if clock is None:
            return None
        if clock.meridiem is None and not clock.fixed:
            return f"{clock.hour}:{clock.minute:02d}?"
        hour = clock.hour if clock.meridiem is None else clock.to_24h(clock.meridiem)[0]
        return f"{hour:02d}:{clock.minute:02d}"
    if row.kind == "duration":
        duration = parse_zh_duration(row.words)
        return None if duration is None else str(int(duration.total_seconds() // 60))
    count = parse_zh_count(row.words)
    return None if count is None else str(count)


def _chinese_time_nlp() -> Callable[[ZhRow], str | None] | None:
    try:
        import arrow
        from ChineseTimeNLP import TimeNormalizer
    except ImportError:
        return None
    normalizer = TimeNormalizer()
    base = arrow.get(REFERENCE)

    def read(row: ZhRow) -> str | None:
        if row.kind == "count":
            return NOT_READ  # head counts are not what it reads
        try:
            out = normalizer.parse(row.words, base)
        except Exception:  # noqa: BLE001 - its failures on a phrase are answers here (IndexError, AttributeError)
            return "error"
        if out.get("type") == "timestamp":
            when = datetime.fromisoformat(str(out["timestamp"]))
            if row.kind == "date":
                return when.date().isoformat()
            return f"{when.hour:02d}:{when.minute:02d}"
        if out.get("type") == "timedelta" and row.kind == "duration":
            delta = out["timedelta"]
            return str(delta["day"] * 1440 + delta["hour"] * 60 + delta["minute"])
        return None

    return read


def _right(row: ZhRow, got: str | None) -> bool:
    if row.expected is None:
        return got is None
    if got is None or got == "error":
        return False
    if row.expected.endswith("?"):  # am/pm left open: a reader that picks one is right if it is either
        hour, minute = (int(x) for x in row.expected[:-1].split(":"))
        return got in (row.expected, f"{hour:02d}:{minute:02d}", f"{hour + 12:02d}:{minute:02d}")
    if row.kind == "date" and " " in row.expected and got == row.expected.split(" ")[0]:
        return False  # the day without its day part: half read
    return got == row.expected


def run_zh_expression_bench(json_path: Path | None) -> int:
    readers: dict[str, Callable[[ZhRow], str | None]] = {"ours (zh_time + cn2an)": ours}
    other = _chinese_time_nlp()
    if other is not None:
        readers["ChineseTimeNLP 3.0.1"] = other
    else:
        print("ChineseTimeNLP is not installed: only ours is read (pip install ChineseTimeNLP)", file=sys.stderr)
    results = {name: [read(row) for row in ZH_ROWS] for name, read in readers.items()}
    kinds = sorted({row.kind for row in ZH_ROWS})
    table = []
    for name, got in results.items():
        scored = [(row, _right(row, value)) for row, value in zip(ZH_ROWS, got, strict=True) if value != NOT_READ]
        per_kind = [f"{sum(r for row, r in scored if row.kind == k)}/{sum(row.kind == k for row, _ in scored)}"
                    if any(row.kind == k for row, _ in scored) else "-" for k in kinds]
        table.append([name, f"{sum(r for _, r in scored)}/{len(scored)}", *per_kind])
    print(format_table(["reader", "right", *kinds], table))
    for name, got in results.items():
        misses = [f"{row.words} -> {value!r} (meant {row.expected!r})"
                  for row, value in zip(ZH_ROWS, got, strict=True) if value != NOT_READ and not _right(row, value)]
        if misses:
            print(f"\n{name} misses:\n  " + "\n  ".join(misses))
    if json_path is not None:
        write_report(json_path, {
            "benchmark": "Chinese date, time, duration and head-count phrases, span by span",
            "command": "assistant bench zh-expressions " + " ".join(sys.argv[3:]), "machine": machine_info(),
            "reference": REFERENCE.isoformat(), "rows": [row.__dict__ for row in ZH_ROWS],
            "results": {name: [{"got": value, "right": _right(row, value)}
                               for row, value in zip(ZH_ROWS, got, strict=True)] for name, got in results.items()}})
    return 0

