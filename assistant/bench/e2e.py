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

import asyncio
import json
import math
import multiprocessing
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from tqdm import tqdm
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from assistant import event_loop
from assistant.bench.layouts import GpuUtilization, Layout, LoadProbe, deploy
from assistant.bench.report import LatencyStats, format_table, machine_info, metric_samples, write_report
from assistant.clients.connection import ServerRefused
from assistant.clients.send import Received, read_wav, stream_audio
from assistant.errors import ConfigError
from assistant.events import IntentEvent, Latency, ResultEvent, ServerEvent, SpeechEnd, Transcript

__all__ = ["CorpusItem", "Measurement", "Verdict", "E2EOptions", "E2EBenchOptions", "load_corpus", "one_client_limits",
           "measure_request", "judge", "run_point", "run_sweep", "summarize", "print_report", "metrics_url",
           "run_e2e_bench", "CORPUS_NOW", "CORPUS_TZ"]

# The reference time and zone the corpus's expected results were written for (tests/data/corpus/requests.json).
CORPUS_NOW = "2026-12-02T10:00:00"
CORPUS_TZ = "Europe/Berlin"
# client-clock events, in pipeline order: the stage each is measured as
CLIENT_STAGES: dict[str, type[ServerEvent]] = {"speech_end": SpeechEnd, "transcript": Transcript,
                                               "intent": IntentEvent, "result": ResultEvent}
SERVER_STAGES = ("speech_end_decided", "transcript", "intent", "result")  # the `latency` event's stamps
TAIL_MS = 800  # silence streamed after each request: the endpointer needs its hangover of it to decide
GROWTH_LIMIT_S = 1.0  # latency that rises by more than this over one point (trend line) is falling behind


@dataclass(frozen=True)
class CorpusItem:
    file: str
    pcm: bytes
    rate: int
    channels: int
    intent: str
    expected: dict[str, str]  # room, start, end where the corpus gives them

    @property
    def audio_s(self) -> float:
        return len(self.pcm) / (2 * self.channels * self.rate)


def load_corpus(folder: Path) -> list[CorpusItem]:
    listing = folder / "requests.json"
    if not listing.is_file():
        raise ConfigError(f"--corpus {folder}: no requests.json there")
    items = []
    for entry in json.loads(listing.read_text()):
        pcm, rate, channels = read_wav(folder / entry["file"])
        expected = {k: entry[k] for k in ("room", "start", "end") if k in entry}
        items.append(CorpusItem(entry["file"], pcm, rate, channels, entry["intent"], expected))
    if not items:
        raise ConfigError(f"{listing} lists no requests")
    return items


@dataclass
class Measurement:
    """One utterance (or one lost request) as a client saw it."""

    client: int
    file: str
    sent_at_s: float  # when the request's first frame went out, seconds since the point began
    stages_s: dict[str, float] = field(default_factory=dict)  # client clock, from the end of speech in the audio
    server_ms: dict[str, float] = field(default_factory=dict)  # the server's `latency` event
    intent: str | None = None
    right: bool = False
    lost: bool = False  # no result within the wait

    @property
    def voice_to_action_s(self) -> float | None:
        return self.stages_s.get("result")


def _is_right(item: CorpusItem, intent: IntentEvent | None, result: ResultEvent | None) -> bool:
    """The intent is the expected one, the room (when the corpus names one) is heard, and a committed command
    has the expected times. Under load, two clients may ask for the same slot: the second gets a clarify about
    the conflict, which is right too, so times are checked only on commands that went through."""
    if intent is None or result is None or intent.intent != item.intent:
        return False
    room = item.expected.get("room")
    command = result.result.get("command") or {}
    if room and command.get("room") != room and not any(
            s["name"] == "room" and room in s["text"].lower() for s in intent.slots):
        return False
    if result.result.get("committed"):
        if command.get("action") == "reschedule_meeting" and command.get("amends"):  # a reopened turn's booking
            command = {**command, "start": command.get("new_start"), "end": command.get("new_end")}
        return all(command.get(k) == item.expected[k] for k in ("start", "end") if k in item.expected)
    return True


