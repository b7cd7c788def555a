"""Every HTTP request and websocket handshake passes here first: the method, the Host and Origin rules, the
token, the back-off after wrong tokens and the connection caps (assistant/server/access.py, limits.py,
[limits]). What it refuses is refused before a session exists, with a status and a plain reason; what it lets
through goes to the handshake or to the routes. An unexpected failure answering a request is logged and is a
bare 500, never a traceback to the client.

A websocket handshake is admitted as its client (`Admission`): the token's identity (from `Authorization: Bearer`
or the token subprotocol), or on a server without tokens the client's address. On a token server a handshake
with no token is admitted apart, into the small pool of unauthenticated connections, and must authenticate with
`"token"` in `start` within [limits] unauthenticated_timeout_s (`authenticate`); it never takes an authenticated
client's place.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass
from urllib.parse import urlsplit

from websockets.asyncio.server import ServerConnection
from websockets.http11 import Request, Response
from websockets.typing import Subprotocol

from assistant.config import LimitsSettings
from assistant.errors import LimitExceeded
from assistant.server.access import SUBPROTOCOL, Access
from assistant.server.limits import ClientShare, Connections, WrongTokens, client_key
from assistant.server.metrics import ServerMetrics
from assistant.server.web import PROTECTED_PATHS, plain_response

__all__ = ["Gate", "Admission", "select_subprotocol"]

log = logging.getLogger(__name__)

_METHODS = ("GET", "HEAD")
_SINGLE_HEADERS = ("Host", "Origin", "Authorization")


def select_subprotocol(connection: ServerConnection, offered: Sequence[Subprotocol]) -> Subprotocol | None:
    """`voice-assistant` when the client offers it (a browser that sent its token as a subprotocol needs one
    chosen), else none: clients that offer nothing are served as before."""
    return Subprotocol(SUBPROTOCOL) if SUBPROTOCOL in offered else None


@dataclass
class Admission:
    """One websocket connection as the gate let it in: its address, and once authenticated its identity ("" on a
    server without tokens) and its client's share."""

    address: str
    identity: str | None = None
    share: ClientShare | None = None


