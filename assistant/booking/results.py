"""What a request comes to: a command, a clarifying question, an answer, or a rejection.

`to_dict()` is the wire form, described by configs/result.schema.json and shared by `assistant parse` and the
voice server's `result` event.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, TypedDict

from assistant.booking.interval import Interval
from assistant.booking.store import Booking
from assistant.domain import Intent, Slot

__all__ = ["Command", "Clarify", "Answer", "AnswerKind", "AnswerData", "Asked", "Confirm", "Rejected", "Result",
           "booking_dict", "Check", "Doubt", "Offer"]


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def booking_dict(booking: Booking) -> dict[str, Any]:
    return {"booking_id": booking.id, "room": booking.room, "start": _iso(booking.start), "end": _iso(booking.end),
            "title": booking.title, "attendees": list(booking.attendees)}


class Confirm(StrEnum):
    """What a question asks for besides a slot's value."""

    CONFIRMATION = "confirmation"  # a yes or a no to what it proposes


Asked = Slot | Confirm  # what a clarifying question asks for (the wire's `missing`)


class AnswerKind(StrEnum):
    AVAILABILITY = "availability"  # is a room free, which rooms are free, what is on a day
    BOOKINGS = "bookings"  # the bookings asked about (none found, not yours)
    CONFIRMATION = "confirmation"  # a "yes" with nothing proposed


# What an answer says besides its sentence, for programs (configs/result.schema.json); each kind fills its part.
AnswerData = TypedDict("AnswerData", {
    "bookings": list[dict[str, Any]], "executable": bool, "reason": str, "day": str, "room": str | None,
    "start": str, "end": str, "free_rooms": list[str], "available": bool, "fits": bool, "from": str, "to": str,
}, total=False)


class Check(StrEnum):
    """Which of the guard's checks a reading failed (assistant/booking/guard.py): the wire's `doubt.check`."""

    NOT_A_TIME = "not_a_time"  # a time slot's words are no time ("at the top")
    SPLIT = "split"  # two values for one slot
    UNREAD = "unread"  # words a slot was tagged on that no reader reads ("on Monday yet")
    ORDER = "order"  # the end is not after the start
    TOO_LONG = "too_long"  # longer than a booking may last
    MIDNIGHT = "midnight"  # runs past midnight
    PAST = "past"  # already passed
    OUT_OF_RANGE = "out_of_range"  # a day outside the years bookings are kept for
    TEEN = "teen"  # "fifteen minutes" that may have been "fifty"
    ROOM = "room"  # a room found only by sound or a distant spelling
    ODD_MINUTES = "odd_minutes"  # a spoken time nobody says ("1034": "ten thirty" and a stray "for")


@dataclass(frozen=True)
class Doubt:
    """A reading the guard will not act on without asking."""

    check: Check
    slots: tuple[Slot, ...]  # the slots in doubt: the person is asked for these again
    said: str  # the words in doubt
    question: str  # names the doubtful part; ends with what to say next
    suggestion: Interval | None = None  # the reading offered ("did you mean 3:15 pm?"), when there is one

    def to_dict(self) -> dict[str, str | list[str]]:
        return {"check": self.check, "slots": list(self.slots), "said": self.said}


@dataclass(frozen=True)
class Offer:
    """A room at a time that a question offers ("Fuji is free then"); "yes" takes the first one offered."""

    room: str  # the room's key
    start: datetime
    end: datetime

    def to_dict(self) -> dict[str, Any]:
        return {"room": self.room, "start": self.start.isoformat(), "end": self.end.isoformat()}


@dataclass(frozen=True)
class Command:
    action: Intent  # book_meeting | cancel_meeting | reschedule_meeting
    room: str
    start: datetime
    end: datetime
    executable: bool
    committed: bool = False
    booking_id: str | None = None
    title: str | None = None
    attendees: tuple[str, ...] = ()
    new_start: datetime | None = None  # reschedule_meeting: where the meeting goes
    new_end: datetime | None = None
    reason: str | None = None  # why not executable
    assumptions: tuple[str, ...] = ()
    idempotency_key: str | None = None
    spans: tuple[tuple[Slot, str], ...] = ()  # (slot, words) the command was built from
    amends: str | None = None  # the booking this command replaces: the speaker went on after the turn that made it

    def to_dict(self) -> dict[str, Any]:
        command: dict[str, Any] = {
            "action": self.action, "room": self.room, "start": _iso(self.start), "end": _iso(self.end),
            "title": self.title, "attendees": list(self.attendees), "booking_id": self.booking_id,
            "assumptions": list(self.assumptions), "idempotency_key": self.idempotency_key,
            "spans": [{"slot": slot, "text": text} for slot, text in self.spans],
        }
        if self.action == Intent.RESCHEDULE_MEETING:
            command.update(new_start=_iso(self.new_start), new_end=_iso(self.new_end))
        if self.amends is not None:
            command["amends"] = self.amends
        out: dict[str, Any] = {"type": "command", "command": command, "executable": self.executable,
                               "committed": self.committed}
        if self.reason is not None:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True)
class Clarify:
    missing: tuple[Asked, ...]
    question: str
    # concrete alternatives: rooms at times (free rooms, the next free slot), or the bookings a request may mean
    options: tuple[Offer | Booking, ...] = ()
    doubt: Doubt | None = None  # the guard's check that failed
    amends: str | None = None  # the booking this question withdrew: the request that made it went on, unbookable

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "clarify", "missing": list(self.missing), "question": self.question,
               "options": [o.to_dict() if isinstance(o, Offer) else booking_dict(o) for o in self.options]}
        if self.doubt is not None:
            out["doubt"] = self.doubt.to_dict()
        if self.amends is not None:
            out["amends"] = self.amends
        return out


@dataclass(frozen=True)
class Answer:
    kind: AnswerKind
    text: str  # one sentence for a person
    data: AnswerData = field(default_factory=lambda: AnswerData())

    def to_dict(self) -> dict[str, Any]:
        return {"type": "answer", "kind": self.kind, "text": self.text, **self.data}


@dataclass(frozen=True)
class Rejected:
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"type": "rejected", "reason": self.reason}


Result = Command | Clarify | Answer | Rejected