E = TypeVar("E", bound=ServerEvent)


def _event(by_type: dict[type[ServerEvent], Received], kind: type[E]) -> E | None:
    found = by_type.get(kind)
    return found.event if found is not None and isinstance(found.event, kind) else None


def measure_request(client: int, item: CorpusItem, sent_at_s: float, received: Sequence[Received], finished: bool
                    ) -> list[Measurement]:
    """Turn one request's server events into one measurement per utterance. `finished`: the server closed the
    stream after sending everything; when it did not, an utterance (or the request) without a result is lost."""
    ends = {r.event.utterance: r.event for r in received if isinstance(r.event, SpeechEnd)}
    out = []
    for utterance, end in ends.items():
        end_s = end.audio_ms / 1000
        mine: dict[type[ServerEvent], Received] = {
            type(r.event): r for r in received if getattr(r.event, "utterance", None) == utterance}
        m = Measurement(client, item.file, sent_at_s)
        for stage, kind in CLIENT_STAGES.items():
            if kind in mine:
                m.stages_s[stage] = round(mine[kind].t - end_s, 4)
        latency, intent, result = _event(mine, Latency), _event(mine, IntentEvent), _event(mine, ResultEvent)
        if latency is not None:
            m.server_ms = dict(latency.stages_ms)
        if intent is not None:
            m.intent = intent.intent
        if result is not None:
            m.right = _is_right(item, intent, result)
        else:  # an empty transcript is an answer (no words, so nothing to do); silence from the server is not
            m.lost = not finished or Transcript not in mine
        out.append(m)
    return out or [Measurement(client, item.file, sent_at_s, lost=not finished)]


@dataclass(frozen=True)
class Verdict:
    keeps_up: bool
    reason: str


def judge(measurements: Sequence[Measurement], duration_s: float) -> Verdict:
    lost = sum(m.lost for m in measurements)
    if lost:
        return Verdict(False, f"cannot keep up: {lost} of {len(measurements)} requests got no result in time")
    timed = [(m.sent_at_s, m.voice_to_action_s) for m in measurements if m.voice_to_action_s is not None]
    if len(timed) >= 4:
        x, y = np.asarray(timed, dtype=np.float64).T
        if np.ptp(x) > 0:
            slope = float(np.polyfit(x, y, 1)[0])
            growth = slope * max(duration_s, float(np.ptp(x)))
            if growth > GROWTH_LIMIT_S:
                return Verdict(False, f"cannot keep up: latency grows {slope * 1e3:.0f} ms per second of load "
                                      f"({growth:.1f} s over the run)")
    return Verdict(True, "keeps up")


@dataclass(frozen=True)
class E2EOptions:
    url: str
    corpus: list[CorpusItem]
    duration_s: float = 60.0
    max_wait_s: float = 10.0
    start_spread_s: float = 3.0  # clients start at a random offset within this
    pause_s: tuple[float, float] = (1.0, 4.0)  # think time between one client's requests
    seed: int = 0
    token: str | None = None  # the server's access token, if it needs one
    tokens: tuple[str, ...] = ()  # one per client instead (client i: tokens[i % len]): each its own identity
    client_procs: int = 1  # processes the clients are spread over, each with its own event loop


def one_client_limits(room: int) -> list[str]:
    """`--set` arguments for a spawned server whose every client is the benchmark: one address, so one client
    identity ([limits]): room for `room` connections of it, with the per-session bounds as they are."""
    return [arg for key, value in (("max_connections", room), ("max_connections_per_client", room),
                                   ("max_queued_utterances_per_client", 3 * room),
                                   ("client_audio_speed", float(room)))
            for arg in ("--set", f"limits.{key}={value}")]


def frames_of(item: CorpusItem) -> int:
    """The 20 ms websocket frames one request takes: its audio and the silence after it."""
    return math.ceil(item.audio_s * 50) + TAIL_MS // 20


