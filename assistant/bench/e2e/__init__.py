"""`assistant bench e2e`: voice-to-action latency under load.

N concurrent clients replay the spoken corpus at real-time pace, each starting at a random offset and pausing
between requests like people do; one websocket connection per request. For every utterance, on the client clock
and measured from the end of speech in the audio (frames go out at real-time pace, so audio time t is sent at
client time t): `speech_end` event, `transcript`, `intent`, `result`; plus the server's own stage stamps from the
`latency` event, and the server's compute per second of audio from its /metrics.

A sweep (`--clients 1,2,4,8`) runs one point per client count and stops at the first point the server cannot keep
up with: a request whose result does not come within `--max-wait` seconds of the end of its audio counts as lost,
and latency that grows steadily over a point means the queue grows without bound.

One Python event loop can carry a few hundred real-time clients at most; past that its own lag shows up as
latency. `--client-procs N` spreads the clients over N processes (each client's choices are seeded by its index,
so the load is the same however it is split).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from assistant.bench.e2e.corpus import CorpusItem, load_corpus
from assistant.bench.e2e.judge import judge
from assistant.bench.e2e.load import E2EOptions, measure_point, one_client_limits
from assistant.bench.e2e.report import Point, e2e_plot_title, print_report, scrape, server_load, summarize
from assistant.bench.layouts import GpuUtilization, Layout, LoadProbe, deploy
from assistant.bench.report import machine_info, write_report
from assistant.errors import ConfigError

__all__ = ["E2EBenchOptions", "run_sweep", "run_e2e_bench"]


def run_sweep(options: E2EOptions, client_counts: Sequence[int], probe: LoadProbe | None = None,
              scrape_metrics: bool = True) -> list[Point]:
    """One point per client count until one cannot keep up. `probe` reads what the layout's processes used;
    `scrape_metrics`: the server's own /metrics speak for all of it (not so for one of several gateways on a
    port)."""
    points: list[Point] = []
    for clients in client_counts:
        before = scrape(options.url) if scrape_metrics else None
        if probe is not None:
            probe.begin()
        measurements, wall, frames = measure_point(clients, options)
        server = server_load(before, scrape(options.url), wall) if scrape_metrics else None
        load = probe.end(wall, frames) if probe is not None else None
        verdict = judge(measurements, options.duration_s)
        points.append(summarize(clients, measurements, wall, verdict, server, load))
        print(f"{clients} client(s): {verdict.reason}", file=sys.stderr)
        if not verdict.keeps_up:
            skipped = [c for c in client_counts if c > clients]
            if skipped:
                print(f"stopping the sweep: {', '.join(map(str, skipped))} client(s) not run", file=sys.stderr)
            break
    return points


@dataclass(frozen=True)
class E2EBenchOptions:
    """`assistant bench e2e`: what to run the sweep against and what to write."""

    clients: tuple[int, ...]  # one point per count, in order
    corpus: Path
    duration_s: float = 60.0
    max_wait_s: float = 10.0
    seed: int = 0
    url: str | None = None  # an already running server; None: spawn one with a throwaway store
    asr_model: str | None = None  # speech model of the spawned server
    store: Path | None = None  # booking file of the spawned server
    config: Path | None = None  # config file of the spawned server
    aim_s: float = 1.5  # p95 aim, drawn on the plot
    json: Path | None = None
    plot: Path | None = None
    token: str | None = None  # access token of a server given with --url
    layouts: tuple[Layout, ...] = (Layout(0),)  # started here one after another (without --url)
    client_procs: int = 1  # processes the clients are spread over

    def __post_init__(self) -> None:
        if not self.clients or min(self.clients) < 1:
            raise ConfigError(f"--clients {','.join(map(str, self.clients))!r}: give client counts like 1,2,4,8")
        if self.client_procs < 1:
            raise ConfigError(f"--client-procs {self.client_procs}: at least 1")
        if self.store is not None and len(self.layouts) > 1:
            raise ConfigError("--store: one layout at a time (each layout books into a store of its own)")


def _sweep_layout(run: E2EBenchOptions, layout: Layout, corpus: list[CorpusItem], gpus: GpuUtilization,
                  scratch: Path) -> list[Point]:
    """Start one layout with its own throwaway store (the bench books rooms for real), sweep it, stop it."""
    room = max(run.clients) + 8  # the spawned servers' connection caps ([limits]) fit the sweep's clients
    config_args = [*(["--config", str(run.config)] if run.config else []),
                   *(["--set", f"asr.model={json.dumps(run.asr_model)}"] if run.asr_model else [])]
    limits = one_client_limits(room)
    store = run.store or scratch / f"bookings-{layout.name.replace(':', '-')}.sqlite"
    print(f"[bench] layout {layout.name}", file=sys.stderr)
    with deploy(layout, store, limits, config_args) as deployment:
        options = E2EOptions(deployment.url, corpus, run.duration_s, run.max_wait_s, seed=run.seed,
                             client_procs=run.client_procs)
        # One gateway's /metrics would speak for its own share of the connections only.
        return run_sweep(options, run.clients, LoadProbe(deployment, gpus), scrape_metrics=layout.gateways <= 1)


def run_e2e_bench(run: E2EBenchOptions) -> int:
    """The CLI's `bench e2e`: run the sweep against --url, or against each of --layouts started here in turn;
    print, write JSON and a plot."""
    corpus = load_corpus(run.corpus)
    options = E2EOptions(run.url or "", corpus, run.duration_s, run.max_wait_s, seed=run.seed, token=run.token,
                         client_procs=run.client_procs)
    if run.url:
        points = run_sweep(options, run.clients)
    else:
        scratch = Path(tempfile.mkdtemp(prefix="bench-e2e-"))
        gpus = GpuUtilization()
        try:
            points = [p for layout in run.layouts for p in _sweep_layout(run, layout, corpus, gpus, scratch)]
        finally:
            gpus.close()
            shutil.rmtree(scratch, ignore_errors=True)
    print_report(points)
    machine = machine_info()
    models: dict[str, str] = next((p.server["models"] for p in points if p.server), {})
    report = {"benchmark": "voice-to-action under load: concurrent real-time clients replaying the spoken corpus",
              "command": "assistant bench e2e " + " ".join(sys.argv[3:]), "machine": machine,
              "server": run.url or "spawned on this machine, one layout after another",
              "layouts": [] if run.url else [layout.name for layout in run.layouts], "models": models,
              "options": {"clients": list(run.clients), "duration_s": run.duration_s, "max_wait_s": run.max_wait_s,
                          "corpus": str(run.corpus), "corpus_requests": len(corpus), "seed": run.seed,
                          "client_procs": run.client_procs,
                          "start_spread_s": options.start_spread_s, "pause_s": list(options.pause_s)},
              "points": [p.to_dict() for p in points]}
    if run.json:
        write_report(run.json, report)
    if run.plot:
        from assistant.bench.plot import plot_e2e, plot_e2e_layouts

        title = e2e_plot_title(machine, models)
        rows = [p.to_dict() for p in points]
        if len(run.layouts) > 1 and not run.url:
            plot_e2e_layouts(rows, run.plot, title, aim_s=run.aim_s)
        else:
            plot_e2e(rows, run.plot, title, aim_s=run.aim_s)
    return 0 if all(p.keeps_up for p in points) else 3
