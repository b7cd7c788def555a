"""Dialogue state per conversation: fill a clarification, answer yes/no to a proposal, undo the last booking,
and take a request back up when the speaker goes on after a pause (`Reopen`).

A state machine with no model in it: it takes the NLU's intent and slot texts for each turn and decides what
the dispatcher sees. State lives per conversation id and expires after an idle time; expired conversations are
dropped (the server would otherwise keep one per connection ever made), and at most `max_conversations` are kept.
"""

from __future__ import annotations

import copy
import hashlib
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from assistant.booking.answers import CORRECTION, CORRECTION_INSIDE, NO, UNDO, YES, is_fragment, read_answer
from assistant.booking.conversation import Conversation, Pending, Proposal, Reading, Reopen
from assistant.booking.dispatcher import Dispatcher
from assistant.booking.interval import TimePolicy
from assistant.booking.replies import language_of, say
from assistant.booking.request import MeetingRequest, leaves_room_to_us, normalize_request
from assistant.booking.results import Answer, AnswerKind, Clarify, Command, Confirm, Offer, Rejected, Result
from assistant.booking.rooms import RoomDirectory
from assistant.booking.store import Booking
from assistant.domain import Intent, Slot
from assistant.language.profile import Language

__all__ = ["Dialogue", "Conversation", "Reopen", "read_answer"]

_MOVED = {Slot.START_TIME: Slot.NEW_TIME, Slot.DATE: Slot.NEW_DATE}  # a fragment's slots, read for a pending move
# what a correction after a turn may change
_AMENDABLE = frozenset({Slot.START_TIME, Slot.END_TIME, Slot.DURATION, Slot.DATE})
_NEW_REQUEST_CONFIDENCE = 0.8  # new words alone this sure of a request (another intent, a room) are one of their own


