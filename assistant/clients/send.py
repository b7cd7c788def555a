"""`assistant send FILE.wav`: stream a WAV to the server in 20 ms frames (real time, or --fast), print every
server event as one JSON line with "t": seconds on the client clock since the first audio frame was sent.

Messages go through the protocol's codec (assistant/events.py) both ways: `start`/`stop` are written by it and
every event is read by it, so a client and the server can only disagree in one place.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import wave
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assistant.clients.connection import BUSY_RETRIES, auth_headers, open_websocket
from assistant.errors import InputError, ProtocolError
from assistant.events import (
    ErrorEvent,
    ReplyAudio,
    ReplyAudioEnd,
    ReplyFrame,
    ReplyHeard,
    ServerEvent,
    Start,
    Stop,
    decode_server_message,
    server_event,
)

__all__ = ["send_wav", "read_wav", "read_event", "stream_audio", "auth_headers", "Received", "FATAL_CODES"]

FATAL_CODES = ("bad_start", "unsupported_audio", "unauthorized", "language_unavailable")  # the server cannot
# use this stream at all (a language still being built: try again later)


@dataclass(frozen=True)
class Received:
    """A server event and when it arrived: seconds on the client clock since the first audio frame went out."""

    event: ServerEvent
    t: float

    def to_line(self) -> str:
        """The event's wire fields plus "t", as `assistant send` prints it."""
        return json.dumps({**self.event.to_dict(), "t": self.t}, ensure_ascii=False)

    @classmethod
    def from_line(cls, line: str) -> Received:
        data: dict[str, Any] = json.loads(line)
        return cls(server_event(data), float(data.get("t", 0.0)))


def read_event(message: str | bytes, client: str) -> ServerEvent | ReplyFrame | None:
    """A server message through the codec; one this client cannot read (a newer server's event) is skipped
    with a note on standard error, and the client keeps listening."""
    try:
        return decode_server_message(message)
    except ProtocolError as exc:
        print(f"assistant {client}: skipped a server message ({exc})", file=sys.stderr, flush=True)
        return None


def read_wav(path: Path) -> tuple[bytes, int, int]:
    try:
        with wave.open(str(path), "rb") as wav:
            if wav.getsampwidth() != 2:
                raise InputError("unsupported_audio", f"{path}: only 16-bit PCM WAV files are supported")
            return wav.readframes(wav.getnframes()), wav.getframerate(), wav.getnchannels()
    except (wave.Error, EOFError, OSError) as exc:
        raise InputError("unsupported_audio", f"{path}: not a readable WAV file ({exc})") from exc


async def stream_audio(url: str, pcm: bytes, rate: int, channels: int, on_event: Callable[[Received], None], *,
                       now: str | None, tz: str, fast: bool = False, tail_ms: int = 800,
                       token: str | None = None, language: str | None = None, retries: int = 0,
                       speed: float = 1.0, speech: bool = False) -> int:
    """Stream 16-bit PCM to the server (20 ms frames at `speed` times real time, as fast as it goes with `fast`),
    then stop; hand every server event to `on_event` with its arrival time. Returns 1 when the server refused the
    stream, else 0. A refused handshake raises ServerRefused (after `retries` more tries where it was busy).
    `speech`: ask for spoken replies; their audio is not played: each reply is handed on as one ReplyHeard."""
    frame = 2 * channels * rate // 50  # 20 ms
    pcm += b"\x00" * (2 * channels * rate * tail_ms // 1000)  # trailing silence lets the endpointer decide
    start = Start(rate, "pcm_s16le", channels, tz, now or None, language=language, speech=speech or None)
    heard = _RepliesHeard()
    async with await open_websocket(url, token, "send", max_size=1 << 22, retries=retries) as ws:
        await ws.send(start.to_wire())
        t0: float | None = None

        async def produce() -> None:
            nonlocal t0
            t0 = time.monotonic()
            for i, offset in enumerate(range(0, len(pcm), frame)):
                await ws.send(pcm[offset : offset + frame])
                if not fast:
                    await asyncio.sleep(max(0.0, t0 + (i + 1) * 0.02 / speed - time.monotonic()))
            await ws.send(Stop().to_wire())

        producer = asyncio.create_task(produce())
        try:
            async for message in ws:
                t = round(time.monotonic() - t0, 4) if t0 is not None else 0.0
                event = read_event(message, "send")
                if isinstance(event, ReplyFrame):
                    heard.frame(event, t)
                    continue
                if event is None:
                    continue
                on_event(Received(event, t))
                if isinstance(event, (ReplyAudio, ReplyAudioEnd)):
                    done = heard.event(event, t)
                    if done is not None:
                        on_event(done)
                if isinstance(event, ErrorEvent) and event.code in FATAL_CODES:
                    return 1
        finally:  # the server closes the connection once every result after our stop is sent
            producer.cancel()
    return 0


class _RepliesHeard:
    """Spoken replies' audio as it comes: when each began arriving, and how much came."""

    def __init__(self) -> None:
        self._rates: dict[int, int] = {}
        self._first: dict[int, float] = {}
        self._bytes: dict[int, int] = {}
        self._last: dict[int, float] = {}

    def frame(self, frame: ReplyFrame, t: float) -> None:
        self._first.setdefault(frame.reply, t)
        self._last[frame.reply] = t
        self._bytes[frame.reply] = self._bytes.get(frame.reply, 0) + len(frame.pcm)

    def event(self, event: ReplyAudio | ReplyAudioEnd, t: float) -> Received | None:
        if isinstance(event, ReplyAudio):
            self._rates[event.reply] = event.sample_rate
            return None
        rate = self._rates.pop(event.reply, 0)
        first = self._first.pop(event.reply, t)
        samples = self._bytes.pop(event.reply, 0) // 2
        heard = ReplyHeard(event.utterance, event.reply, rate, samples * 1000 // rate if rate else 0, event.cut,
                           self._last.pop(event.reply, t))
        return Received(heard, first)


def _print(received: Received) -> None:
    print(received.to_line(), flush=True)


def send_wav(path: Path, url: str, now: str | None, tz: str, fast: bool, tail_ms: int = 800,
             timeout_s: float = 120.0, token: str | None = None, language: str | None = None,
             speech: bool = False) -> int:
    pcm, rate, channels = read_wav(path)
    stream = stream_audio(url, pcm, rate, channels, _print, now=now, tz=tz, fast=fast, tail_ms=tail_ms,
                          token=token, language=language, retries=BUSY_RETRIES, speech=speech)
    try:
        return asyncio.run(asyncio.wait_for(stream, timeout_s))
    except TimeoutError:
        print(json.dumps({"type": "client_timeout", "seconds": timeout_s}), file=sys.stderr)
        return 1
