"""Who may use the server: the Host and Origin of a request, and the access token.

- A loopback bind needs no set-up. It answers only Host names that are loopback (localhost, 127.0.0.1, ::1, or
  [access] allowed_hosts): a web page on another name that resolves to 127.0.0.1 (DNS rebinding) is refused.
- A browser sends `Origin` with every websocket and cross-origin request: it must be the page's own origin (the
  scheme and the Host it asked for) or one of [access] allowed_origins. A request with no Origin is no browser's
  (the CLI clients, curl, Prometheus) and is let through to the token check.
- Any other bind refuses to start without a token ([access] tokens_file, or $ASSISTANT_TOKEN). With tokens,
  the websocket, /api/day and /metrics need one: `Authorization: Bearer TOKEN`, or for a browser's websocket
  (which cannot set headers) the subprotocol `voice-assistant.token.<TOKEN in base64url>` beside
  `voice-assistant`; `"token"` in `start` is still taken, from connections that wait apart (limits.py). Each token
  names an identity, which owns the bookings it makes and is the client its fair share is counted for.
- Without tokens a client is its address: the peer's, or where a proxy of [access] trusted_proxies forwarded from
  (the last address of X-Forwarded-For that is not itself a trusted proxy). Anyone else's X-Forwarded-For is
  ignored: it is only a claim.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from assistant.config import AccessSettings
from assistant.errors import ConfigError

__all__ = ["Access", "Refusal", "is_loopback", "TOKEN_ENV", "SUBPROTOCOL", "TOKEN_SUBPROTOCOL", "token_subprotocol"]

TOKEN_ENV = "ASSISTANT_TOKEN"  # a single token (identity "token") without a tokens file
SUBPROTOCOL = "voice-assistant"  # the websocket subprotocol the server selects when a client offers it
TOKEN_SUBPROTOCOL = "voice-assistant.token."  # + the token in base64url without padding: a browser's way to send it
_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Refusal:
    """Why a request is refused: the HTTP status, and a plain reason the client sees."""

    status: int
    code: str
    message: str


def _hostname(host_header: str) -> str:
    """The name in a Host header, without its port ("[::1]:8765" -> "::1"); "" for one that is no host."""
    try:
        return (urlsplit(f"//{host_header}").hostname or "").lower()
    except ValueError:  # "[::1" and the like
        return ""


def _read_tokens(path: Path) -> dict[str, str]:
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise ConfigError(f"[access] tokens_file {path}: {exc.strerror or exc}") from None
    tokens: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2 or len(parts[1]) < 16:
            raise ConfigError(f"[access] tokens_file {path}:{number}: expected 'NAME TOKEN' with a token of at "
                              "least 16 characters")
        tokens[parts[1]] = parts[0]
    return tokens


def token_subprotocol(token: str) -> str:
    """The subprotocol that carries `token` (subprotocol names allow only a few characters; base64url fits)."""
    return TOKEN_SUBPROTOCOL + base64.urlsafe_b64encode(token.encode()).decode().rstrip("=")


def _subprotocol_token(offered: list[str]) -> str | None:
    """The token a handshake offered as a subprotocol ("" for one that does not decode: a wrong token)."""
    for header in offered:
        for name in header.split(","):
            name = name.strip()
            if name.startswith(TOKEN_SUBPROTOCOL):
                encoded = name[len(TOKEN_SUBPROTOCOL):]
                try:
                    return base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()
                except (binascii.Error, ValueError):
                    return ""
    return None


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None


@dataclass(frozen=True)
class Access:
    loopback: bool  # the server is bound to a loopback address
    tokens: Mapping[str, str] = field(default_factory=dict)  # token -> identity
    allowed_origins: frozenset[str] = frozenset()
    allowed_hosts: frozenset[str] = frozenset()
    own_bookings_only: bool = True
    trusted_proxies: frozenset[str] = frozenset()  # addresses, as ipaddress writes them

    @classmethod
    def configure(cls, settings: AccessSettings, bind_host: str, env: Mapping[str, str] = os.environ) -> Access:
        """Refuses (ConfigError) a non-loopback bind without a token, before any model is loaded."""
        tokens = _read_tokens(Path(settings.tokens_file)) if settings.tokens_file else {}
        if env.get(TOKEN_ENV):
            if len(env[TOKEN_ENV]) < 16:
                raise ConfigError(f"${TOKEN_ENV}: a token of at least 16 characters")
            tokens[env[TOKEN_ENV]] = "token"
        loopback = is_loopback(bind_host)
        if not loopback and not tokens:
            raise ConfigError(f"--host {bind_host} is reachable from other machines: set ${TOKEN_ENV} (16+ "
                              "characters) or [access] tokens_file, and give the token to the clients (--token)")
        origins = frozenset(o.rstrip("/").lower() for o in settings.allowed_origins)
        proxies = [(p, _address(p)) for p in settings.trusted_proxies]
        bad = [p for p, address in proxies if address is None]
        if bad:
            raise ConfigError(f"[access] trusted_proxies: {', '.join(map(repr, bad))} is no IP address")
        return cls(loopback, tokens, origins, frozenset(h.lower() for h in settings.allowed_hosts),
                   settings.own_bookings_only, frozenset(str(a) for _, a in proxies))

    @property
    def token_required(self) -> bool:
        return bool(self.tokens)

    def check_request(self, host_header: str | None, origin: str | None) -> Refusal | None:
        """The Host and Origin rules (module docstring), for any HTTP request or websocket handshake."""
        host = _hostname(host_header or "")
        if self.loopback and not (is_loopback(host) or host in self.allowed_hosts):
            return Refusal(403, "forbidden_host", f"this server answers localhost only, not {host or 'no host'!r}")
        if origin is None:
            return None
        origin = origin.rstrip("/").lower()
        own = {f"http://{(host_header or '').lower()}", f"https://{(host_header or '').lower()}"}
        if origin in own or origin in self.allowed_origins:
            return None
        return Refusal(403, "forbidden_origin", "a page from another origin may not use this server")

    def identity(self, token: str | None) -> str | None:
        """The identity a token names, or None when it names none. Without tokens everyone is anonymous (""),
        and bookings belong to their conversation."""
        if not self.tokens:
            return ""
        if not token:
            return None
        given = token.encode()
        found = None
        for known, name in self.tokens.items():  # compare with every token, in constant time each
            if hmac.compare_digest(given, known.encode()):
                found = name
        return found

    @staticmethod
    def bearer(authorization: str | None) -> str | None:
        """The token of an `Authorization: Bearer TOKEN` header."""
        if not authorization:
            return None
        scheme, _, token = authorization.partition(" ")
        return token.strip() or None if scheme.lower() == "bearer" else None

    @staticmethod
    def handshake_token(authorization: str | None, subprotocols: list[str]) -> str | None:
        """The token a request carries: its Authorization header's, else a websocket subprotocol's."""
        token = Access.bearer(authorization)
        return token if token is not None else _subprotocol_token(subprotocols)

    def client_address(self, peer: str, forwarded_for: list[str]) -> str:
        """The client's address: the peer's, unless the peer is a trusted proxy; then the last address of
        X-Forwarded-For that is not a trusted proxy (the first hop a trusted proxy saw)."""
        if not self.trusted_proxies or str(_address(peer)) not in self.trusted_proxies:
            return peer
        hops = [hop for header in forwarded_for for hop in header.split(",")]
        for hop in reversed(hops):
            address = _address(hop)
            if address is None:
                return peer  # a hop that is no address: the chain cannot be followed, so trust none of it
            if str(address) not in self.trusted_proxies:
                return str(address)
        return peer
