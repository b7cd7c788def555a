"""Every HTTP request and websocket handshake passes here first: the method, the Host and Origin rules, the
token, and the connection caps (assistant/server/access.py, [limits]). What it refuses is refused before a
session exists, with a status and a plain reason; what it lets through goes to the handshake or to the routes.
An unexpected failure answering a request is logged and is a bare 500, never a traceback to the client."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from urllib.parse import urlsplit

from websockets.asyncio.server import ServerConnection
from websockets.http11 import Request, Response

from assistant.config import LimitsSettings
from assistant.server.access import Access
from assistant.server.limits import ConnectionCounts
from assistant.server.metrics import ServerMetrics
from assistant.server.web import PROTECTED_PATHS, plain_response

__all__ = ["Gate"]

log = logging.getLogger(__name__)

_METHODS = ("GET", "HEAD")


class Gate:
    def __init__(self, access: Access, limits: LimitsSettings, metrics: ServerMetrics,
                 routes: Callable[[Request], Awaitable[Response]]) -> None:
        self.access, self.limits, self.metrics, self._routes = access, limits, metrics, routes
        self.counts = ConnectionCounts(limits)
        self._identities: dict[ServerConnection, str | None] = {}  # from the handshake's Authorization header
        self._watchers: set[asyncio.Task[None]] = set()
        metrics.limits.info({**{k: str(v) for k, v in asdict(limits).items()},
                             "token_required": str(access.token_required).lower(),
                             "own_bookings_only": str(access.own_bookings_only).lower()})

    def header_identity(self, connection: ServerConnection) -> str | None:
        """The identity the handshake's token named (None: no token in the header; `start` may carry one)."""
        return self._identities.get(connection)

    async def process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        try:
            response = await self._process(connection, request)
        except Exception:  # noqa: BLE001 - a bug answering one request must not reach the client as a traceback
            log.exception("answering %s %s failed", request.method, request.path[:200])
            response = plain_response(500, "Internal Server Error", "internal error")
        if response is not None and request.method == "HEAD":  # the headers of the GET, no body
            response = Response(response.status_code, response.reason_phrase, response.headers, b"")
        return response

    def _refuse(self, reason: str, response: Response) -> Response:
        self.metrics.refused.labels(reason).inc()
        return response

    async def _process(self, connection: ServerConnection, request: Request) -> Response | None:
        if request.method not in _METHODS:
            return plain_response(405, "Method Not Allowed", f"{request.method[:16]} is not served; use GET",
                                  Allow=", ".join(_METHODS))
        path = urlsplit(request.path).path
        if path == "/healthz":  # for load balancers and probes, whatever Host they use
            return await self._routes(request)
        headers = {name: request.headers.get_all(name) for name in ("Host", "Origin", "Authorization")}
        if any(len(values) > 1 for values in headers.values()):  # which one would count? neither
            return plain_response(400, "Bad Request", "Host, Origin and Authorization may each appear once")
        host, origin, authorization = (values[0] if values else None for values in headers.values())
        refusal = self.access.check_request(host, origin)
        if refusal is not None:
            return self._refuse(refusal.code, plain_response(refusal.status, "Forbidden", refusal.message))
        token = Access.bearer(authorization)
        identity = self.access.identity(token)  # None: no valid token where one is needed
        if token is not None and identity is None:
            return self._refuse("bad_token", plain_response(401, "Unauthorized", "the token is not valid",
                                                            WWW_Authenticate="Bearer"))
        if "upgrade" in ",".join(request.headers.get_all("Connection")).lower():
            return self._admit(connection, identity)
        if path in PROTECTED_PATHS and identity is None:
            return self._refuse("no_token", plain_response(401, "Unauthorized", "this server needs a token: "
                                                           "Authorization: Bearer TOKEN", WWW_Authenticate="Bearer"))
        return await self._routes(request)

    def _admit(self, connection: ServerConnection, identity: str | None) -> Response | None:
        """A websocket handshake: counted against the caps until the connection closes."""
        address = str(connection.remote_address[0]) if connection.remote_address else "?"
        reason = self.counts.refuse(address)
        if reason is not None:
            return self._refuse("too_many_connections", plain_response(
                503, "Service Unavailable", f"too many connections: {reason}; try again later", Retry_After="5"))
        self._identities[connection] = identity
        self.metrics.connections.set(self.counts.total)
        watcher = asyncio.ensure_future(self._release(connection, address))
        self._watchers.add(watcher)
        watcher.add_done_callback(self._watchers.discard)
        return None

    async def _release(self, connection: ServerConnection, address: str) -> None:
        try:
            await connection.wait_closed()
        finally:
            self.counts.release(address)
            self._identities.pop(connection, None)
            self.metrics.connections.set(self.counts.total)