async def _client(index: int, options: E2EOptions, t0: float, deadline: float, rng: random.Random,
                  sink: list[Measurement], frames: list[int]) -> None:
    await asyncio.sleep(rng.uniform(0, options.start_spread_s))
    while time.monotonic() < deadline:
        item = rng.choice(options.corpus)
        events: list[Received] = []
        sent_at = time.monotonic() - t0
        stream = stream_audio(options.url, item.pcm, item.rate, item.channels, events.append, now=CORPUS_NOW,
                              tz=CORPUS_TZ, tail_ms=TAIL_MS,
                              token=options.tokens[index % len(options.tokens)] if options.tokens else options.token)
        try:
            await asyncio.wait_for(stream, item.audio_s + TAIL_MS / 1000 + options.max_wait_s)
            finished = True
        except (TimeoutError, OSError, ConnectionClosed, InvalidHandshake, ServerRefused):  # refused at the handshake
            finished = False  # what arrived is measured; an utterance without its result counts as lost
        sink.extend(measure_request(index, item, round(sent_at, 3), events, finished))
        frames.append(frames_of(item))
        await asyncio.sleep(rng.uniform(*options.pause_s))


async def run_point(clients: int, options: E2EOptions, only: Sequence[int] | None = None, progress: bool = True
                    ) -> tuple[list[Measurement], float, int]:
    """One client count's measurements, its wall time and the audio frames its clients sent. `only`: the indices
    of the clients this process runs (all by default)."""
    sink: list[Measurement] = []
    frames: list[int] = []
    t0 = time.monotonic()
    deadline = t0 + options.duration_s
    mine = range(clients) if only is None else only
    tasks = [asyncio.create_task(_client(i, options, t0, deadline,
                                         random.Random(options.seed * 1000 + clients * 100 + i), sink, frames))
             for i in mine]
    with tqdm(total=round(options.duration_s), desc=f"{clients} client(s)", unit="s", file=sys.stderr,
              disable=not progress) as bar:
        while not all(t.done() for t in tasks):
            await asyncio.sleep(1.0)
            bar.n = min(round(time.monotonic() - t0), bar.total)
            done = [m.voice_to_action_s for m in sink if m.voice_to_action_s is not None]
            postfix = {"requests": len(sink), "lost": sum(m.lost for m in sink)}
            if done:
                postfix["p50_ms"] = round(float(np.percentile(done, 50)) * 1e3)
                postfix["p95_ms"] = round(float(np.percentile(done, 95)) * 1e3)
            bar.set_postfix(postfix)
    for task in tasks:
        task.result()  # a bug in a client is an error, not a quiet gap in the numbers
    return sink, time.monotonic() - t0, sum(frames)


def _run_share(clients: int, options: E2EOptions, share: list[int], progress: bool
               ) -> tuple[list[Measurement], float, int]:
    """A client process's part of one point (module level: it is pickled into the process)."""
    return event_loop.run(run_point(clients, options, share, progress))


def measure_point(clients: int, options: E2EOptions) -> tuple[list[Measurement], float, int]:
    """run_point in this process, or spread over options.client_procs processes (spawned, so no event loop or
    thread is inherited): their measurements together, the longest wall time, all frames."""
    procs = min(options.client_procs, clients)
    if procs <= 1:
        return event_loop.run(run_point(clients, options))  # uvloop: a few hundred clients on one loop
    shares = [list(range(i, clients, procs)) for i in range(procs)]
    with ProcessPoolExecutor(procs, mp_context=multiprocessing.get_context("spawn")) as pool:
        parts = list(pool.map(_run_share, [clients] * procs, [options] * procs, shares,
                              [i == 0 for i in range(procs)]))  # one progress bar: the first share's
    return ([m for part, _, _ in parts for m in part], max(wall for _, wall, _ in parts),
            sum(frames for _, _, frames in parts))


def metrics_url(url: str) -> str:
    return url.replace("ws://", "http://", 1).replace("wss://", "https://", 1).rstrip("/") + "/metrics"


