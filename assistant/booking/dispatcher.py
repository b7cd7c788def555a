"""A normalized request -> a result, against the store: book, cancel, reschedule, check, list.

Dry run (commit=False) never writes: it shows the command that would run, with `executable` and, when false,
the reason. With commit=True the store runs it under the request's idempotency key.

Ownership: a booking records who made it (`owner`). With `owners_only`, cancel and move act only on the
caller's own bookings; a caller with no owner (the local command line, which has the file anyway) may act on any
but another app's event in a room's calendar (owner OTHER_APP), which no one changes from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from assistant.booking.guard import check_booking, check_days, check_move
from assistant.booking.interval import Interval, TimePolicy, localize
from assistant.booking.replies import clock, room_list, say, sentences
from assistant.booking.request import MeetingRequest
from assistant.booking.results import (
    Answer,
    AnswerData,
    AnswerKind,
    Check,
    Clarify,
    Command,
    Doubt,
    Offer,
    Rejected,
    Result,
    booking_dict,
)
from assistant.booking.rooms import MatchKind, Room, RoomDirectory
from assistant.booking.store import OTHER_APP, Booked, Booking, BookingStore, Conflict
from assistant.domain import Intent, Slot
from assistant.language.profile import Language

__all__ = ["Dispatcher", "question"]

_ASKED = (Slot.DATE, Slot.START_TIME, Slot.ROOM, Slot.NEW_TIME, Slot.END_TIME, Slot.DURATION, Slot.PEOPLE_COUNT)


def question(language: Language, missing: Sequence[str]) -> str:
    """The questions for what a request lacks, in its language ("Which day? At what time?")."""
    asked = [say(language, f"ask.{m}") if m in _ASKED else say(language, "ask.other", slot=m) for m in missing]
    return sentences(language, *asked)


@dataclass
class Dispatcher:
    store: BookingStore
    rooms: RoomDirectory
    search_days: int = 30  # how far ahead a cancel or reschedule looks for the meeting meant
    max_length: timedelta = timedelta(hours=10)  # [booking] max_hours: a longer booking is asked about
    policy: TimePolicy = field(default_factory=TimePolicy)  # how the guard reads the readings it offers
    owners_only: bool = True  # [access] own_bookings_only

    def may_change(self, booking: Booking, owner: str | None) -> bool:
        """Whether `owner` may cancel or move `booking` (None: a trusted local caller). Another app's event in a
        room's calendar is no one's to change here."""
        if booking.owner == OTHER_APP:
            return False
        return owner is None or not self.owners_only or booking.owner == owner

    def handle(self, request: MeetingRequest, now: datetime, *, commit: bool, key: str,
               conversation: str | None = None, owner: str | None = None, replacing: Booking | None = None) -> Result:
        """`owner`: who is asking (recorded on a booking made; cancel and move find only theirs). `replacing`: the
        booking the first part of this request made (the speaker went on after a pause): a booking this request
        makes takes its place (moved, or another room booked in its stead, in one store transaction), and it
        never conflicts with it."""
        language = request.language
        if request.action == Intent.OUT_OF_SCOPE:
            return Rejected(say(language, "out_of_scope"))
        if request.room_said is not None and request.action != Intent.LIST_BOOKINGS:
            names = room_list(language, [r.name for r in self.rooms.rooms])
            return Clarify((Slot.ROOM,), say(language, "unknown_room", said=request.room_said, names=names))
        if request.room_rivals and request.action != Intent.LIST_BOOKINGS:
            names = room_list(language, list(request.room_rivals))
            return Clarify((Slot.ROOM,), say(language, "which_room", names=names))
        if request.action == Intent.BOOK_MEETING:
            return self._book(request, now, commit, key, conversation, owner, replacing)
        shown = request.interval.start.date() if request.interval else request.day
        if request.action in (Intent.CHECK_AVAILABILITY, Intent.LIST_BOOKINGS) and shown is not None:
            doubt = check_days(request, (shown,), (Slot.DATE,), dict(request.spans).get(Slot.DATE, ""))
            if doubt is not None:  # a day nothing can be booked on is not shown either (one range for both)
                return self._ask(doubt, request, None)
        handler = {
            Intent.CANCEL_MEETING: self._cancel, Intent.RESCHEDULE_MEETING: self._reschedule,
            Intent.CHECK_AVAILABILITY: self._check, Intent.LIST_BOOKINGS: self._list,
        }[request.action]
        return handler(request, now, commit, key, conversation, owner)

    # ---- helpers -----------------------------------------------------------------------------------------
    def _ask(self, doubt: Doubt, request: MeetingRequest, room: str | None) -> Clarify:
        """A doubtful reading becomes a question; the reading offered is an option that "yes" takes."""
        suggestion: Interval | None = doubt.suggestion
        options = (Offer(room, suggestion.start, suggestion.end),) if suggestion is not None and room is not None \
            else ()
        return Clarify(doubt.slots, doubt.question, options, doubt)

    def _which_room(self, request: MeetingRequest) -> Clarify:
        """A fragment that names no room ("tomorrow at 3 for an hour") starts no booking in a room we pick."""
        names = [r.name for r in (self._free_rooms(request.interval.start, request.interval.end, request.people or 1)
                                  if request.interval else self.rooms.rooms)]
        language = request.language
        free = say(language, "free_then", names=room_list(language, names)) if request.interval and names else ""
        return Clarify((Slot.ROOM,), say(language, "ask.room") + free)

    def _free_rooms(self, start: datetime, end: datetime, people: int, ignore: Booking | None = None) -> list[Room]:
        taken = {b.room for b in self.store.bookings(start, end) if ignore is None or b.id != ignore.id}
        return sorted((r for r in self.rooms.rooms if r.key not in taken and r.seats >= people),
                      key=lambda r: (r.seats, r.name))

    def _next_free(self, room: str, start: datetime, length: timedelta) -> datetime:
        candidate = start
        for booking in self.store.bookings(start, start + timedelta(days=self.search_days), room):
            if booking.start >= candidate + length:
                break
            candidate = max(candidate, booking.end)
        return candidate

    def _options(self, room: str, start: datetime, end: datetime, people: int) -> tuple[Offer, ...]:
        others = [Offer(r.key, start, end) for r in self._free_rooms(start, end, people)[:3]]
        later = self._next_free(room, start, end - start)
        return (*others, Offer(room, later, later + (end - start)))

    def _conflict(self, room: str, start: datetime, end: datetime, people: int, language: Language) -> Clarify:
        options = self._options(room, start, end, people)
        alternatives = [o.room.title() for o in options[:-1]]
        later = clock(options[-1].start)
        question = say(language, "conflict", room=room.title())
        if alternatives:
            question += say(language, "conflict.other" if len(alternatives) == 1 else "conflict.others",
                            names=room_list(language, alternatives), room=room.title(), later=later)
        else:
            question += say(language, "conflict.later", later=later)
        return Clarify((Slot.ROOM, Slot.START_TIME), question + say(language, "conflict.which"), options)

    def _none_free(self, start: datetime, end: datetime, people: int, language: Language) -> Clarify:
        """Every room that fits is taken then: the soonest time one of them is free, as an option "yes" takes."""
        fitting = [r for r in self.rooms.rooms if r.seats >= people]
        if not fitting:
            return Clarify((Slot.PEOPLE_COUNT,), say(language, "no_room_fits", people=people))
        soonest = min(((self._next_free(r.key, start, end - start), r) for r in fitting),
                      key=lambda found: (found[0], found[1].seats))
        later, room = soonest
        option = Offer(room.key, later, later + (end - start))
        question = say(language, "none_free", people=people, room=room.name, later=clock(later))
        return Clarify((Slot.START_TIME,), question, (option,))

    def _find(self, request: MeetingRequest, now: datetime) -> list[Booking]:
        if request.day is not None:
            start = datetime.combine(request.day, datetime.min.time(), now.tzinfo)
            window = (start, start + timedelta(days=1))
        else:
            window = (now - timedelta(hours=12), now + timedelta(days=self.search_days))
        found = self.store.bookings(*window, request.room.room.key if request.room else None)
        if request.interval is not None:
            found = [b for b in found if b.start == request.interval.start]
        if request.title:
            wanted = request.title.lower()
            found = [b for b in found if b.title and (wanted in b.title.lower() or b.title.lower() in wanted)]
        return list(found)

    # ---- intents -----------------------------------------------------------------------------------------
    def _book(self, request: MeetingRequest, now: datetime, commit: bool, key: str,
              conversation: str | None, owner: str | None, replacing: Booking | None = None) -> Result:
        language = request.language
        doubt = check_booking(request, now, self.max_length, self.policy)
        if doubt is not None:  # the option "yes" takes is in the room said, if it was said surely or is the doubt
            offered = request.room if request.room and (request.room.sure or doubt.check == Check.ROOM) else None
            return self._ask(doubt, request, offered.room.key if offered else None)
        if request.missing or request.interval is None:
            missing = request.missing or (Slot.START_TIME,)
            if request.room is None and not request.any_room:
                missing = (Slot.ROOM, *missing)
            return Clarify(missing, question(language, missing))
        if request.room is None and not request.any_room:
            return self._which_room(request)
        start, end = request.interval.start, request.interval.end
        people = request.people or 1
        assumptions = list(request.assumptions)
        if request.room is None:
            free = self._free_rooms(start, end, people, replacing)
            if not free:
                return self._none_free(start, end, people, language)
            room = free[0]
            assumptions.append(f"no room said: {room.name}, the smallest free room for {people}")
        else:
            room = request.room.room
            if request.room.kind is not MatchKind.EXACT:  # "Fuji Rune", "Everist": what was heard, and taken as
                assumptions.append(f"room \"{request.room.said}\" taken as {room.name}")
        command = Command(Intent.BOOK_MEETING, room.key, start, end, executable=True, title=request.title,
                          attendees=request.attendees, assumptions=tuple(assumptions), idempotency_key=key,
                          spans=request.spans)
        if request.people and request.people > room.seats:
            return replace(command, executable=False,
                           reason=say(language, "seats_fewer", room=room.name, seats=room.seats, people=request.people))
        if replacing is not None and replacing.room == room.key:  # the first part's booking, moved or stretched
            return self._move(replacing, start, end, request, commit, key, amends=replacing.id,
                              title=replacing.title or request.title,
                              attendees=tuple(dict.fromkeys((*replacing.attendees, *request.attendees))))
        if replacing is not None:
            command = replace(command, amends=replacing.id)
        clashes = [b for b in self.store.bookings(start, end, room.key) if replacing is None or b.id != replacing.id]
        if clashes and not commit:
            return replace(command, executable=False, reason="room taken")
        if not commit:
            return command
        made_by = owner or (f"conversation:{conversation}" if conversation else None)
        booking = Booking("", room.key, start, end, request.title, request.attendees, conversation, made_by)
        outcome = self.store.book(booking, key) if replacing is None else self.store.replace(replacing.id, booking, key)
        if not isinstance(outcome, Booked):
            return self._conflict(room.key, start, end, people, language)
        return replace(command, committed=True, booking_id=outcome.booking.id)

    def _target(self, request: MeetingRequest, now: datetime, owner: str | None) -> Booking | Result:
        language = request.language
        if request.room is not None and not request.room.sure:  # a cancel or a move acts on a room said surely
            return Clarify((Slot.ROOM,), say(language, "which_room_to_change", room=request.room.room.name,
                                          said=request.room.said))
        matching = self._find(request, now)
        found = [b for b in matching if self.may_change(b, owner)]
        if len(found) == 1:
            return found[0]
        if not found and matching:
            return Answer(AnswerKind.BOOKINGS, say(language, "not_yours"),
                          {"bookings": [], "executable": False, "reason": "not yours"})
        if not found:
            return Answer(AnswerKind.BOOKINGS, say(language, "no_such_booking"), {"bookings": [], "executable": False,
                                                                         "reason": "no such booking"})
        options = tuple(found[:5])
        return Clarify((Slot.START_TIME,), say(language, "which_booking", count=len(found)), options)

    def _cancel(self, request: MeetingRequest, now: datetime, commit: bool, key: str,
                conversation: str | None, owner: str | None) -> Result:
        target = self._target(request, now, owner)
        if not isinstance(target, Booking):
            return target
        command = Command(Intent.CANCEL_MEETING, target.room, target.start, target.end, executable=True,
                          booking_id=target.id, title=target.title, attendees=target.attendees,
                          assumptions=request.assumptions, idempotency_key=key)
        if commit:
            outcome = self.store.cancel(target.id, key)
            done = isinstance(outcome, Booked)
            return replace(command, committed=done, executable=done)
        return command

    def _reschedule(self, request: MeetingRequest, now: datetime, commit: bool, key: str,
                    conversation: str | None, owner: str | None) -> Result:
        doubt = check_move(request, now, self.policy)
        if doubt is not None:
            return self._ask(doubt, request, None)
        if request.missing:
            return Clarify(request.missing, say(request.language, "ask.new_time"))
        target = self._target(request, now, owner)
        if not isinstance(target, Booking):
            return target
        length = target.end - target.start
        if request.new_interval is not None:
            new_start = request.new_interval.start
        else:  # only a new day: same wall-clock time there (its UTC offset may differ across a DST change)
            assert request.new_day is not None and isinstance(now.tzinfo, ZoneInfo)
            local = target.start.astimezone(now.tzinfo)
            new_start = localize(request.new_day, local.hour, local.minute, now.tzinfo)
        return self._move(target, new_start, new_start + length, request, commit, key)

    def amend(self, target: Booking, request: MeetingRequest, now: datetime, *, commit: bool, key: str) -> Result:
        """Speech that went on right after a turn ended early changes what that turn just booked ("... for two
        hours", "actually make it four"): `request` is the booking as amended; the booking moves or stretches."""
        doubt = check_booking(request, now, self.max_length, self.policy)
        if doubt is not None:
            return self._ask(doubt, request, target.room)
        if request.interval is None:
            return Clarify(request.missing or (Slot.START_TIME,), say(request.language, "ask.new_time"))
        title = target.title or request.title  # the words joined may read the title differently: keep it
        attendees = tuple(dict.fromkeys((*target.attendees, *request.attendees)))  # "... and Tom" adds Tom
        return self._move(target, request.interval.start, request.interval.end, request, commit, key,
                          amends=target.id, title=title, attendees=attendees)

    def _move(self, target: Booking, new_start: datetime, new_end: datetime, request: MeetingRequest,
              commit: bool, key: str, amends: str | None = None, title: str | None = None,
              attendees: tuple[str, ...] | None = None) -> Result:
        """Move `target` (an amendment may also give it a title and attendees)."""
        command = Command(Intent.RESCHEDULE_MEETING, target.room, target.start, target.end, executable=True,
                          booking_id=target.id, title=title or target.title,
                          attendees=target.attendees if attendees is None else attendees, new_start=new_start,
                          new_end=new_end, assumptions=request.assumptions, idempotency_key=key,
                          spans=request.spans, amends=amends)
        clashes = [b for b in self.store.bookings(new_start, new_end, target.room) if b.id != target.id]
        if clashes and not commit:
            return replace(command, executable=False, reason="room taken")
        if not commit:
            return command
        outcome = self.store.reschedule(target.id, new_start, new_end, key, title=title, attendees=attendees)
        if isinstance(outcome, Conflict):
            return self._conflict(target.room, new_start, new_end, 1, request.language)
        return replace(command, committed=isinstance(outcome, Booked))

    def _check(self, request: MeetingRequest, now: datetime, commit: bool, key: str,
               conversation: str | None, owner: str | None) -> Result:
        people = request.people or 1
        language = request.language
        where = say(language, "where", room=request.room.room.name) if request.room else ""
        if request.interval is None:
            day = request.day or now.date()
            start = datetime.combine(day, datetime.min.time(), now.tzinfo)
            room_key = request.room.room.key if request.room else None
            taken = self.store.bookings(start, start + timedelta(days=1), room_key)
            text = say(language, "day_bookings", count=len(taken), day=day.isoformat(), where=where)
            return Answer(AnswerKind.AVAILABILITY, text, {"day": day.isoformat(), "room": room_key,
                                                 "bookings": [booking_dict(b) for b in taken]})
        start, end = request.interval.start, request.interval.end
        free = self._free_rooms(start, end, people)
        data: AnswerData = {"start": start.isoformat(), "end": end.isoformat(), "free_rooms": [r.key for r in free]}
        if request.room is not None:
            room = request.room.room
            available = not self.store.bookings(start, end, room.key)
            verdict = say(language, "verdict.free" if available else "verdict.taken")
            fits = "" if room.seats >= people else say(language, "fits.no", seats=room.seats, people=people)
            text = say(language, "room_verdict", room=room.name, verdict=verdict, start=clock(start), end=clock(end),
                       fits=fits)
            return Answer(AnswerKind.AVAILABILITY, text, {**data, "room": room.key, "available": available,
                                                 "fits": room.seats >= people})
        names = room_list(language, [r.name for r in free]) or say(language, "no_room")
        text = say(language, "free_rooms", start=clock(start), end=clock(end), names=names)
        return Answer(AnswerKind.AVAILABILITY, text, {**data, "room": None, "available": bool(free)})

    def _list(self, request: MeetingRequest, now: datetime, commit: bool, key: str,
              conversation: str | None, owner: str | None) -> Result:
        start = datetime.combine(request.day or now.date(), datetime.min.time(), now.tzinfo)
        end = start + timedelta(days=1 if request.day else 7)
        room_key = request.room.room.key if request.room else None
        found: Sequence[Booking] = self.store.bookings(start, end, room_key)
        if request.title:
            found = [b for b in found if b.title and request.title.lower() in b.title.lower()]
        language = request.language
        where = say(language, "where", room=request.room.room.name) if request.room else ""
        return Answer(AnswerKind.BOOKINGS, say(language, "bookings", count=len(found), where=where),
                      {"from": start.isoformat(), "to": end.isoformat(), "room": room_key,
                       "bookings": [booking_dict(b) for b in found]})
