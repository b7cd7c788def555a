"""The booking store interface: what the dispatcher needs from a calendar, nothing about SQLite.

SQLite (sqlite_store.py) is the embedded default; CalDAV (caldav_store.py) keeps bookings in the calendars people
already use. Every write carries an idempotency key: replaying a key returns the first outcome and changes nothing.
A store that cannot be reached raises StoreUnavailable, having written nothing that stays: the same command can
simply be sent again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, TypeVar

__all__ = ["Booking", "Booked", "Conflict", "NotFound", "BookingStore", "Outcome", "StoreUnavailable", "OTHER_APP",
           "check_aware", "once_per_key"]

OTHER_APP = "calendar"  # the owner of a booking another app made (a CalDAV event): it blocks time, no one may change it


def check_aware(*moments: datetime) -> None:
    """Refuse (ValueError) a time without a zone: every store compares instants, and a naive time is none."""
    if any(moment.tzinfo is None for moment in moments):
        raise ValueError("booking times must be timezone-aware")


OutcomeT = TypeVar("OutcomeT")


def once_per_key(replayed: Callable[[], Booked | None], command: Callable[[], OutcomeT]) -> Booked | OutcomeT:
    """Every write of every store begins here: the outcome its idempotency key already had (`replayed()`, marked
    replayed), else the command done now."""
    earlier = replayed()
    return earlier if earlier is not None else command()


@dataclass(frozen=True)
class Booking:
    id: str
    room: str  # directory key, lower case
    start: datetime  # aware
    end: datetime  # aware, after start
    title: str | None = None
    attendees: tuple[str, ...] = ()
    conversation: str | None = None
    owner: str | None = None  # who made it ("token:NAME", "conversation:ID"): only they may cancel or move it


@dataclass(frozen=True)
class Booked:
    booking: Booking
    replayed: bool = False  # True: this idempotency key had already run; nothing new was written


@dataclass(frozen=True)
class Conflict:
    room: str
    start: datetime
    end: datetime
    clashes: tuple[Booking, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class NotFound:
    booking_id: str


Outcome = Booked | Conflict | NotFound


class StoreUnavailable(Exception):
    """The store could not be reached (or refused our credentials): nothing was booked, the command may be retried."""


class BookingStore(Protocol):
    def book(self, booking: Booking, idempotency_key: str) -> Booked | Conflict: ...

    def cancel(self, booking_id: str, idempotency_key: str) -> Booked | NotFound:
        """Booked(the cancelled booking) or NotFound."""
        ...

    def reschedule(self, booking_id: str, start: datetime, end: datetime, idempotency_key: str, *,
                   title: str | None = None, attendees: Sequence[str] | None = None) -> Outcome:
        """Move the booking; a title or attendees given replace the booking's (an amendment that adds them)."""
        ...

    def replace(self, booking_id: str, booking: Booking, idempotency_key: str) -> Outcome:
        """Cancel `booking_id` and book `booking` in one transaction (a first guess undone as the right booking
        is made: both or neither); the cancelled booking does not conflict with its replacement."""
        ...

    def bookings(self, start: datetime, end: datetime, room: str | None = None) -> Sequence[Booking]:
        """Active bookings overlapping [start, end), by start time."""
        ...

    def get(self, booking_id: str) -> Booking | None: ...

    def problem(self) -> str | None:
        """What keeps the store from serving now (for /healthz), or None when it serves."""
        ...

    def close(self) -> None: ...