def _scrape(url: str) -> dict[str, Any] | None:
    """The server's counters that the report needs and its models, or None when it has no /metrics."""
    samples = metric_samples(metrics_url(url))
    if samples is None:
        return None
    out: dict[str, Any] = {"compute_s": 0.0, "asr_s": 0.0, "audio_s": 0.0, "partials": 0.0, "partials_shed": 0.0,
                           "models": {}}
    for sample in samples:
        if sample.name == "voice_models_info":
            out["models"] = dict(sample.labels)
        elif sample.name == "voice_compute_seconds_sum":
            out["compute_s"] += sample.value
            if sample.labels.get("work", "").startswith("asr"):
                out["asr_s"] += sample.value
        elif sample.name == "voice_audio_seconds_total":
            out["audio_s"] = sample.value
        elif sample.name == "voice_compute_seconds_count" and sample.labels.get("work") == "asr_partial":
            out["partials"] = sample.value
        elif sample.name == "voice_partials_shed_total":
            out["partials_shed"] += sample.value
    return out


def _server_load(before: dict[str, Any] | None, after: dict[str, Any] | None, wall_s: float
                 ) -> dict[str, Any] | None:
    """Compute per second of audio (below 1 the server can keep up in principle) and the share of wall time the
    recognizer was busy, over one point."""
    if before is None or after is None:
        return None
    delta = {k: after[k] - before[k] for k in ("compute_s", "asr_s", "audio_s", "partials", "partials_shed")}
    audio = delta["audio_s"] or float("nan")
    return {"compute_per_audio_second": round(delta["compute_s"] / audio, 4),
            "asr_busy_share": round(delta["asr_s"] / wall_s, 4), "audio_s": round(delta["audio_s"], 1),
            "partials_decoded": int(delta["partials"]), "partials_shed": int(delta["partials_shed"]),
            "models": after["models"]}


def _stats(values: Sequence[float]) -> dict[str, Any] | None:
    return LatencyStats.from_seconds(values).as_dict() if values else None


def summarize(clients: int, measurements: Sequence[Measurement], wall_s: float, verdict: Verdict,
              server: dict[str, Any] | None, load: dict[str, Any] | None = None) -> dict[str, Any]:
    answered = [m for m in measurements if not m.lost]
    client_stages = {s: _stats([m.stages_s[s] for m in answered if s in m.stages_s]) for s in CLIENT_STAGES}
    server_stages = {s: _stats([m.server_ms[s] / 1e3 for m in answered if s in m.server_ms]) for s in SERVER_STAGES
                     if any(s in m.server_ms for m in answered)}
    return {
        "clients": clients, "wall_s": round(wall_s, 1), "requests": len(measurements),
        "understood": sum(m.intent is not None for m in measurements), "right": sum(m.right for m in measurements),
        "lost": sum(m.lost for m in measurements), "keeps_up": verdict.keeps_up, "verdict": verdict.reason,
        "voice_to_action": client_stages["result"], "client_stages": client_stages, "server_stages": server_stages,
        "server": server, "load": load, "measurements": [asdict(m) for m in measurements],
    }


def _ms(stats: dict[str, Any] | None, key: str) -> str:
    return f"{stats[key]:.0f}" if stats else "-"


def _load_row(p: dict[str, Any]) -> list[Any]:
    """The point's line in the 'where the time went' table."""
    load = p.get("load") or {}
    if not load:
        return ["-", p["clients"], *["-"] * 6]
    gpus, batching = load["gpu_utilization_percent"], load["triton_batching"] or {}
    return [load["layout"], p["clients"], "+".join(f"{c:.2f}" for c in load["gateway_cores"]),
            "-" if load["model_server_cores"] is None else f"{load['model_server_cores']:.2f}",
            f"{load['client_cores']:.2f}", load["frames_per_s_per_gateway"],
            "/".join(f"{g:.0f}" for g in gpus) if gpus else "-",
            ", ".join(f"{model} {b['requests_per_execution']:g} / {b['queue_ms_mean']:g} / "
                      f"{b['execution_ms_mean']:g} ms" for model, b in sorted(batching.items())) or "-"]


