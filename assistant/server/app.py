"""`assistant serve`: the websocket endpoint. Moves bytes and events; the sessions do the rest.

Every request passes the gate first (assistant/server/gate.py: method, Host, Origin, token, connection caps); a
connection is its client's (the token's identity, else its address), and its session is counted in that client's
share (assistant/server/limits.py).
Bad client input (malformed messages, unsupported audio, audio before start, huge frames) gets an `error`
event with a code and the connection goes on; going past a limit ([limits]: no start in time, idle, too long,
audio too fast, no token) gets the `error` event and then a close with code 1008 and the code as the reason.
A client that vanishes loses only its own session, and its queued work is cancelled. Plain HTTP on the same
port (assistant/server/web.py): the browser demo at /, /api/day, /metrics (Prometheus) and /healthz.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from dataclasses import dataclass

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from assistant.audio.stream import StreamConfig
from assistant.config import LimitsSettings
from assistant.errors import InputError, LimitExceeded, ProtocolError
from assistant.event_loop import loop_factory, run
from assistant.events import Audio, ErrorEvent, Playback, ServerEvent, Start, Stop, decode_client
from assistant.server.access import Access
from assistant.server.gate import Gate, select_subprotocol
from assistant.server.session import Session
from assistant.server.web import http_routes
from assistant.server.workers import Workers

__all__ = ["run_server", "ServerOptions", "MAX_FRAME_BYTES", "MAX_MESSAGE_BYTES"]

log = logging.getLogger(__name__)

MAX_FRAME_BYTES = 1 << 18  # 256 KiB of audio in one message (1.3 s of 48 kHz stereo): larger gets an error, dropped
MAX_MESSAGE_BYTES = 1 << 22  # 4 MiB: beyond this websockets closes the connection (1009), as it must
SERVER_HEADER = "voice-assistant"  # no versions: they only help someone looking for a known hole


@dataclass(frozen=True)
class ServerOptions:
    host: str
    port: int
    limits: LimitsSettings
    access: Access
    event_loop: str = "auto"
    reuse_port: bool = False  # one of several processes on this port (assistant/server/gateways.py)


class _Connection:
    """One websocket connection: its messages, its session, and the clocks that end it."""

    def __init__(self, connection: ServerConnection, workers: Workers, stream: StreamConfig, gate: Gate) -> None:
        self.connection, self.workers, self.stream, self.gate = connection, workers, stream, gate
        self.limits = gate.limits
        self.session: Session | None = None
        self._loop = asyncio.get_running_loop()
        self._opened = self._last = self._loop.time()
        self._session_began = 0.0

    async def send(self, event: ServerEvent) -> None:
        if isinstance(event, ErrorEvent):
            self.workers.metrics.errors.labels(event.code).inc()
        await self.connection.send(event.to_wire())

    async def send_bytes(self, message: bytes) -> None:
        """A spoken reply's audio (events.ReplyFrame)."""
        await self.connection.send(message)

    def _deadline(self) -> tuple[float, str, str]:
        """When this connection is closed if nothing arrives: (loop time, code, plain reason)."""
        if self.gate.admission(self.connection).identity is None:  # waiting apart: authenticate soon or go
            timeout = self.limits.unauthenticated_timeout_s
            return (self._opened + timeout, "unauthorized", f"no token within {timeout:g} s: send it in the "
                    "handshake (Authorization: Bearer, or the token subprotocol) or in start")
        if self.session is None:
            return (self._opened + self.limits.start_timeout_s, "start_timeout",
                    f"no start message within {self.limits.start_timeout_s:g} s")
        idle = self._last + self.limits.idle_timeout_s
        ends = self._session_began + self.limits.max_session_s
        if ends < idle:
            return ends, "session_too_long", f"a session lasts at most {self.limits.max_session_s:g} s; reconnect"
        return idle, "idle_timeout", f"nothing received for {self.limits.idle_timeout_s:g} s"

    async def serve(self) -> None:
        watchdog = asyncio.create_task(self._watch())
        try:
            async for message in self.connection:
                self._last = self._loop.time()
                if await self._message(message):
                    return
        except LimitExceeded as exc:
            await self._end(exc)
        except ConnectionClosed:
            pass  # the client vanished: its session goes with it, everyone else carries on
        finally:
            watchdog.cancel()
            if self.session is not None:
                self.session.close()
                self.workers.metrics.sessions.dec()

    async def _watch(self) -> None:
        """One timer per connection that sleeps until the deadline and ends the connection if nothing came since.
        (A timeout around every receive cost about 9 us a message: at 50 audio frames a second per client, more
        than the loop's own work on a frame; measured on the H200 host, 128 clients waited longer for results.)"""
        while True:
            deadline, code, reason = self._deadline()
            left = deadline - self._loop.time()
            if left <= 0:
                await self._end(LimitExceeded(code, reason))
                return
            await asyncio.sleep(left)

    async def _end(self, exc: LimitExceeded) -> None:
        """Past a limit: the error event, then a close with code 1008 and the error code as the reason."""
        self.workers.metrics.closed.labels(exc.code).inc()
        try:
            await self.send(ErrorEvent(exc.code, exc.message))
            await self.connection.close(1008, exc.code)
        except ConnectionClosed:
            pass

    async def _message(self, message: str | bytes) -> bool:
        """Handle one client message; True when the conversation is over (after stop)."""
        try:
            decoded = decode_client(message)
            if isinstance(decoded, Start):
                self._start(decoded)
                assert self.session is not None
                await self.send(self.session.ready())
            elif self.session is None:
                raise ProtocolError("no_start", "send a JSON start message before audio or stop")
            elif isinstance(decoded, Audio):
                if len(decoded.pcm) > MAX_FRAME_BYTES:
                    raise ProtocolError("frame_too_large", f"an audio message is at most {MAX_FRAME_BYTES} "
                                        f"bytes, got {len(decoded.pcm)}; it was dropped")
                await self.session.audio(decoded.pcm)
            elif isinstance(decoded, Playback):
                await self.session.playback(decoded)
            elif isinstance(decoded, Stop):
                await self.session.stop()  # every utterance's result is sent before this returns
                await self.connection.close(1000, "stop: all results sent")
                return True
        except LimitExceeded:
            raise
        except InputError as exc:  # ProtocolError included: the client hears the code, the session goes on
            await self.send(ErrorEvent(exc.code, exc.message))
        except ConnectionClosed:
            raise
        except Exception:  # noqa: BLE001 - a bug on one message: logged, the client hears a code, nothing else
            log.exception("a client message failed")
            await self.send(ErrorEvent("internal", "the server could not handle that message"))
        return False

    def _start(self, start: Start) -> None:
        admission = self.gate.authenticate(self.connection, start.token)  # at once when the handshake had one
        assert admission.identity is not None and admission.share is not None
        # a bad start raises before anything
        started = Session(start, self.workers, self.stream, self.send, limits=self.limits,
                          identity=admission.identity, share=admission.share, send_bytes=self.send_bytes)
        if self.session is None:
            self.workers.metrics.sessions.inc()
            self._session_began = self._loop.time()
        else:
            self.session.close()
        self.session = started


