"""Dialogue state per conversation: fill a clarification, answer yes/no to a proposal, undo the last booking.

A state machine with no model in it: it takes the NLU's intent and slot texts for each turn and decides what
the dispatcher sees. State lives per conversation id and expires after an idle time.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from assistant.booking.clock import parse_clock
from assistant.booking.dates import parse_date
from assistant.booking.dispatcher import Dispatcher
from assistant.booking.durations import parse_duration
from assistant.booking.interval import TimePolicy
from assistant.booking.request import normalize_request
from assistant.booking.results import Answer, Clarify, Command, Rejected, Result
from assistant.booking.rooms import RoomDirectory

__all__ = ["Dialogue", "Conversation"]

_YES = re.compile(r"^(yes|yeah|yep|yup|sure|ok|okay|please do|do it|go ahead|that works|sounds good)\b", re.I)
_NO = re.compile(r"^(no|nope|nah|never ?mind|don't|do not|forget it)\b", re.I)
_UNDO = re.compile(r"^(undo|undo that|cancel that|scratch that|revert( that)?)\W*$", re.I)
_ANSWER_FILLER = re.compile(r"^(uh|um|well|ok|okay|so|make it|how about|let's say|lets say|maybe|say|at|on|in|"
                            r"for|the|around|from)\b[\s,]*|[\s,.!?]*(please|thanks|thank you)?[\s.!?]*$", re.I)


def read_answer(text: str, missing: Sequence[str], rooms: RoomDirectory, today: datetime) -> list[tuple[str, str]]:
    """Slots from a short reply to a clarifying question ("at 3 pm", "Friday", "Denali"), read by the value
    parsers for exactly the missing kinds; used when the NLU finds no slot in a reply (fragments are not
    requests, and the model is trained on requests)."""
    core = text.strip()
    for _ in range(3):
        core = _ANSWER_FILLER.sub("", core).strip()
    if not core:
        return []
    readers = {
        "start_time": lambda t: parse_clock(t) is not None,
        "date": lambda t: parse_date(t, today.date()) is not None,
        "room": lambda t: rooms.match(t) is not None,
        "duration": lambda t: parse_duration(t) is not None,
    }
    for name in missing:
        reader = readers.get("start_time" if name == "new_time" else name)
        if reader is not None and reader(core):
            return [(name, core)]
    return []


@dataclass
class Conversation:
    intent: str | None = None  # the request waiting for a clarification
    slots: dict[str, str] = field(default_factory=dict)
    missing: tuple[str, ...] = ()
    proposal: dict[str, str] | None = None  # what "yes" books: {"room", "start", "end"}
    last_booking: str | None = None  # what "undo" cancels
    last_seen: datetime | None = None
    turns: int = 0


@dataclass
class Dialogue:
    dispatcher: Dispatcher
    rooms: RoomDirectory
    policy: TimePolicy = field(default_factory=TimePolicy)
    idle_timeout: timedelta = timedelta(minutes=5)
    conversations: dict[str, Conversation] = field(default_factory=dict)

    def _state(self, conversation_id: str, now: datetime) -> Conversation:
        state = self.conversations.get(conversation_id)
        if state is None or (state.last_seen is not None and now - state.last_seen > self.idle_timeout):
            state = Conversation()  # a new conversation: nothing pending, nothing to undo
            self.conversations[conversation_id] = state
        state.last_seen = now
        state.turns += 1
        return state

    @staticmethod
    def _key(conversation_id: str, turn: int, text: str) -> str:
        """Same conversation, turn and words -> same key, so a retried turn never books twice."""
        return hashlib.sha256(f"{conversation_id}\x00{turn}\x00{text}".encode()).hexdigest()[:24]

    def expects_answer(self, conversation_id: str) -> bool:
        """True while a clarifying question or a proposal of this conversation waits for its answer."""
        state = self.conversations.get(conversation_id)
        return state is not None and (state.intent is not None or state.proposal is not None)

    def turn(self, conversation_id: str, text: str, intent: str, slots: Sequence[tuple[str, str]], now: datetime,
             *, commit: bool) -> Result:
        state = self._state(conversation_id, now)
        key = self._key(conversation_id, state.turns, text)
        stripped = text.strip()
        if _UNDO.match(stripped):
            return self._undo(state, now, commit, key)
        if state.proposal is not None and (_YES.match(stripped) or _NO.match(stripped)):
            proposal, state.proposal = state.proposal, None
            if _NO.match(stripped):
                state.intent, state.slots = None, {}
                return Answer("confirmation", "OK, nothing booked.")
            slots = [("room", proposal["room"]), ("date", proposal["date"]), ("start_time", proposal["start_time"]),
                     ("end_time", proposal["end_time"])]
            intent = state.intent or "book_meeting"
            state.slots = {k: v for k, v in state.slots.items() if k in ("title", "people_count")}
        if state.intent is not None and not any(name in state.missing for name, _ in slots):
            answer = read_answer(stripped, state.missing, self.rooms, now)
            if answer:
                intent, slots = state.intent, answer
        carried: dict[str, str] = {}
        continuing = state.intent is not None and (
            intent in (state.intent, "out_of_scope") or {name for name, _ in slots} <= set(state.missing) | {"date"}
        ) and any(name in state.missing or name == "date" for name, _ in slots)
        if continuing:
            intent, carried = state.intent or intent, state.slots
        request = normalize_request(intent, slots, now, self.rooms, self.policy, carried)
        result = self.dispatcher.handle(request, now, commit=commit, key=key, conversation=conversation_id)
        self._remember(state, intent, slots, carried, result)
        return result

    def _remember(self, state: Conversation, intent: str, slots: Sequence[tuple[str, str]], carried: dict[str, str],
                  result: Result) -> None:
        merged = {**carried, **dict(slots)}
        if isinstance(result, Clarify):
            state.intent, state.slots, state.missing = intent, merged, result.missing
            state.proposal = None
            if result.options:  # a conflict: "yes" takes the first alternative
                first = result.options[0]
                start, end = datetime.fromisoformat(first["start"]), datetime.fromisoformat(first["end"])
                state.proposal = {"room": first["room"], "date": start.date().isoformat(),
                                  "start_time": start.strftime("%H:%M"), "end_time": end.strftime("%H:%M")}
            return
        state.intent, state.slots, state.missing, state.proposal = None, {}, (), None
        if isinstance(result, Command) and result.committed and result.action == "book_meeting":
            state.last_booking = result.booking_id

    def _undo(self, state: Conversation, now: datetime, commit: bool, key: str) -> Result:
        state.intent, state.slots, state.missing, state.proposal = None, {}, (), None
        booking = self.dispatcher.store.get(state.last_booking) if state.last_booking else None
        if booking is None:
            return Rejected("there is no booking of this conversation to undo")
        command = Command("cancel_meeting", booking.room, booking.start, booking.end, executable=True,
                          booking_id=booking.id, title=booking.title, attendees=booking.attendees,
                          idempotency_key=key)
        if not commit:
            return command
        self.dispatcher.store.cancel(booking.id, key)
        state.last_booking = None
        return replace(command, committed=True)
