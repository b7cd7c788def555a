"""`assistant bench soak`: N real-time clients replay the spoken corpus against one server for M minutes, each
request on a new connection (so sessions come and go all the time), while the server's resident memory is
sampled. The report: requests, results, lost requests (no result within the wait), error events by code (the
server's own counters), and RSS at the start and its median over the second and over the last minute (after the
first minute every code path has allocated what it needs once), with the plot.

With `--abuse` the server needs tokens (a throwaway tokens file): each real-time client is an identity of its own,
and beside them one abusive identity floods `--flood-sessions` sessions with speech, `--tokenless` handshakes
never authenticate, and a guesser sends wrong tokens (assistant/bench/abuse.py). The report adds the real-time
users' voice-to-action p50/p95 and what the abuse got."""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any

import numpy as np
from prometheus_client.parser import text_string_to_metric_families

from assistant import event_loop
from assistant.bench.abuse import AbuseOptions, AbuseReport, run_abuse
from assistant.bench.e2e.corpus import load_corpus
from assistant.bench.e2e.load import E2EOptions, one_client_limits, run_point
from assistant.bench.e2e.report import metrics_url
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
    abuse: bool = False
    flood_sessions: int = 24
    tokenless: int = 8
    guessers: int = 1

    def __post_init__(self) -> None:
        if self.clients < 1 or self.minutes <= 0:
            raise ConfigError("--clients and --minutes: more than 0")
        if min(self.flood_sessions, self.tokenless, self.guessers) < 0:
            raise ConfigError("--flood-sessions, --tokenless and --guessers: 0 or more")


@dataclass(frozen=True)
class _Tokens:
    """A throwaway tokens file: one identity per real-time client, and the abuser's."""

    users: tuple[str, ...]
    abuser: str

    @classmethod
    def write(cls, path: Path, clients: int) -> _Tokens:
        tokens = cls(tuple(secrets.token_urlsafe(18) for _ in range(clients)), secrets.token_urlsafe(18))
        lines = [f"user-{i:03d} {t}" for i, t in enumerate(tokens.users)] + [f"abuser {tokens.abuser}"]
        path.write_text("\n".join(lines) + "\n")
        return tokens


def _errors_by_code(url: str, headers: dict[str, str]) -> dict[str, float]:
    with urllib.request.urlopen(urllib.request.Request(metrics_url(url), headers=headers), timeout=5) as response:
        text = response.read().decode()
    return {s.labels["code"]: s.value for family in text_string_to_metric_families(text)
            for s in family.samples if s.name == "voice_errors_total"}


async def _soak(url: str, pid: int, options: SoakOptions, tokens: _Tokens | None
                ) -> tuple[list[Any], list[tuple[float, float]], AbuseReport | None]:
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
    corpus = load_corpus(options.corpus)
    abuse = None
    if tokens is not None:
        abuse = asyncio.create_task(run_abuse(AbuseOptions(url, tokens.abuser, options.flood_sessions,
                                                           options.tokenless, options.guessers),
                                              corpus, options.minutes * 60))
    try:
        measurements, _, _ = await run_point(options.clients, E2EOptions(
            url, corpus, options.minutes * 60, options.max_wait_s, seed=options.seed,
            tokens=tokens.users if tokens else (), speech=False))  # the server's capacity, replies not spoken
        abused = await abuse if abuse is not None else None
    finally:
        sampler.cancel()
        if abuse is not None:
            abuse.cancel()
    take()
    return measurements, samples, abused


def run_soak_bench(options: SoakOptions) -> int:
    from assistant.server.spawn import spawn_server

    scratch = Path(tempfile.mkdtemp(prefix="bench-soak-"))
    args = ["--config", str(options.config)] if options.config else []
    tokens = None
    if options.abuse:  # each client its own identity: the defaults are what each may take
        tokens = _Tokens.write(scratch / "tokens", options.clients)
        args += ["--set", f"access.tokens_file={str(scratch / 'tokens')!r}"]
    else:  # every client is this process's address: one identity, with room for all of them
        args += one_client_limits(options.clients + 8)
    env = {k: v for k, v in os.environ.items() if k != "ASSISTANT_TOKEN"}
    log: list[str] = []
    server, url = spawn_server(scratch / "bookings.sqlite", args, env=env, log=log)
    headers = {"Authorization": f"Bearer {tokens.users[0]}"} if tokens else {}
    try:
        before = _errors_by_code(url, headers)
        measurements, samples, abused = event_loop.run(_soak(url, server.pid, options, tokens))
        after = _errors_by_code(url, headers)
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
    waits = [m.voice_to_action_s for m in measurements if m.voice_to_action_s is not None]
    machine = machine_info()
    beside = "" if abused is None else (
        f", beside one identity flooding {options.flood_sessions} sessions, {options.tokenless} handshakes at a time "
        f"that never authenticate and {options.guessers} token guesser(s)")
    report = {
        "benchmark": f"soak: {options.clients} real-time clients for {options.minutes:g} minutes, one connection "
                     f"per request, replaying the spoken corpus{beside}",
        "command": "assistant bench soak " + " ".join(sys.argv[3:]), "machine": machine,
        "requests": len(measurements), "results": results, "lost": sum(m.lost for m in measurements),
        "right": sum(m.right for m in measurements),
        "voice_to_action_ms": {"p50": round(float(np.percentile(waits, 50)) * 1e3) if waits else None,
                               "p95": round(float(np.percentile(waits, 95)) * 1e3) if waits else None},
        **({"abuse": abused.to_dict()} if abused is not None else {}),
        "errors_by_code": {code: int(after.get(code, 0) - before.get(code, 0)) for code in after
                           if after.get(code, 0) - before.get(code, 0)},
        "server_alive_at_end": alive,
        "server_tracebacks": sum("Traceback" in line for line in log),
        "rss_mb": {"start": samples[0][1], "median_second_minute": warm, "median_last_minute": end,
                   "growth": round(end / warm - 1, 4), "max": max(mb for _, mb in samples)},
        "rss_samples": samples,
    }
    print(f"{report['requests']} requests, {results} results, {report['lost']} lost, voice-to-action "
          f"{report['voice_to_action_ms']}, errors {report['errors_by_code'] or 'none'}; server RSS "
          f"{samples[0][1]:.0f} MB at the start, median "
          f"{warm:.0f} MB in the second minute and {end:.0f} MB in the last ({100 * (end / warm - 1):+.1f} %)",
          file=sys.stderr)
    if report["server_tracebacks"]:
        first = next(i for i, line in enumerate(log) if "Traceback" in line)
        print("the server logged a traceback:\n" + "".join(log[max(0, first - 2):first + 30]), file=sys.stderr)
    if options.json:
        write_report(options.json, report)
    if options.plot:
        from assistant.bench.plot import plot_soak

        abuse = "" if abused is None else f" beside {options.flood_sessions} flooding sessions and more abuse"
        plot_soak(samples, options.plot, f"Server memory during the soak: {options.clients} clients{abuse}, "
                                         f"{options.minutes:g} min, {len(measurements)} requests, "
                                         f"{report['lost']} lost ({machine['cpu']})")
    return 0 if alive and not report["lost"] and not report["server_tracebacks"] else 1
