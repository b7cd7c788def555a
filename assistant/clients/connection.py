"""Opening the websocket for the command-line clients (`send`, `mic`): a refusal is one plain line, never a
traceback, and a busy server (HTTP 503) is tried again after its `Retry-After`, a bounded number of times, saying
so each time."""

from __future__ import annotations

import asyncio
import sys

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidHandshake, InvalidStatus, InvalidURI
from websockets.http11 import Response

from assistant.errors import AssistantError

__all__ = ["ServerRefused", "open_websocket", "auth_headers", "BUSY_RETRIES", "MAX_RETRY_WAIT_S"]

BUSY_RETRIES = 3  # tries after the first when the server answers 503
MAX_RETRY_WAIT_S = 30.0  # a longer Retry-After is waited this long at most
_HINTS = {401: " (give the server's token: --token or $ASSISTANT_TOKEN)",
          403: " (this server takes connections from its own pages and hosts only)",
          429: " (wait before trying again)"}


class ServerRefused(AssistantError):
    """The server could not be reached or refused the connection; the message is one line for a person, `status`
    the HTTP status of a refused handshake (0 when there was none)."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


def auth_headers(token: str | None) -> dict[str, str]:
    """The handshake's Authorization header for a server that needs a token (none without one)."""
    return {"Authorization": f"Bearer {token}"} if token else {}


def _reason(response: Response) -> str:
    """The refusal's plain-text reason (the server's body), on one short line."""
    text = response.body.decode("utf-8", "replace").strip().splitlines() if response.body else []
    return (text[0][:200] if text else response.reason_phrase) or "no reason given"


def _retry_after(response: Response) -> float:
    try:
        return min(MAX_RETRY_WAIT_S, max(0.0, float(response.headers.get("Retry-After", "5"))))
    except ValueError:  # an HTTP date: not what this server sends; wait the default
        return 5.0


async def open_websocket(url: str, token: str | None, client: str, *, max_size: int = 1 << 20,
                         retries: int = BUSY_RETRIES) -> ClientConnection:
    """The open connection; raises ServerRefused with one plain line when it cannot be had."""
    for attempt in range(retries + 1):
        try:
            return await connect(url, max_size=max_size, additional_headers=auth_headers(token))
        except InvalidStatus as exc:
            status, reason = exc.response.status_code, _reason(exc.response)
            if status == 503 and attempt < retries:
                wait = _retry_after(exc.response)
                print(f"assistant {client}: the server is busy ({reason}); trying again in {wait:g} s "
                      f"(try {attempt + 2} of {retries + 1})", file=sys.stderr, flush=True)
                await asyncio.sleep(wait)
                continue
            tried = f" after {retries + 1} tries" if status == 503 else ""
            raise ServerRefused(f"the server refused the connection{tried}: HTTP {status}, {reason}"
                                f"{_HINTS.get(status, '')}", status) from None
        except InvalidURI:
            raise ServerRefused(f"{url!r} is not a websocket URL (ws://HOST:PORT)") from None
        except (OSError, InvalidHandshake, TimeoutError) as exc:
            raise ServerRefused(f"cannot connect to {url}: {getattr(exc, 'strerror', None) or exc}") from None
    raise AssertionError("unreachable")  # the loop returns or raises
