"""Abusive clients for `assistant bench soak --abuse`: one identity that opens many sessions and floods them with
speech, handshakes that never authenticate, and guesses at the token. Each kind runs until the soak ends and
counts what the server answered, so the report can show that the real-time users beside them were served and
what the abuse was held to ([limits], docs/reliability.md).

They run on the benchmark's own machine, so each paces itself a little (a flood session pauses half a second
before it reconnects; a guesser tries about 50 tokens a second): a tight loop would measure how the client
processes steal the server's CPU, not how the server shares it. Every client here has one address (loopback), so
the guesser starts after GUESS_AFTER_S: by then the real-time users have authenticated from that address, and an
address that is backed off still takes the tokens it already knows (assistant/server/limits.py WrongTokens)."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from assistant.audio.pcm import PcmDecoder
from assistant.bench.e2e.corpus import CORPUS_NOW, CORPUS_TZ, CorpusItem
from assistant.clients.connection import ServerRefused
from assistant.clients.send import Received, stream_audio
from assistant.events import ErrorEvent, ResultEvent

__all__ = ["AbuseOptions", "AbuseReport", "run_abuse", "FLOOD_SPEED", "GUESS_AFTER_S"]

FLOOD_SPEED = 4.0  # each flood session sends speech at the most one session may ([limits] audio_speed)
_RECONNECT_S = 0.5
_GUESSES_PER_S = 50.0
GUESS_AFTER_S = 10.0


@dataclass(frozen=True)
class AbuseOptions:
    url: str
    token: str  # the abusive identity's own (valid) token: its sessions are served, in turn with everyone's
    flood_sessions: int = 24
    tokenless: int = 8  # handshakes at once that never send a token
    guessers: int = 1  # loops sending wrong tokens


@dataclass
class AbuseReport:
    flood_connections: int = 0
    flood_results: int = 0
    flood_errors: Counter[str] = field(default_factory=Counter)
    flood_refused: Counter[int] = field(default_factory=Counter)  # HTTP status at the handshake
    tokenless_connections: int = 0
    tokenless_refused: Counter[int] = field(default_factory=Counter)
    tokenless_held_max_s: float = 0.0
    guesses: Counter[int] = field(default_factory=Counter)  # HTTP status -> count

    def to_dict(self) -> dict[str, object]:
        return {
            "flood": {"connections": self.flood_connections, "results": self.flood_results,
                      "errors_by_code": dict(self.flood_errors),
                      "handshakes_refused_by_status": {str(k): v for k, v in self.flood_refused.items()}},
            "tokenless": {"connections": self.tokenless_connections,
                          "refused_by_status": {str(k): v for k, v in self.tokenless_refused.items()},
                          "held_max_s": round(self.tokenless_held_max_s, 3)},
            "wrong_tokens": {"by_status": {str(k): v for k, v in self.guesses.items()},
                             "tries": sum(self.guesses.values())},
        }


def _speech(corpus: list[CorpusItem]) -> bytes:
    """Every request of the corpus back to back, as 16 kHz mono."""
    out = b""
    for item in corpus:
        decoder = PcmDecoder(item.rate, item.channels)
        out += b"".join(decoder.feed(item.pcm) + decoder.flush())
    return out


async def _flood(options: AbuseOptions, speech: bytes, offset: int, report: AbuseReport, deadline: float) -> None:
    def seen(received: Received) -> None:
        if isinstance(received.event, ErrorEvent):
            report.flood_errors[received.event.code] += 1
        elif isinstance(received.event, ResultEvent):
            report.flood_results += 1

    while time.monotonic() < deadline:
        report.flood_connections += 1
        try:
            stream = stream_audio(options.url, speech[offset:] + speech[:offset], 16000, 1, seen, now=CORPUS_NOW,
                                  tz=CORPUS_TZ, token=options.token, speed=FLOOD_SPEED)
            await asyncio.wait_for(stream, max(0.1, deadline - time.monotonic()))
        except ServerRefused as exc:
            report.flood_refused[exc.status] += 1
        except (TimeoutError, OSError, ConnectionClosed, InvalidHandshake):
            pass
        await asyncio.sleep(_RECONNECT_S)


async def _tokenless(options: AbuseOptions, report: AbuseReport, deadline: float) -> None:
    """Open a handshake without a token, send nothing, and note how long the server keeps it."""
    while time.monotonic() < deadline:
        opened = time.monotonic()
        try:
            async with connect(options.url, open_timeout=10) as ws:
                report.tokenless_connections += 1
                try:
                    async for _ in ws:
                        pass
                except ConnectionClosed:
                    pass
                report.tokenless_held_max_s = max(report.tokenless_held_max_s, time.monotonic() - opened)
        except InvalidStatus as exc:
            report.tokenless_refused[exc.response.status_code] += 1
            await asyncio.sleep(0.2)
        except (OSError, InvalidHandshake, TimeoutError):
            await asyncio.sleep(0.2)


async def _guess(options: AbuseOptions, report: AbuseReport, deadline: float, seed: int) -> None:
    await asyncio.sleep(GUESS_AFTER_S)
    tried = 0
    while time.monotonic() < deadline:
        tried += 1
        try:
            async with connect(options.url, open_timeout=10,
                               additional_headers={"Authorization": f"Bearer guess-{seed}-{tried:016d}"}):
                report.guesses[101] += 1  # a guess that got in: the report shows it
        except InvalidStatus as exc:
            report.guesses[exc.response.status_code] += 1
        except (OSError, InvalidHandshake, TimeoutError):
            report.guesses[0] += 1
        await asyncio.sleep(1 / _GUESSES_PER_S)


async def run_abuse(options: AbuseOptions, corpus: list[CorpusItem], duration_s: float) -> AbuseReport:
    report = AbuseReport()
    deadline = time.monotonic() + duration_s
    speech = _speech(corpus)
    step = len(speech) // max(1, options.flood_sessions) // 2 * 2
    tasks = [*(_flood(options, speech, i * step, report, deadline) for i in range(options.flood_sessions)),
             *(_tokenless(options, report, deadline) for _ in range(options.tokenless)),
             *(_guess(options, report, deadline, i) for i in range(options.guessers))]
    await asyncio.gather(*tasks)
    return report
