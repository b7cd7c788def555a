"""The per-client limits of [limits] that need state: connections per address, and audio admitted no faster
than a multiple of real time. (Timeouts live in the connection handler; queued utterances in the session.)"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from assistant.config import LimitsSettings

__all__ = ["ConnectionCounts", "AudioAdmission"]


class ConnectionCounts:
    """Open websocket connections, in all and per client address (counted from the accepted handshake request
    until the connection is closed)."""

    def __init__(self, limits: LimitsSettings) -> None:
        self.limits = limits
        self.total = 0
        self.by_address: Counter[str] = Counter()

    def refuse(self, address: str) -> str | None:
        """Why one more connection from `address` is refused, or None (then it is counted: call `release`)."""
        if self.total >= self.limits.max_connections:
            return f"the server has {self.total} connections, its limit"
        if self.by_address[address] >= self.limits.max_connections_per_address:
            return f"{address} has {self.by_address[address]} connections, the limit per address"
        self.total += 1
        self.by_address[address] += 1
        return None

    def release(self, address: str) -> None:
        self.total -= 1
        self.by_address[address] -= 1
        if self.by_address[address] <= 0:
            del self.by_address[address]


@dataclass
class AudioAdmission:
    """A token bucket in audio time: by `elapsed_s` after the session began, at most burst_s + speed * elapsed_s
    seconds of audio may have arrived. Real-time clients never come near it; a client that sends an hour of
    audio in seconds does, and is stopped before its audio turns into minutes of recognizer work."""

    speed: float
    burst_s: float

    def refused(self, audio_s: float, elapsed_s: float) -> bool:
        return audio_s > self.burst_s + self.speed * elapsed_s
