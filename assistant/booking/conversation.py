"""What a conversation holds between turns: the open request, what "yes" books, what "undo" cancels, and what a
reopened turn starts again from."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from assistant.domain import Intent, Slot

__all__ = ["Conversation", "Pending", "Proposal", "Reading", "Reopen"]


@dataclass(frozen=True)
class Reopen:
    """The speaker went on right after the last turn ended: this turn's words are the whole request heard again
    (that turn's words and the new ones). `text`, `intent`, `slots`, `confidence`: the new words alone, read by
    the model on their own (a request of their own, a correction, or a part of the one they continue)."""

    text: str
    intent: Intent = Intent.OUT_OF_SCOPE
    slots: tuple[tuple[Slot, str], ...] = ()
    confidence: float = 0.0


@dataclass(frozen=True)
class Proposal:
    """What "yes" books: a room and a time, as the slot values a request says them."""

    room: str
    date: str  # ISO date
    start_time: str  # HH:MM
    end_time: str

    @classmethod
    def of(cls, room: str, start: datetime, end: datetime) -> Proposal:
        return cls(room, start.date().isoformat(), start.strftime("%H:%M"), end.strftime("%H:%M"))

    def slots(self) -> list[tuple[Slot, str]]:
        return [(Slot.ROOM, self.room), (Slot.DATE, self.date), (Slot.START_TIME, self.start_time),
                (Slot.END_TIME, self.end_time)]


@dataclass(frozen=True)
class Reading:
    """A turn's request as the dialogue hands it to the normalizer."""

    intent: Intent
    slots: tuple[tuple[Slot, str], ...]
    carried: dict[Slot, str]  # the open request's slots this turn continues
    continuing: bool  # it answers or fills the open request
    any_room: bool  # the room may be left to us


@dataclass(frozen=True)
class Pending:
    """What a conversation waits for, as it was before a turn: a reopened turn starts again from here."""

    intent: Intent | None
    slots: dict[Slot, str]
    missing: tuple[str, ...]
    any_room: bool
    proposal: Proposal | None
    last_booking: str | None


@dataclass
class Conversation:
    intent: Intent | None = None  # the request waiting for a clarification
    slots: dict[Slot, str] = field(default_factory=dict)
    missing: tuple[str, ...] = ()
    any_room: bool = False  # the open request left the room to us ("a room for 6"): a fragment keeps that
    proposal: Proposal | None = None  # what "yes" books
    last_booking: str | None = None  # what "undo" cancels
    just_booked: str | None = None  # the booking the last turn made or amended (what a reopened turn replaces)
    changed_other: bool = False  # the last turn cancelled or moved a booking (a reopened turn cannot replace that)
    last_intent: Intent | None = None  # what the last turn asked for: new words after it that ask for another thing
                                    # are a request of their own
    before: Pending | None = None  # the pending state before the last turn (what a reopened turn starts from)
    last_seen: datetime | None = None  # the last turn's reference time
    active: float = 0.0  # time.monotonic() of the last turn: what eviction goes by (reference times may be fixed)
    turns: int = 0