def print_report(points: Sequence[dict[str, Any]]) -> None:
    rows = []
    for p in points:
        v, st = p["voice_to_action"], p["client_stages"]
        load = p["server"] or {}
        rows.append([p["clients"], p["requests"], f"{p['right']}/{p['requests']}", _ms(v, "p50_ms"),
                     _ms(v, "p95_ms"), _ms(v, "p99_ms"), _ms(st["speech_end"], "p50_ms"),
                     _ms(st["transcript"], "p50_ms"), _ms(st["intent"], "p50_ms"),
                     load.get("compute_per_audio_second", "-"), p["verdict"]])
    print(format_table(["clients", "requests", "right", "voice-to-action p50 ms", "p95 ms", "p99 ms",
                        "speech_end p50", "transcript p50", "intent p50", "compute/audio s", "verdict"], rows))
    if any(p.get("load") for p in points):
        print("\nwhere the time went (CPU cores busy over the point; frames: 20 ms websocket frames received):")
        print(format_table(["layout", "clients", "gateway cores", "model-server cores", "client cores",
                            "frames/s per gateway", "GPU %",
                            "batching (requests per execution / queue / execution ms)"],
                           [_load_row(p) for p in points]))
    for p in points:
        stage_rows = [[f"client: {s}", _ms(x, "p50_ms"), _ms(x, "p95_ms"), _ms(x, "p99_ms")]
                      for s, x in p["client_stages"].items()]
        stage_rows += [[f"server: {s}", _ms(x, "p50_ms"), _ms(x, "p95_ms"), _ms(x, "p99_ms")]
                       for s, x in p["server_stages"].items()]
        where = f" ({p['load']['layout']})" if p.get("load") else ""
        print(f"\n{p['clients']} client(s){where}, ms from the end of speech in the audio:")
        print(format_table(["stage", "p50", "p95", "p99"], stage_rows))


def run_sweep(options: E2EOptions, client_counts: Sequence[int], probe: LoadProbe | None = None,
              scrape: bool = True) -> list[dict[str, Any]]:
    """One point per client count until one cannot keep up. `probe` reads what the layout's processes used;
    `scrape`: the server's own /metrics speak for all of it (not so for one of several gateways on a port)."""
    points: list[dict[str, Any]] = []
    for clients in client_counts:
        before = _scrape(options.url) if scrape else None
        if probe is not None:
            probe.begin()
        measurements, wall, frames = measure_point(clients, options)
        server = _server_load(before, _scrape(options.url), wall) if scrape else None
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


def e2e_plot_title(machine: dict[str, Any], models: dict[str, str]) -> str:
    where = machine["gpus"][0].split(",")[0] if machine.get("gpus") else f"{machine['cores']}-core {machine['cpu']}"
    return (f"voice-to-action under load, {where}: faster-whisper {models.get('asr_model', '?')} "
            f"({models.get('asr_device', '?')}), NLU {models.get('nlu_backend', '?')} "
            f"{models.get('nlu_precision', '')}")


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
                  scratch: Path) -> list[dict[str, Any]]:
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
        return run_sweep(options, run.clients, LoadProbe(deployment, gpus), scrape=layout.gateways <= 1)


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
    models: dict[str, str] = next((p["server"]["models"] for p in points if p["server"]), {})
    report = {"benchmark": "voice-to-action under load: concurrent real-time clients replaying the spoken corpus",
              "command": "assistant bench e2e " + " ".join(sys.argv[3:]), "machine": machine,
              "server": run.url or "spawned on this machine, one layout after another",
              "layouts": [] if run.url else [layout.name for layout in run.layouts], "models": models,
              "options": {"clients": list(run.clients), "duration_s": run.duration_s, "max_wait_s": run.max_wait_s,
                          "corpus": str(run.corpus), "corpus_requests": len(corpus), "seed": run.seed,
                          "client_procs": run.client_procs,
                          "start_spread_s": options.start_spread_s, "pause_s": list(options.pause_s)},
              "points": points}
    if run.json:
        write_report(run.json, report)
    if run.plot:
        from assistant.bench.plot import plot_e2e, plot_e2e_layouts

        title = e2e_plot_title(machine, models)
        if len(run.layouts) > 1 and not run.url:
            plot_e2e_layouts(points, run.plot, title, aim_s=run.aim_s)
        else:
            plot_e2e(points, run.plot, title, aim_s=run.aim_s)
    return 0 if all(p["keeps_up"] for p in points) else 3
