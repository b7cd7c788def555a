"""The per-client limits of [limits] that need state. A client is an identity (`client_key`): the token's name on
a server with tokens, else the remote address. Each has its own share (`ClientShare`): its connections, its
utterances waiting for the recognizer and the audio all its sessions send, so that opening more sessions buys
no more of the server. Handshakes that carry no token wait apart, in a small pool of their own, until `start`
authenticates them; wrong tokens from one address make it wait (`WrongTokens`). (Timeouts live in the connection
handler; a session's own queued utterances in the session.)"""

from __future__ import annotations

import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from assistant.config import LimitsSettings

__all__ = ["AudioAdmission", "AudioBucket", "ClientShare", "Connections", "WrongTokens", "client_key"]


def client_key(identity: str, address: str) -> str:
    """Whom a connection's work is counted against: its token's identity, else its address."""
    return f"token:{identity}" if identity else f"address:{address}"


@dataclass
class AudioAdmission:
    """A token bucket in audio time: by `elapsed_s` after the session began, at most burst_s + speed * elapsed_s
    seconds of audio may have arrived. Real-time clients never come near it; a client that sends an hour of
    audio in seconds does, and is stopped before its audio turns into minutes of recognizer work."""

    speed: float
    burst_s: float

    def refused(self, audio_s: float, elapsed_s: float) -> bool:
        return audio_s > self.burst_s + self.speed * elapsed_s


@dataclass
class AudioBucket:
    """A leaky bucket of audio seconds for all of one client's sessions, however many come and go: it drains at
    `speed` seconds of audio a second and holds at most `burst_s`."""

    speed: float
    burst_s: float
    clock: Callable[[], float] = time.monotonic
    level: float = 0.0
    _at: float = field(default=-1.0, repr=False)

    def refused(self, audio_s: float) -> bool:
        """Admit `audio_s` more seconds of audio (False), or refuse them without counting them (True)."""
        now = self.clock()
        if self._at >= 0:
            self.level = max(0.0, self.level - self.speed * (now - self._at))
        self._at = now
        if self.level + audio_s > self.burst_s:
            return True
        self.level += audio_s
        return False


@dataclass
class ClientShare:
    """What one client identity holds now: connections, utterances waiting for the recognizer, its audio."""

    key: str
    audio: AudioBucket
    connections: int = 0
    waiting: int = 0

    @classmethod
    def of(cls, key: str, limits: LimitsSettings) -> ClientShare:
        """A new client's share, holding nothing yet."""
        return cls(key, AudioBucket(limits.client_audio_speed, limits.client_audio_burst_s))


class Connections:
    """Open websocket connections: authenticated ones in all and per client, the ones still waiting to
    authenticate (a token server, no token in the handshake) apart, in all and per address."""

    def __init__(self, limits: LimitsSettings) -> None:
        self.limits = limits
        self.total = 0  # authenticated
        self.clients: dict[str, ClientShare] = {}
        self.unauthenticated: Counter[str] = Counter()  # by address

    def admit(self, key: str) -> ClientShare | str:
        """The client's share, counting one more connection of it (call `release`), or why it is refused."""
        share = self.clients.get(key)
        if self.total >= self.limits.max_connections:
            return f"the server has {self.total} connections, its limit"
        if share is not None and share.connections >= self.limits.max_connections_per_client:
            return f"{key} has {share.connections} connections, the limit per client"
        if share is None:
            share = self.clients[key] = ClientShare.of(key, self.limits)
        share.connections += 1
        self.total += 1
        return share

    def release(self, share: ClientShare) -> None:
        share.connections -= 1
        self.total -= 1
        if share.connections <= 0:  # its sessions unqueued their utterances when they closed
            self.clients.pop(share.key, None)

    def admit_unauthenticated(self, address: str) -> str | None:
        """Why one more connection without a token from `address` is refused, or None (then call
        `release_unauthenticated` when it authenticates or closes)."""
        waiting = sum(self.unauthenticated.values())
        if waiting >= self.limits.max_unauthenticated:
            return f"{waiting} connections are waiting to authenticate, the limit"
        if self.unauthenticated[address] >= self.limits.max_unauthenticated_per_address:
            return f"{address} has {self.unauthenticated[address]} connections waiting to authenticate, the limit"
        self.unauthenticated[address] += 1
        return None

    def release_unauthenticated(self, address: str) -> None:
        self.unauthenticated[address] -= 1
        if self.unauthenticated[address] <= 0:
            del self.unauthenticated[address]


@dataclass
class _Tries:
    wrong: int = 0
    last_wrong_at: float = 0.0
    known: set[str] = field(default_factory=set)  # identities whose right token came from this address


class WrongTokens:
    """Wrong tokens per address: after `wrong_tokens_before_backoff` of them the address waits 1 s before its next
    new token is looked at, then 2, 4, ... up to `max_backoff_s`. While it waits, a token that is not known there
    is refused (HTTP 429) whether it is right or wrong, so a guesser learns nothing faster than the wait allows.
    A token whose identity already authenticated from that address is still taken: clients behind the same address
    as a guesser (a NAT, every local process on loopback) keep working. The count fades after twice the longest
    wait without a wrong token; at most `MAX_ADDRESSES` addresses are remembered (the least recently wrong go)."""

    MAX_ADDRESSES = 10_000

    def __init__(self, limits: LimitsSettings, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits, self.clock = limits, clock
        self._by_address: OrderedDict[str, _Tries] = OrderedDict()

    def _tries(self, address: str) -> _Tries:
        tries = self._by_address.get(address)
        if tries is None:
            tries = self._by_address[address] = _Tries()
            while len(self._by_address) > self.MAX_ADDRESSES:
                self._by_address.popitem(last=False)
        elif tries.wrong and self.clock() - tries.last_wrong_at > 2 * self.limits.max_backoff_s:
            tries.wrong = 0
        return tries

    def retry_after(self, address: str, identity: str | None) -> float:
        """Seconds before `address` may have a token looked at, for a token naming `identity` (None: a wrong
        one); 0 when it may now."""
        tries = self._tries(address)
        over = tries.wrong - self.limits.wrong_tokens_before_backoff
        if over < 0 or (identity is not None and identity in tries.known):
            return 0.0
        return max(0.0, tries.last_wrong_at + min(self.limits.max_backoff_s, 2.0**over) - self.clock())

    def wrong(self, address: str) -> None:
        tries = self._tries(address)
        tries.wrong += 1
        tries.last_wrong_at = self.clock()
        self._by_address.move_to_end(address)

    def right(self, address: str, identity: str) -> None:
        self._tries(address).known.add(identity)
