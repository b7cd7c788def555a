"""The load: N clients replaying the corpus at real-time pace, each from a random offset and pausing between
requests like people do; one websocket connection per request; spread over processes when one event loop is not
enough (each client's choices are seeded by its index, so the load is the same however it is split)."""

from __future__ import annotations

import asyncio
import math
import multiprocessing
import random
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from assistant import event_loop
from assistant.bench.e2e.corpus import CORPUS_NOW, CORPUS_TZ, CorpusItem
from assistant.bench.e2e.judge import Measurement, measure_request
from assistant.clients.connection import ServerRefused
from assistant.clients.send import Received, stream_audio

__all__ = ["E2EOptions", "one_client_limits", "frames_of", "run_point", "measure_point", "TAIL_MS"]

TAIL_MS = 800  # silence streamed after each request: the endpointer needs its hangover of it to decide


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
    speech: bool = True  # replies spoken (their audio comes, is not played): first reply audio is measured too


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
                              token=options.tokens[index % len(options.tokens)] if options.tokens else options.token,
                              speech=options.speech)
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
