"""`assistant bench soak`: N real-time clients replay the spoken corpus against one server for M minutes, each
request on a new connection (so sessions come and go all the time), while the server's resident memory is
sampled. The report: requests, results, lost requests (no result within the wait), error events by code (the
server's own counters), and RSS at the start and its median over the second and over the last minute (after the
first minute every code path has allocated what it needs once), with the plot."""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from assistant import event_loop
from assistant.bench.e2e import E2EOptions, load_corpus, metrics_url, run_point
from assistant.bench.report import machine_info, write_report
from assistant.errors import ConfigError

__all__ = ["SoakOptions", "run_soak_bench", "WARM_UP_S"]

WARM_UP_S = 60.0  # the first minute allocates what every code path needs once (model buffers, caches)


@dataclass(frozen=True)
class SoakOptions:
    clients: int
    minutes: float
    corpus: Path
    sample_s: float = 5.0
    max_wait_s: float = 10.0
    seed: int = 0
    config: Path | None = None
    json: Path | None = None
    plot: Path | None = None

    def __post_init__(self) -> None:
        if self.clients < 1 or self.minutes <= 0:
            raise ConfigError("--clients and --minutes: more than 0")


def _errors_by_code(url: str) -> dict[str, float]:
    with urllib.request.urlopen(metrics_url(url), timeout=5) as response:
        text = response.read().decode()
    return {s.labels["code"]: s.value for family in text_string_to_metric_families(text)
            for s in family.samples if s.name == "voice_errors_total"}


async def _soak(url: str, pid: int, options: SoakOptions) -> tuple[list[Any], list[tuple[float, float]]]:
    import psutil

    process = psutil.Process(pid)
    samples: list[tuple[float, float]] = []
    began = time.monotonic()

    def take() -> None:  # (seconds since the start, resident MB)
        samples.append((round(time.monotonic() - began, 1), round(process.memory_info().rss / 2**20, 1)))

    async def sample() -> None:
        while True:
            take()
            await asyncio.sleep(options.sample_s)

    sampler = asyncio.create_task(sample())
    try:
        measurements, _, _ = await run_point(options.clients, E2EOptions(
            url, load_corpus(options.corpus), options.minutes * 60, options.max_wait_s, seed=options.seed))
    finally:
        sampler.cancel()
    take()
    return measurements, samples


def run_soak_bench(options: SoakOptions) -> int:
    from assistant.server.spawn import spawn_server

    scratch = Path(tempfile.mkdtemp(prefix="bench-soak-"))
    server, url = spawn_server(scratch / "bookings.sqlite",
                               ["--config", str(options.config)] if options.config else [])
    try:
        before = _errors_by_code(url)
        measurements, samples = event_loop.run(_soak(url, server.pid, options))
        after = _errors_by_code(url)
        alive = server.poll() is None
    finally:
        server.terminate()
        server.wait(30)
        shutil.rmtree(scratch, ignore_errors=True)
    # RSS swings by tens of MB within seconds (decode buffers come and go): compare medians over a minute, the one
    # after the warm-up and the last one, rather than two single samples.
    span = options.minutes * 60
    warm = median([mb for t, mb in samples if WARM_UP_S <= t < 2 * WARM_UP_S] or [samples[0][1]])
    end = median([mb for t, mb in samples if t >= span - WARM_UP_S] or [samples[-1][1]])
    results = sum(m.voice_to_action_s is not None for m in measurements)
    machine = machine_info()
    report = {
        "benchmark": f"soak: {options.clients} real-time clients for {options.minutes:g} minutes, one connection "
                     "per request, replaying the spoken corpus",
        "command": "assistant bench soak " + " ".join(sys.argv[3:]), "machine": machine,
        "requests": len(measurements), "results": results, "lost": sum(m.lost for m in measurements),
        "right": sum(m.right for m in measurements),
        "errors_by_code": {code: int(after.get(code, 0) - before.get(code, 0)) for code in after
                           if after.get(code, 0) - before.get(code, 0)},
        "server_alive_at_end": alive,
        "rss_mb": {"start": samples[0][1], "median_second_minute": warm, "median_last_minute": end,
                   "growth": round(end / warm - 1, 4), "max": max(mb for _, mb in samples)},
        "rss_samples": samples,
    }
    print(f"{report['requests']} requests, {results} results, {report['lost']} lost, errors "
          f"{report['errors_by_code'] or 'none'}; server RSS {samples[0][1]:.0f} MB at the start, median "
          f"{warm:.0f} MB in the second minute and {end:.0f} MB in the last ({100 * (end / warm - 1):+.1f} %)",
          file=sys.stderr)
    if options.json:
        write_report(options.json, report)
    if options.plot:
        from assistant.bench.plot import plot_soak

        plot_soak(samples, options.plot, f"Server memory during the soak: {options.clients} clients, "
                                         f"{options.minutes:g} min, {len(measurements)} requests, "
                                         f"{report['lost']} lost ({machine['cpu']})")
    return 0 if alive and not report["lost"] else 1
