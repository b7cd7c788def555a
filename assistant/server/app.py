"""`assistant serve`: the websocket endpoint. Moves bytes and events; the sessions do the rest.

Bad client input (malformed messages, unsupported audio, audio before start, huge frames) gets an `error`
event with a code; a client that vanishes loses only its own session. Plain HTTP on the same port
(assistant/server/web.py): the browser demo at /, /api/day, /metrics (Prometheus) and /healthz.
"""

from __future__ import annotations

import asyncio
import sys

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from assistant.audio.stream import StreamConfig
from assistant.errors import InputError, ProtocolError
from assistant.event_loop import loop_factory, run
from assistant.events import Audio, ErrorEvent, ServerEvent, Start, Stop, decode_client
from assistant.server.session import Session
from assistant.server.web import http_handler
from assistant.server.workers import Workers

__all__ = ["run_server", "MAX_FRAME_BYTES", "MAX_MESSAGE_BYTES"]

MAX_FRAME_BYTES = 1 << 18  # 256 KiB of audio in one message (1.3 s of 48 kHz stereo): larger gets an error, dropped
MAX_MESSAGE_BYTES = 1 << 22  # 4 MiB: beyond this websockets closes the connection (1009), as it must


async def _handle(connection: ServerConnection, workers: Workers, stream: StreamConfig) -> None:
    metrics = workers.metrics

    async def send(event: ServerEvent) -> None:
        if isinstance(event, ErrorEvent):
            metrics.errors.labels(event.code).inc()
        await connection.send(event.to_wire())

    session: Session | None = None
    try:
        async for message in connection:
            try:
                decoded = decode_client(message)
                if isinstance(decoded, Start):
                    started = Session(decoded, workers, stream, send)  # a bad start raises before anything
                    if session is None:
                        metrics.sessions.inc()
                    else:
                        session.close()
                    session = started
                    await send(session.ready())
                elif session is None:
                    raise ProtocolError("no_start", "send a JSON start message before audio or stop")
                elif isinstance(decoded, Audio):
                    if len(decoded.pcm) > MAX_FRAME_BYTES:
                        raise ProtocolError("frame_too_large", f"an audio message is at most {MAX_FRAME_BYTES} "
                                            f"bytes, got {len(decoded.pcm)}; it was dropped")
                    await session.audio(decoded.pcm)
                elif isinstance(decoded, Stop):
                    await session.stop()  # every utterance's result is sent before this returns
                    await connection.close(1000, "stop: all results sent")
                    return
            except InputError as exc:  # ProtocolError included: the client hears the code, the session goes on
                await send(ErrorEvent(exc.code, exc.message))
    except ConnectionClosed:
        pass  # the client vanished: its session goes with it, everyone else carries on
    finally:
        if session is not None:
            session.close()
            metrics.sessions.dec()


async def serve_forever(workers: Workers, stream: StreamConfig, host: str, port: int) -> None:
    async with serve(lambda c: _handle(c, workers, stream), host, port, max_size=MAX_MESSAGE_BYTES,
                     process_request=http_handler(workers)) as server:
        bound = server.sockets[0].getsockname()
        print(f"listening on ws://{bound[0]}:{bound[1]}", file=sys.stderr, flush=True)
        await asyncio.Future()


def run_server(workers: Workers, stream: StreamConfig, host: str, port: int, event_loop: str = "auto") -> None:
    name, _ = loop_factory(event_loop)
    print(f"[serve] event loop: {name}", file=sys.stderr, flush=True)
    try:
        run(serve_forever(workers, stream, host, port), event_loop)
    finally:
        workers.close()
