"""Plain HTTP on the websocket port: the browser demo (static files, no build step, no CDN), the day view's
bookings, Prometheus metrics and a health check. Who may ask, and how (GET and HEAD only), is the gate's
(assistant/server/gate.py); these are the answers. A bad query is a 400 with a plain reason, never a 500."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from datetime import date, datetime
from pathlib import Path
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo

from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from assistant.booking.store import StoreUnavailable
from assistant.server.batcher import Overloaded
from assistant.server.metrics import CONTENT_TYPE_LATEST
from assistant.server.workers import Workers
from assistant.text_pipeline import DayBookings
from assistant.zones import check_day, parse_zone

__all__ = ["http_routes", "plain_response", "STATIC", "PROTECTED_PATHS"]

PROTECTED_PATHS = frozenset({"/api/day", "/metrics"})  # need the token when the server has tokens

STATIC = Path(__file__).resolve().parent / "static"
_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
          ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}


def _response(status: int, reason: str, content_type: str, body: bytes) -> Response:
    headers = Headers([("Content-Type", content_type), ("Content-Length", str(len(body))),
                       ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff")])
    return Response(status, reason, headers, body)


def plain_response(status: int, reason: str, message: str, **headers: str) -> Response:
    """A short plain-text answer (errors, refusals), with any extra headers (Allow, Retry-After, ...)."""
    response = _response(status, reason, "text/plain; charset=utf-8", f"{message}\n".encode())
    for name, value in headers.items():
        response.headers[name.replace("_", "-")] = value
    return response


def _json(status: int, reason: str, payload: object) -> Response:
    return _response(status, reason, "application/json", json.dumps(payload).encode())


def _static(name: str) -> Response:
    path = STATIC / name
    # Only files that sit directly in static/ with a known type: no "..", no folders, no surprises.
    if "/" in name or path.suffix not in _TYPES or not path.is_file():
        return _response(404, "Not Found", "text/plain; charset=utf-8", b"not found\n")
    return _response(200, "OK", _TYPES[path.suffix], path.read_bytes())


def _day_query(query: dict[str, list[str]]) -> tuple[date | None, ZoneInfo]:
    zone = parse_zone(query.get("tz", ["UTC"])[0])
    if "date" not in query:
        return None, zone
    try:
        day = date.fromisoformat(query["date"][0])
    except ValueError:
        raise ValueError(f"date {query['date'][0][:32]!r} is not YYYY-MM-DD") from None
    return check_day(day), zone


def _day_json(view: DayBookings) -> dict[str, object]:
    zone = view.zone
    return {
        "date": view.day.isoformat(), "timezone": str(zone),
        "rooms": [{"key": r.key, "name": r.name, "seats": r.seats} for r in view.rooms],
        "bookings": [{"id": b.id, "room": b.room, "title": b.title, "start": b.start.astimezone(zone).isoformat(),
                      "end": b.end.astimezone(zone).isoformat()} for b in view.bookings],
    }


def http_routes(workers: Workers) -> Callable[[Request], Awaitable[Response]]:
    """The answer to a plain HTTP GET the gate let through."""

    async def route(request: Request) -> Response:
        url = urlsplit(request.path)
        if url.path in ("/", "/index.html"):
            return _static("index.html")
        if url.path.startswith("/static/"):
            return _static(url.path.removeprefix("/static/"))
        if url.path == "/api/day":
            try:
                day, zone = _day_query(parse_qs(url.query, max_num_fields=10))
            except ValueError as exc:
                return _json(400, "Bad Request", {"error": "bad_query", "message": str(exc)})
            # the NLU worker owns the store: the day is read there, between turns
            try:
                view = await workers.run_nlu(lambda: workers.pipeline.day(day or datetime.now(zone).date(), zone))
            except Overloaded:
                return plain_response(503, "Service Unavailable", "busy: try again in a moment", Retry_After="1")
            except StoreUnavailable as exc:
                return _json(503, "Service Unavailable", {"error": "store_unavailable", "message": str(exc)})
            return _json(200, "OK", _day_json(view))
        if url.path == "/metrics":
            return _response(200, "OK", CONTENT_TYPE_LATEST, workers.metrics.render())
        if url.path == "/healthz":  # serving; then a line per language still being made ready, if any
            # the store's own probe (a CalDAV server may be down), in a thread: never behind the NLU worker
            problem = await asyncio.to_thread(workers.pipeline.store.problem)
            lines = ["ok" if problem is None else "store unavailable",
                     *(f"{state.language.code}: {state.describe()}" for state in workers.builds.pending()),
                     *([f"store: {problem}"] if problem is not None else [])]
            status = (200, "OK") if problem is None else (503, "Service Unavailable")
            return _response(*status, "text/plain; charset=utf-8", ("\n".join(lines) + "\n").encode())
        return _response(404, "Not Found", "text/plain; charset=utf-8", b"not found\n")

    return route