class Gate:
    def __init__(self, access: Access, limits: LimitsSettings, metrics: ServerMetrics,
                 routes: Callable[[Request], Awaitable[Response]]) -> None:
        self.access, self.limits, self.metrics, self._routes = access, limits, metrics, routes
        self.counts = Connections(limits)
        self.wrong_tokens = WrongTokens(limits)
        self._admitted: dict[ServerConnection, Admission] = {}
        self._watchers: set[asyncio.Task[None]] = set()
        metrics.limits.info({**{k: str(v) for k, v in asdict(limits).items()},
                             "token_required": str(access.token_required).lower(),
                             "own_bookings_only": str(access.own_bookings_only).lower()})

    def admission(self, connection: ServerConnection) -> Admission:
        return self._admitted[connection]

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
        headers = {name: request.headers.get_all(name) for name in _SINGLE_HEADERS}
        if any(len(values) > 1 for values in headers.values()):  # which one would count? neither
            return plain_response(400, "Bad Request", "Host, Origin and Authorization may each appear once")
        host, origin, authorization = (values[0] if values else None for values in headers.values())
        refusal = self.access.check_request(host, origin)
        if refusal is not None:
            return self._refuse(refusal.code, plain_response(refusal.status, "Forbidden", refusal.message))
        peer = str(connection.remote_address[0]) if connection.remote_address else "?"
        address = self.access.client_address(peer, request.headers.get_all("X-Forwarded-For"))
        token = Access.handshake_token(authorization, request.headers.get_all("Sec-WebSocket-Protocol"))
        identity = self.access.identity(None)  # "" without tokens; None: a token is needed
        if token is not None and self.access.token_required:
            identity, refused = self._check_token(address, token)
            if refused is not None:
                return refused
        if "upgrade" in ",".join(request.headers.get_all("Connection")).lower():
            return self._admit(connection, address, identity)
        if path in PROTECTED_PATHS and identity is None:
            return self._refuse("no_token", plain_response(401, "Unauthorized", "this server needs a token: "
                                                           "Authorization: Bearer TOKEN", WWW_Authenticate="Bearer"))
        return await self._routes(request)

    def _verify(self, address: str, token: str) -> tuple[str | None, float]:
        """(the identity, 0) for a right token, (None, 0) for a wrong one (counted against the address), and
        (None, seconds) while the address must still wait: then right or wrong get the same answer, so a guess
        is not told apart."""
        identity = self.access.identity(token)
        wait = self.wrong_tokens.retry_after(address, identity)
        if wait > 0:
            self.metrics.refused.labels("backoff").inc()
            return None, wait
        if identity is None:
            self.wrong_tokens.wrong(address)
            self.metrics.refused.labels("bad_token").inc()
        else:
            self.wrong_tokens.right(address, identity)
        return identity, 0.0

    def _check_token(self, address: str, token: str) -> tuple[str | None, Response | None]:
        """(the token's identity, None), or (None, the refusal: 429 while the address waits, 401 when wrong)."""
        identity, wait = self._verify(address, token)
        if wait > 0:
            return None, plain_response(429, "Too Many Requests", f"too many wrong tokens from {address}; try "
                                        f"again in {math.ceil(wait)} s", Retry_After=str(math.ceil(wait)))
        if identity is None:
            return None, plain_response(401, "Unauthorized", "the token is not valid", WWW_Authenticate="Bearer")
        return identity, None

    def _busy(self, reason: str) -> Response:
        return self._refuse("too_many_connections", plain_response(
            503, "Service Unavailable", f"too many connections: {reason}; try again later", Retry_After="5"))

    def _admit(self, connection: ServerConnection, address: str, identity: str | None) -> Response | None:
        """A websocket handshake: counted against its client's caps (or the unauthenticated pool's) until the
        connection closes."""
        admission = Admission(address, identity)
        if identity is None:
            reason = self.counts.admit_unauthenticated(address)
            if reason is not None:
                return self._busy(reason)
        else:
            share = self.counts.admit(client_key(identity, address))
            if isinstance(share, str):
                return self._busy(share)
            admission.share = share
        self._admitted[connection] = admission
        self._count()
        watcher = asyncio.ensure_future(self._release(connection))
        self._watchers.add(watcher)
        watcher.add_done_callback(self._watchers.discard)
        return None

    def authenticate(self, connection: ServerConnection, token: str | None) -> Admission:
        """A connection admitted without a token, authenticated by the one in `start`: it leaves the
        unauthenticated pool for its client's share. Raises LimitExceeded (unauthorized, backoff, or
        too_many_connections) when it cannot."""
        admission = self._admitted[connection]
        if admission.identity is not None:
            return admission
        if not token:
            self.metrics.refused.labels("no_token").inc()
            raise LimitExceeded("unauthorized", "this server needs a token: an Authorization: Bearer header, the "
                                "token subprotocol, or \"token\" in start")
        identity, wait = self._verify(admission.address, token)
        if wait > 0:
            raise LimitExceeded("backoff", f"too many wrong tokens from this address; try again in "
                                f"{math.ceil(wait)} s")
        if identity is None:
            raise LimitExceeded("unauthorized", "the token is not valid")
        share = self.counts.admit(client_key(identity, admission.address))
        if isinstance(share, str):
            self.metrics.refused.labels("too_many_connections").inc()
            raise LimitExceeded("too_many_connections", f"too many connections: {share}; try again later")
        self.counts.release_unauthenticated(admission.address)
        admission.identity, admission.share = identity, share
        self._count()
        return admission

    def _count(self) -> None:
        self.metrics.connections.set(self.counts.total + sum(self.counts.unauthenticated.values()))

    async def _release(self, connection: ServerConnection) -> None:
        try:
            await connection.wait_closed()
        finally:
            admission = self._admitted.pop(connection)
            if admission.share is not None:
                self.counts.release(admission.share)
            else:
                self.counts.release_unauthenticated(admission.address)
            self._count()
