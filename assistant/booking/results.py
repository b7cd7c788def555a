"""What a request comes to: a command, a clarifying question, an answer, or a rejection.

`to_dict()` is the wire form, described by configs/result.schema.json and shared by `assistant parse` and the
voice server's `result` event.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from assistant.booking.store import Booking

__all__ = ["Command", "Clarify", "Answer", "Rejected", "Result", "booking_dict"]


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def booking_dict(booking: Booking) -> dict[str, Any]:
    return {"booking_id": booking.id, "room": booking.room, "start": _iso(booking.start), "end": _iso(booking.end),
            "title": booking.title, "attendees": list(booking.attendees)}


@dataclass(frozen=True)
class Command:
    action: str  # book_meeting | cancel_meeting | reschedule_meeting
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
    spans: tuple[tuple[str, str], ...] = ()  # (slot, words) the command was built from
    amends: str | None = None  # the booking this command replaces: the speaker went on after the turn that made it

    def to_dict(self) -> dict[str, Any]:
        command: dict[str, Any] = {
            "action": self.action, "room": self.room, "start": _iso(self.start), "end": _iso(self.end),
            "title": self.title, "attendees": list(self.attendees), "booking_id": self.booking_id,
            "assumptions": list(self.assumptions), "idempotency_key": self.idempotency_key,
            "spans": [{"slot": slot, "text": text} for slot, text in self.spans],
        }
        if self.action == "reschedule_meeting":
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
    missing: tuple[str, ...]
    question: str
    options: tuple[dict[str, Any], ...] = ()  # concrete alternatives (free rooms, the next free slot)
    doubt: dict[str, Any] | None = None  # the guard's check that failed: {"check", "slots", "said"}
    amends: str | None = None  # the booking this question withdrew: the request that made it went on, unbookable

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "clarify", "missing": list(self.missing), "question": self.question,
               "options": list(self.options)}
        if self.doubt is not None:
            out["doubt"] = self.doubt
        if self.amends is not None:
            out["amends"] = self.amends
        return out


@dataclass(frozen=True)
class Answer:
    kind: str  # availability | bookings | undo
    text: str  # one sentence for a person
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "answer", "kind": self.kind, "text": self.text, **self.data}


@dataclass(frozen=True)
class Rejected:
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"type": "rejected", "reason": self.reason}


Result = Command | Clarify | Answer | Rejected