async def serve_forever(workers: Workers, stream: StreamConfig, options: ServerOptions) -> None:
    gate = Gate(options.access, options.limits, workers.metrics, http_routes(workers))

    async def handle(connection: ServerConnection) -> None:
        await _Connection(connection, workers, stream, gate).serve()

    async with serve(handle, options.host, options.port, max_size=MAX_MESSAGE_BYTES,
                     process_request=gate.process_request, server_header=SERVER_HEADER,
                     select_subprotocol=select_subprotocol,
                     reuse_port=options.reuse_port) as server:
        bound = server.sockets[0].getsockname()
        print(f"listening on ws://{bound[0]}:{bound[1]}", file=sys.stderr, flush=True)
        await asyncio.Future()


def run_server(workers: Workers, stream: StreamConfig, options: ServerOptions) -> None:
    name, _ = loop_factory(options.event_loop)
    print(f"[serve] event loop: {name}", file=sys.stderr, flush=True)
    access = options.access
    print(f"[serve] access: {'token required' if access.token_required else 'loopback, no token'}; "
          f"origins: the page's own{''.join(', ' + o for o in sorted(access.allowed_origins))}", file=sys.stderr,
          flush=True)
    try:
        run(serve_forever(workers, stream, options), options.event_loop)
    finally:
        workers.close()