@dataclass
class Dialogue:
    dispatcher: Dispatcher
    rooms: RoomDirectory
    policy: TimePolicy = field(default_factory=TimePolicy)
    idle_timeout: timedelta = timedelta(minutes=5)
    conversations: dict[str, Conversation] = field(default_factory=dict)  # least recently active first
    max_conversations: int = 10_000

    def _state(self, conversation_id: str, now: datetime) -> Conversation:
        state = self.conversations.pop(conversation_id, None)  # put back last: the most recently active
        if state is None or (state.last_seen is not None and now - state.last_seen > self.idle_timeout):
            state = Conversation()  # a new conversation: nothing pending, nothing to undo
        self._evict()
        self.conversations[conversation_id] = state
        state.last_seen, state.active = now, time.monotonic()
        state.turns += 1
        return state

    def _evict(self) -> None:
        """Drop conversations idle longer than the timeout (the oldest first), and any beyond the cap."""
        idle_since = time.monotonic() - self.idle_timeout.total_seconds()
        while self.conversations:
            oldest_id, oldest = next(iter(self.conversations.items()))
            if oldest.active >= idle_since and len(self.conversations) < self.max_conversations:
                return
            del self.conversations[oldest_id]

    @staticmethod
    def _key(conversation_id: str, turn: int, text: str) -> str:
        """Same conversation, turn and words -> same key, so a retried turn never books twice."""
        return hashlib.sha256(f"{conversation_id}\x00{turn}\x00{text}".encode()).hexdigest()[:24]

    def expects_answer(self, conversation_id: str) -> bool:
        """True while a clarifying question or a proposal of this conversation waits for its answer."""
        state = self.conversations.get(conversation_id)
        return state is not None and (state.intent is not None or state.proposal is not None)

    @contextmanager
    def snapshot(self, conversation_id: str) -> Iterator[None]:
        """Turns inside leave no trace on the conversation: a reading of speech still going on is a dry run of
        the dialogue as well as of the store."""
        saved = copy.deepcopy(self.conversations.get(conversation_id))
        try:
            yield
        finally:
            if saved is None:
                self.conversations.pop(conversation_id, None)
            else:
                self.conversations[conversation_id] = saved

    def turn(self, conversation_id: str, text: str, intent: Intent, slots: Sequence[tuple[Slot, str]], now: datetime,
             *, commit: bool, unsure: bool = False, owner: str | None = None, reopen: Reopen | None = None,
             spoken: bool = False) -> Result:
        """One turn. `unsure`: the intent is the model's guess below its confidence threshold; what it would
        book is proposed, not booked. `reopen`: the speaker went on right after the last turn ended, and `text`
        (with its intent and slots) is the whole request heard again (`reopens_request` said so): it replaces what
        the last turn did (the booking it made is moved, stretched or given more, in one store transaction; the
        question it asked is answered), or, when the new words alone correct that booking ("actually, make it
        three"), they change it. A turn of its own that corrects the booking the last turn made ("no, Denali",
        said over or after the reply that confirmed it) changes that booking too.
        `owner`: who speaks (recorded on bookings; cancel, move and undo act on theirs only). `spoken`: heard,
        not typed (the guard asks about times nobody says, "at 1034")."""
        state = self._state(conversation_id, now)
        key = self._key(conversation_id, state.turns, text)
        just_booked, state.just_booked = state.just_booked, None
        state.changed_other = False
        if reopen is not None:  # the caller asked `reopens_request` first: this turn takes the request back up
            if just_booked is not None and CORRECTION.search(reopen.text):
                amended = self._amend(state, just_booked, reopen.text, reopen.slots, now, commit, key)
                if amended is not None:
                    return amended
            # the whole request again: from where the conversation stood before the last turn
            self._restore(state)
            replacing = self.dispatcher.store.get(just_booked) if just_booked else None
            return self._respond(state, conversation_id, text.strip(), intent, self._corrected(text, slots, now),
                                 now, commit, unsure, owner, key, replacing, spoken)
        if just_booked is not None and CORRECTION.search(text):  # "no, Denali" after "Booked Everest ...": that
            amended = self._amend(state, just_booked, text, slots, now, commit, key)  # booking, changed
            if amended is not None:
                return amended
        state.before = Pending(state.intent, dict(state.slots), state.missing, state.any_room,
                                state.proposal, state.last_booking)
        return self._respond(state, conversation_id, text.strip(), intent, self._corrected(text, slots, now), now,
                             commit, unsure, owner, key, spoken=spoken)

    def _corrected(self, text: str, slots: Sequence[tuple[Slot, str]], now: datetime) -> Sequence[tuple[Slot, str]]:
        """A correction inside the utterance ("book Olympus tomorrow at two. Actually, make it three", "book
        Olympus, no, Denali, tomorrow at nine") replaces the values it names: the request is read as the words
        before it with the correction's times (or room) over them, as it would be had the correction come after a
        pause. Anything else: the slots as they are."""
        found = CORRECTION_INSIDE.search(text)
        if found is None or not slots:
            return slots
        head, tail = text[: found.start()], text[found.end() :]
        correctable = _AMENDABLE | {Slot.ROOM}  # "Olympus, no, Denali"
        said = read_answer(tail, (), self.rooms, now)
        if not said or any(name not in correctable for name, _ in said):
            return slots
        tagged = [(name, value) for name, value in slots if name in correctable and value in tail and value not in head]
        said = tagged + [(name, value) for name, value in said if name not in {n for n, _ in tagged}]
        kinds = {name for name, _ in said}
        if kinds & {Slot.START_TIME, Slot.DATE} and not kinds & {Slot.END_TIME, Slot.DURATION}:
            kinds |= {Slot.END_TIME}  # a new start keeps a length said, never an end said for the old start
        kept = [(name, value) for name, value in slots if value in head and name not in kinds]
        return kept + said

    def reopens_request(self, conversation_id: str, reopen: Reopen, intent: Intent) -> bool:
        """Whether a turn that continues the last one (`reopen`: its new words alone; `intent`: the whole
        request's) takes that request back up, or is a request of its own, to be acted on as the new words alone:
        they confidently ask for something else or name a room ("Book Fuji at two" [pause] "is Denali free at
        three?", "book Everest on Friday too"); or the last turn cancelled or moved a booking (not replaceable), or
        booked one and the whole request is no booking. A correction of the booking just made ("actually, make it
        three") always takes it back up."""
        state = self.conversations.get(conversation_id)
        if state is None:
            return False  # nothing to take up (a new or expired conversation): the whole request is the turn
        if state.just_booked is not None and CORRECTION.search(reopen.text):
            return True
        if state.changed_other or (state.just_booked is not None and intent != Intent.BOOK_MEETING):
            return False
        if reopen.intent == Intent.OUT_OF_SCOPE or reopen.confidence < _NEW_REQUEST_CONFIDENCE or \
                not reopen.slots or is_fragment(reopen.text, reopen.slots):
            return True
        return reopen.intent == state.last_intent and not any(
            name == Slot.ROOM and self.rooms.match(value) is not None for name, value in reopen.slots)

    @staticmethod
    def _restore(state: Conversation) -> None:
        before = state.before
        if before is None:
            state.intent, state.slots, state.missing, state.any_room, state.proposal = None, {}, (), False, None
            return
        state.intent, state.slots, state.missing, state.any_room = before.intent, dict(before.slots), \
            before.missing, before.any_room
        state.proposal, state.last_booking = before.proposal, before.last_booking

    def _respond(self, state: Conversation, conversation_id: str, stripped: str, intent: Intent,
                 slots: Sequence[tuple[Slot, str]], now: datetime, commit: bool, unsure: bool, owner: str | None,
                 key: str, replacing: Booking | None = None, spoken: bool = False) -> Result:
        """The turn's words against the conversation's open question or proposal, then the dispatcher.
        `replacing`: the booking the whole request replaces (it made it in part)."""
        if UNDO.match(stripped):
            return self._undo(state, now, commit, key, owner, language_of(stripped))
        if state.proposal is not None and (YES.match(stripped) or NO.match(stripped)):
            proposal, state.proposal = state.proposal, None
            if NO.match(stripped):
                state.intent, state.slots = None, {}
                return Answer(AnswerKind.CONFIRMATION, say(language_of(stripped), "nothing_booked"))
            intent, slots = self._accept(state, proposal)
        reading = self._against_pending(state, stripped, intent, slots, now)
        request = normalize_request(reading.intent, reading.slots, now, self.rooms, self.policy, reading.carried,
                                    text=stripped, any_room=reading.any_room,
                                    asked=state.missing if reading.continuing else (), spoken=spoken)
        result = self._dispatch(request, conversation_id, now, commit, unsure, owner, key, replacing)
        self._remember(state, reading.intent, reading.slots, reading.carried, result,
                       unknown_room=request.room_said is not None)
        state.any_room = request.any_room if isinstance(result, Clarify) else False
        state.last_intent = reading.intent
        return result

    @staticmethod
    def _accept(state: Conversation, proposal: Proposal) -> tuple[Intent, list[tuple[Slot, str]]]:
        """ "Yes" to a proposal: its room and time are the request, with what the open one said of its title
        and head count."""
        state.slots = {k: v for k, v in state.slots.items() if k in (Slot.TITLE, Slot.PEOPLE_COUNT)}
        return state.intent or Intent.BOOK_MEETING, proposal.slots()

    def _against_pending(self, state: Conversation, stripped: str, intent: Intent,
                         slots: Sequence[tuple[Slot, str]], now: datetime) -> Reading:
        """What the turn asks, read against the request the conversation has open: an answer to its question, a
        fragment that fills it, or a request of its own."""
        fragment = is_fragment(stripped, slots) if slots else False
        if state.intent is not None and not any(name in state.missing for name, _ in slots) and not fragment:
            answer = read_answer(stripped, state.missing, self.rooms, now)
            if answer:
                intent, slots, fragment = state.intent, answer, True
        carried: dict[Slot, str] = {}
        continuing = state.intent is not None and (fragment or (
            intent in (state.intent, Intent.OUT_OF_SCOPE)
            or {name for name, _ in slots} <= set(state.missing) | {Slot.DATE}
        ) and any(name in state.missing or name == Slot.DATE for name, _ in slots))
        if continuing:
            intent, carried = state.intent or intent, state.slots
            if not fragment and any(name == Slot.START_TIME for name, _ in slots):
                # a whole request with its own start is a new span: the pending one's end or length would stretch
                # it ("book Fuji Friday at 10 for an hour" after "... 3 to 4 pm" was taken: 10:00-16:00)
                carried = {k: v for k, v in carried.items() if k not in (Slot.END_TIME, Slot.DURATION)}
            if intent == Intent.RESCHEDULE_MEETING:  # "friday at 3" answers "when should it move to?"
                slots = [(_MOVED.get(name, name), value) for name, value in slots]
        any_room = (state.any_room if continuing else False) or (not fragment and leaves_room_to_us(stripped))
        return Reading(intent, tuple(slots), carried, continuing, any_room)

    def _dispatch(self, request: MeetingRequest, conversation_id: str, now: datetime, commit: bool, unsure: bool,
                  owner: str | None, key: str, replacing: Booking | None) -> Result:
        """The dispatcher's result; a weak reading (`unsure`) acts only after a "yes"; a request that replaced
        the booking its first part made withdraws that booking unless it became one itself."""
        if unsure and commit:
            result = self._propose(self.dispatcher.handle(request, now, commit=False, key=key,
                                                          conversation=conversation_id, owner=owner,
                                                          replacing=replacing),
                                   request.language)
        else:
            result = self.dispatcher.handle(request, now, commit=commit, key=key, conversation=conversation_id,
                                            owner=owner, replacing=replacing)
        if replacing is not None:
            result = self._withdraw_unless_replaced(replacing, result, commit, key)
        return result

    def _withdraw_unless_replaced(self, replacing: Booking, result: Result, commit: bool, key: str) -> Result:
        """The whole request did not become a booking (a question, a conflict, a weak reading proposed): the
        booking its first part made is withdrawn, as if the request had been said at once, and the result says
        which (`amends`). Said at once, "book Denali at ten for fourteen hours" books nothing and asks."""
        if isinstance(result, Command) and result.amends == replacing.id and (result.committed or not commit):
            return result
        if commit:
            self.dispatcher.store.cancel(replacing.id, f"{key}:withdrawn")
        return replace(result, amends=replacing.id) if isinstance(result, Command | Clarify) else result

    def _amend(self, state: Conversation, booking_id: str, text: str, slots: Sequence[tuple[Slot, str]],
               now: datetime, commit: bool, key: str) -> Result | None:
        """The booking the last turn made, with this turn's times over it; None when the words are more than
        times (a new request)."""
        booking = self.dispatcher.store.get(booking_id)
        if booking is None:
            return None
        said = list(slots) if slots and is_fragment(text, slots) else read_answer(text, (), self.rooms, now)
        if not said or any(name not in _AMENDABLE | {Slot.ROOM} for name, _ in said):  # "no, Denali" moves it
            return None
        start = booking.start.astimezone(now.tzinfo)
        made = {Slot.ROOM: booking.room, Slot.DATE: start.date().isoformat(), Slot.START_TIME: start.strftime("%H:%M")}
        names = {name for name, _ in said}
        if not names & {Slot.DURATION, Slot.END_TIME}:  # a new start or day keeps the length
            made[Slot.DURATION] = f"{int((booking.end - booking.start).total_seconds() // 60)} minutes"
        request = normalize_request(Intent.BOOK_MEETING, said, now, self.rooms, self.policy, made, text=text)
        if request.room is not None and request.room.room.key != booking.room:  # "no, Denali": another room in
            # its stead, in one store transaction; where that room is taken, the booking stays and the answer asks
            result = self.dispatcher.handle(request, now, commit=commit, key=key, owner=booking.owner,
                                            replacing=booking)
            return self._amended(state, booking, result)
        return self._apply_amendment(state, booking, request, now, commit, key)

    def _apply_amendment(self, state: Conversation, booking: Booking, request: MeetingRequest, now: datetime,
                         commit: bool, key: str) -> Result:
        return self._amended(state, booking, self.dispatcher.amend(booking, request, now, commit=commit, key=key))

    @staticmethod
    def _amended(state: Conversation, booking: Booking, result: Result) -> Result:
        state.intent, state.slots, state.missing, state.proposal = None, {}, (), None
        if isinstance(result, Command) and result.committed:  # "... for two hours", then "actually make it four"
            state.just_booked = result.booking_id or booking.id
        state.last_intent = Intent.BOOK_MEETING
        return result

    @staticmethod
    def _propose(result: Result, language: Language) -> Result:
        """A command read from a weak understanding becomes a question whose "yes" runs it."""
        if not isinstance(result, Command) or not result.executable or result.action != Intent.BOOK_MEETING:
            return result
        when = language.span_words(result.start, result.end)
        offer = Offer(result.room, result.start, result.end)
        return Clarify((Confirm.CONFIRMATION,), say(language, "propose", room=result.room.title(), when=when), (offer,))

    def _remember(self, state: Conversation, intent: Intent, slots: Sequence[tuple[Slot, str]],
                  carried: dict[Slot, str], result: Result, unknown_room: bool = False) -> None:
        merged = {**carried, **dict(slots)}
        if unknown_room:  # asked about, never kept: kept, every later turn naming no room would be asked again
            merged.pop(Slot.ROOM, None)
        if isinstance(result, Clarify) and result.doubt is not None:  # words in doubt are asked again, not kept
            doubted = set(result.missing)
            if doubted & {Slot.START_TIME, Slot.END_TIME}:
                doubted |= {Slot.START_TIME, Slot.END_TIME, Slot.DURATION}
            merged = {k: v for k, v in merged.items() if k not in doubted}
        if isinstance(result, Clarify):
            state.intent, state.slots, state.missing = intent, merged, result.missing
            state.proposal = None
            if result.options:  # a conflict: "yes" takes the first alternative
                first = result.options[0]
                state.proposal = Proposal.of(first.room, first.start, first.end)
            return
        state.intent, state.slots, state.missing, state.proposal = None, {}, (), None
        if isinstance(result, Command) and result.committed:
            if result.action == Intent.BOOK_MEETING or result.amends is not None:
                state.last_booking = state.just_booked = result.booking_id
            else:
                state.changed_other = True

    def _undo(self, state: Conversation, now: datetime, commit: bool, key: str, owner: str | None,
              language: Language) -> Result:
        state.intent, state.slots, state.missing, state.proposal = None, {}, (), None
        booking = self.dispatcher.store.get(state.last_booking) if state.last_booking else None
        if booking is None or not self.dispatcher.may_change(booking, owner):
            return Rejected(say(language, "nothing_to_undo"))
        command = Command(Intent.CANCEL_MEETING, booking.room, booking.start, booking.end, executable=True,
                          booking_id=booking.id, title=booking.title, attendees=booking.attendees,
                          idempotency_key=key)
        if not commit:
            return command
        self.dispatcher.store.cancel(booking.id, key)
        state.last_booking, state.changed_other = None, True
        return replace(command, committed=True)
