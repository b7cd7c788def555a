"""`assistant bench store`: what each booking-store operation costs, SQLite beside CalDAV in one run.

The CalDAV side is a Radicale started for the run on loopback (assistant/bench/radicale.py): the cost of the
protocol and of a real server's storage, without a network's round trips (add those for a remote server). Each
round books a free slot, books it again (a conflict), moves it, reads the room's day (fresh, then from the cache),
and cancels it; every round on a slot of its own, so nothing depends on what came before. With `--voice`, one
voice of the spoken corpus then goes through a voice server on each store in turn: what a person waits for, and
what each request left behind, beside each other."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any
from zoneinfo import ZoneInfo

from tqdm import tqdm

from assistant.bench.radicale import RadicaleServer
from assistant.bench.report import LatencyStats, format_table, machine_info, write_report
from assistant.booking.rooms import RoomDirectory
from assistant.booking.store import Booked, Booking, BookingStore, Conflict
from assistant.config import Settings, StoreSettings
from assistant.wiring import build_store

__all__ = ["StoreBenchOptions", "run_store_bench", "OPERATIONS"]

OPERATIONS = ("book", "conflict", "move", "day", "day (cached)", "cancel")
_FIRST = datetime(2027, 1, 4, 8, 0, tzinfo=ZoneInfo("Europe/Berlin"))  # a Monday


@dataclass(frozen=True)
class StoreBenchOptions:
    rounds: int = 200
    json: Path | None = None
    plot: Path | None = None
    voice: str | None = None  # also: this voice of the spoken corpus through a voice server on each store
    corpus: Path | None = None
    limit: int | None = None  # with voice: its first N requests only


def _timed(samples: list[float], call: Callable[[], Any]) -> Any:
    started = time.perf_counter()
    result = call()
    samples.append(time.perf_counter() - started)
    return result


def _round(store: BookingStore, samples: dict[str, list[float]], i: int, room: str) -> None:
    """One slot of its own: book, book again (a conflict), move, read the room's day twice, cancel."""
    start = _FIRST + timedelta(days=i // 8, hours=i % 8)
    half = timedelta(minutes=30)
    booked = _timed(samples["book"], lambda: store.book(Booking("", room, start, start + half, "bench"), f"b{i}"))
    assert isinstance(booked, Booked), booked
    clash = _timed(samples["conflict"], lambda: store.book(Booking("", room, start, start + half), f"c{i}"))
    assert isinstance(clash, Conflict), clash
    moved = _timed(samples["move"], lambda: store.reschedule(booked.booking.id, start + half, start + 2 * half,
                                                             f"m{i}"))
    assert isinstance(moved, Booked), moved
    day = start.replace(hour=0)
    _timed(samples["day"], lambda: store.bookings(day, day + timedelta(days=1), room))  # the move dropped the cache
    _timed(samples["day (cached)"], lambda: store.bookings(day, day + timedelta(days=1), room))
    cancelled = _timed(samples["cancel"], lambda: store.cancel(booked.booking.id, f"x{i}"))
    assert isinstance(cancelled, Booked), cancelled


def _measure(store: BookingStore, rooms: list[str], rounds: int, label: str) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {name: [] for name in OPERATIONS}
    for i in tqdm(range(rounds), desc=label, unit="round", file=sys.stderr):
        _round(store, samples, i, rooms[i % len(rooms)])
    return samples


def _stats(store: BookingStore, rooms: list[str], rounds: int, label: str) -> dict[str, LatencyStats]:
    try:
        return {op: LatencyStats.from_seconds(s) for op, s in _measure(store, rooms, rounds, label).items()}
    finally:
        store.close()


def _voice_to_action(options: StoreBenchOptions, caldav: StoreSettings, scratch: Path) -> dict[str, Any]:
    """One voice of the spoken corpus through a voice server on each store in turn (`assistant bench voice`):
    voice-to-action and what each request left behind, SQLite beside CalDAV."""
    from assistant.bench.voice import VoiceBenchOptions, run_voice_bench

    assert options.voice is not None and options.corpus is not None
    english_only = ('nlu.languages=["en"]',)  # nothing for Chinese to build or load: the stores are compared
    stores = {"sqlite": english_only,
              "caldav": (*english_only, 'store.backend="caldav"', f"store.url={json.dumps(caldav.url)}",
                         f"store.credentials_file={json.dumps(caldav.credentials_file)}",
                         "store.create_calendars=true")}
    measured = {}
    for name, overrides in stores.items():
        out = scratch / f"voice-{name}.json"
        run_voice_bench(VoiceBenchOptions(options.corpus, json=out, voices=(options.voice,), overrides=overrides,
                                          limit=options.limit))
        voice = json.loads(out.read_text())["voices"][0]
        measured[name] = {key: voice[key] for key in ("voice", "split", "requests", "exact", "asked", "wrong",
                                                      "wrong_booking", "latency")}
    return measured


def run_store_bench(settings: Settings, options: StoreBenchOptions) -> int:
    """Both stores built as the server builds them (the wiring), the CalDAV one from a credentials file."""
    rooms = [room.key for room in RoomDirectory.load(settings.rooms_file).rooms]
    results: dict[str, dict[str, LatencyStats]] = {}
    voice: dict[str, Any] = {}
    with TemporaryDirectory(prefix="store-bench-") as scratch:
        results["sqlite"] = _stats(build_store(settings, Path(scratch) / "bookings.sqlite"), rooms, options.rounds,
                                   "sqlite")
        with RadicaleServer(folder=Path(scratch) / "radicale") as radicale:
            secret = Path(scratch) / "caldav.secret"
            secret.write_text(f"{radicale.username}:{radicale.password}\n")
            secret.chmod(0o600)
            caldav = replace(settings.store, backend="caldav", url=radicale.home, credentials_file=str(secret),
                             create_calendars=True)
            results["caldav"] = _stats(build_store(replace(settings, store=caldav)), rooms, options.rounds,
                                       "caldav (radicale)")
            if options.voice:
                voice = _voice_to_action(options, caldav, Path(scratch))
    rows = []
    for op in OPERATIONS:
        lite, dav = results["sqlite"][op], results["caldav"][op]
        rows.append([op, f"{lite.p50_ms:.2f}", f"{lite.p99_ms:.2f}", f"{dav.p50_ms:.2f}", f"{dav.p99_ms:.2f}",
                     f"{dav.p50_ms / max(lite.p50_ms, 1e-6):.0f}x"])
    print(format_table(["operation", "SQLite p50 ms", "SQLite p99 ms", "CalDAV p50 ms", "CalDAV p99 ms",
                        "CalDAV/SQLite p50"], rows))
    if voice:
        print(format_table(["store", "voice", "requests", "exact", "asked", "wrong bookings", "voice-to-action p50 ms",
                            "p95 ms"],
                           [[name, v["voice"], v["requests"], v["exact"], v["asked"], v["wrong_booking"],
                             f"{v['latency']['p50_ms']:.0f}", f"{v['latency']['p95_ms']:.0f}"]
                            for name, v in voice.items()]))
    operations = {backend: {op: stats.as_dict() for op, stats in ops.items()} for backend, ops in results.items()}
    machine = machine_info()
    if options.json:
        write_report(options.json, {"benchmark": "store", "rounds": options.rounds, "machine": machine,
                                    "caldav_server": "Radicale on loopback (htpasswd auth, filesystem storage)",
                                    "operations": operations, "voice_to_action": voice})
    if options.plot:
        from assistant.bench.plot import plot_store

        plot_store(operations, options.plot, f"booking store operations, {options.rounds} rounds "
                                             f"({machine['cpu']}, {machine['cores']} cores)")
    return 0
