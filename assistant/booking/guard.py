"""The guard between understanding and acting: checks a booking's reading before it may become a command.

A wrong booking made with confidence is the worst outcome, so a request that fails any check becomes a question
that names the doubtful part ("\"a\" is not a time. Did you mean 3:15 pm?"), and is never executed:

- every time and date span was read in full (the value readers refuse leftover words), and said once (a time
  tagged on two spans is in doubt);
- a one-letter or function-word span is never a time ("a" of "a quarter past 3");
- the start comes before the end;
- the length fits `[booking] max_hours`;
- no crossing of midnight that was not asked for ("15 to noon" read as 15:00 to 12:00 the next day);
- not in the past, and within the years every part of the product serves (assistant/zones.py: the day view
  shows them, a reference time may be in them);
- a length of 13-19 minutes (but 15) is asked about: recognizers write "ninety" as "nineteen" ("for 19 minutes"),
  and those lengths are rarely booked; the -ty reading is offered, and said again in answer, the teen stands;
- the room was named, or spelled nearly right: a room found only by how the words sound ("buck" for Olympus's
  "big room", "Dinally" for Denali) is proposed ("Did you mean Denali?"), never booked on its own;
- a spoken time says minutes people say: a start, end or new time heard with minutes that are not a multiple of 5
  ("at 1034", "ten thirty" and the "for" after it run together; "10:34") is asked about with the likely reading
  offered ("Did you mean 10:30 am?"). Typed text keeps its exact minutes;
- a spoken booking with no length read, whose words after the time still begin one that no slot holds ("at 4 pm
  for a hangout", "at 2pm in hour": "for an hour" misheard), asks for the length instead of assuming the default.

Where the words around a doubtful span read as one clock time ("a" + "quarter past 3pm", "15" + "to" + "noon"),
that reading is offered, and "yes" books it (the conflict proposal's path in the dialogue).
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from assistant.booking.interval import Interval, TimePolicy, localize, resolve_interval
from assistant.booking.replies import clock, clock_words, day_words, say, sentences
from assistant.booking.request import MeetingRequest
from assistant.booking.results import Check, Doubt
from assistant.domain import Slot
from assistant.language.profile import Language
from assistant.language.readers import parse_clock
from assistant.language.registry import LANGUAGES, language_of
from assistant.language.values import Meridiem
from assistant.zones import FIRST_YEAR, LAST_YEAR

__all__ = ["Doubt", "check_booking", "check_move", "check_days", "TIME_SLOTS"]

TIME_SLOTS = (Slot.DATE, Slot.START_TIME, Slot.END_TIME, Slot.DURATION, Slot.NEW_DATE, Slot.NEW_TIME)
# words that are never a time on their own, in any language (a time slot tagged on one was misread)
_FUNCTION_WORDS = frozenset().union(*(language.words.function_words for language in LANGUAGES))
_KIND: dict[Slot, str] = {Slot.DATE: "date", Slot.NEW_DATE: "date", Slot.DURATION: "length", Slot.START_TIME: "time",
         Slot.END_TIME: "end time", Slot.NEW_TIME: "time"}


def _joined_reading(request: MeetingRequest, slots: tuple[str, ...], now: datetime, policy: TimePolicy
                    ) -> Interval | None:
    """The time the words from the first to the last time span say when read as one phrase ("a" + "quarter past
    3pm" -> 15:15, "15" + "to" + "noon" -> 11:45); None when they do not read as one clock time."""
    text = request.text
    at = [(text.find(said), said) for name, said in request.spans if name in slots and said]
    found = [(start, start + len(said)) for start, said in at if start >= 0]
    if len(found) < 2:
        return None
    phrase = text[min(s for s, _ in found) : max(e for _, e in found)]
    if parse_clock(phrase) is None:
        return None
    zone = now.tzinfo
    assert isinstance(zone, ZoneInfo)
    duration = dict(request.spans).get(Slot.DURATION)
    reading = resolve_interval(request.day or now.date(), zone, phrase, None, duration, None, policy)
    return reading if isinstance(reading, Interval) and reading.start > now else None


def _not_a_time(request: MeetingRequest) -> tuple[Slot, str] | None:
    for name, said in request.spans:
        core = said.strip(" .,!?;:'\"").lower()
        if name in TIME_SLOTS and (core in _FUNCTION_WORDS or (len(core) == 1 and not core.isdigit())):
            return name, said
    return None


def _said_twice(request: MeetingRequest) -> Slot | None:
    """A time slot tagged on two spans ("15" and "noon" of "15 to noon"): which one is meant is not guessed."""
    names = [name for name, _ in request.spans if name in TIME_SLOTS]
    return next((name for name in dict.fromkeys(names) if names.count(name) > 1), None)


def _next_question(language: Language, slots: tuple[str, ...]) -> str:
    if Slot.START_TIME in slots or Slot.END_TIME in slots or Slot.NEW_TIME in slots:
        return say(language, "ask.start_time")
    if Slot.DURATION in slots:
        return say(language, "ask.duration")
    return say(language, "ask.date")


def _doubt(request: MeetingRequest, check: Check, slots: tuple[Slot, ...], said: str, problem: str,
           suggestion: Interval | None) -> Doubt:
    """`problem`: a key of the replies with its fields, said in the request's language."""
    language = request.language
    ask = say(language, "doubt.did_you_mean", clock=clock_words(language, suggestion.start)) \
        if suggestion is not None else _next_question(language, slots)
    return Doubt(check, slots, said, sentences(language, problem, ask), suggestion)


def _kind(request: MeetingRequest, slot: Slot) -> str:
    return say(request.language, f"kind.{_KIND[slot]}") if slot in _KIND else slot


def _check_words(request: MeetingRequest, now: datetime, policy: TimePolicy) -> Doubt | None:
    """The checks on the words themselves: no function word as a time, no time said twice, all read in full,
    spoken minutes that people say."""
    times = (Slot.START_TIME, Slot.END_TIME)
    word = _not_a_time(request)
    if word is not None:
        slot, said = word
        return _doubt(request, Check.NOT_A_TIME, (slot,), said, _say(request, "doubt.not_a_time", said=said,
                                                                 kind=_kind(request, slot)),
                      _joined_reading(request, times, now, policy) if slot in times else None)
    split = _said_twice(request)
    if split is not None:
        return _doubt(request, Check.SPLIT, (split,), " ... ".join(t for n, t in request.spans if n == split),
                      _say(request, "doubt.split", kind=_kind(request, split)),
                      _joined_reading(request, (split,), now, policy))
    if request.problems:
        unread = request.problems[0]
        return _doubt(request, Check.UNREAD, (unread.slot,), unread.said,
                      _say(request, "doubt.unread", kind=_kind(request, unread.slot), said=unread.said),
                      _joined_reading(request, times, now, policy) if unread.slot in times else None)
    return _check_odd_minutes(request) if request.spoken else None


_RUN_TOGETHER = re.compile(r"^\D*(\d{1,2})(\d)(\d)\D*$")  # "1034": "10", "3(0)" and a stray digit


def _check_odd_minutes(request: MeetingRequest) -> Doubt | None:
    """A time this turn said whose minutes nobody says, offered as the reading it likely was: a run-together
    "1034" as 10:30 (the last digit is another word's: "for", "to"), "10:34" as 10:35 (the nearest five)."""
    for name, said in request.spans:
        if name not in (Slot.START_TIME, Slot.END_TIME, Slot.NEW_TIME) or not said or said not in request.text:
            continue  # carried from an earlier turn: asked about then
        clock = parse_clock(said)
        if clock is None or clock.minute % 5 == 0:
            continue
        run_together = _RUN_TOGETHER.match(said.strip())
        minute = int(run_together.group(2)) * 10 if run_together else 5 * round(clock.minute / 5)
        suggestion = _moved(request, name, clock.minute, min(minute, 55))
        heard = request.interval.start if name == Slot.START_TIME and request.interval else None
        problem = _say(request, "doubt.odd_minutes", said=said,
                       clock=clock_words(request.language, heard) if heard else said)
        return _doubt(request, Check.ODD_MINUTES, (name,), said, problem, suggestion)
    return None


def _moved(request: MeetingRequest, slot: Slot, heard: int, meant: int) -> Interval | None:
    """The booking with the start (or end) at the minute meant instead of the one heard."""
    interval = request.interval if slot != Slot.NEW_TIME else request.new_interval
    if interval is None:
        return None
    shift = timedelta(minutes=meant - heard)
    if slot == Slot.END_TIME:
        return Interval(interval.start, interval.end + shift)
    keeps_end = slot == Slot.START_TIME and bool(dict(request.spans).get(Slot.END_TIME))  # "from 1034 to 11"
    return Interval(interval.start + shift, interval.end + (timedelta(0) if keeps_end else shift))


def check_booking(request: MeetingRequest, now: datetime, max_length: timedelta,
                  policy: TimePolicy | None = None) -> Doubt | None:
    """The first check a booking request fails, or None when it may become an executable command."""
    policy = policy or TimePolicy()
    doubt = _check_words(request, now, policy)
    if doubt is not None or request.interval is None:
        return doubt  # (no time said yet: the dispatcher asks for it)
    return _check_teen(request, request.interval) or _check_length_unread(request) or \
        _check_interval(request, request.interval, now, max_length, policy)


def _check_length_unread(request: MeetingRequest) -> Doubt | None:
    """Speech only: no end or length was read, but after the start the words begin a length that no slot holds:
    a length misheard ("for an hour" heard "for a hangout") is asked for, never taken as the default."""
    said = dict(request.spans)
    lead = language_of(request.text).words.length_lead
    start = said.get(Slot.START_TIME)
    if not request.spoken or not lead or not start or said.get(Slot.END_TIME) or said.get(Slot.DURATION) or \
            start not in request.text:
        return None
    text = request.text
    after = text.index(start) + len(start)
    held = [(text.find(value), text.find(value) + len(value)) for _, value in request.spans if value in text]
    found = re.compile(rf"\b(?:{lead})\s+[\w'-]+(?:\s+[\w'-]+)?", re.I).search(text, after)
    if found is None or any(a < found.end() and found.start() < b for a, b in held):
        return None  # no length begun, or its words are a slot's ("for the budget review": a title)
    problem = _say(request, "doubt.unread", kind=_kind(request, Slot.DURATION), said=found.group(0))
    return Doubt(Check.UNREAD, (Slot.DURATION,), found.group(0), sentences(request.language, problem,
                                                                          say(request.language, "ask.duration")),
                 None)


def _teen_minutes(said: str) -> tuple[str, int] | None:
    """The first language's reading of a teen length in these words (the languages that have such a reading)."""
    return next((found for language in LANGUAGES if language.words.teen_minutes is not None
                 if (found := language.words.teen_minutes(said)) is not None), None)


def _check_teen(request: MeetingRequest, interval: Interval) -> Doubt | None:
    """"for 19 minutes": was it "ninety"? Asked, with the -ty reading offered, unless the length was just asked
    for (said again, it stands)."""
    said = dict(request.spans).get(Slot.DURATION, "")
    found = _teen_minutes(said)
    if found is None or Slot.DURATION in request.asked:
        return None
    words, teen = found
    ty = (teen - 10) * 10
    offered = Interval(interval.start, interval.start + timedelta(minutes=ty))
    question = _say(request, "doubt.teen", said=words, ty=ty)
    return Doubt(Check.TEEN, (Slot.DURATION,), said, question, offered)


def _check_interval(request: MeetingRequest, interval: Interval, now: datetime, max_length: timedelta,
                    policy: TimePolicy) -> Doubt | None:
    start, end = interval.start, interval.end
    said = dict(request.spans)
    span_words = " to ".join(said[s] for s in (Slot.START_TIME, Slot.END_TIME) if said.get(s))
    if said.get(Slot.DURATION):
        span_words += f" for {said[Slot.DURATION]}"
    times = (Slot.START_TIME, Slot.END_TIME) if said.get(Slot.END_TIME) else (Slot.START_TIME, Slot.DURATION)
    shown = _say(request, "span", start=clock(start), end=clock(end))
    if end <= start:
        return _doubt(request, Check.ORDER, times, span_words, _say(request, "doubt.order", end=clock(end),
                                                                 start=clock(start)),
                      _joined_reading(request, times, now, policy))
    length = end - start
    if length > max_length:
        next_day = _say(request, "next_day") if end.date() != start.date() else ""
        problem = _say(request, "doubt.too_long", hours=f"{length.total_seconds() / 3600:g}", shown=shown,
                       next_day=next_day, most=f"{max_length.total_seconds() / 3600:g}")
        return _doubt(request, Check.TOO_LONG, times, span_words, problem, _joined_reading(request, times, now, policy))
    ends_at_midnight = end.time() == datetime.min.time() and end.date() == start.date() + timedelta(days=1)
    if end.date() != start.date() and not ends_at_midnight and not _overnight_said(said, start, end):
        return _doubt(request, Check.MIDNIGHT, times, span_words, _say(request, "doubt.midnight", shown=shown),
                      _joined_reading(request, times, now, policy))
    if start < now:
        return _doubt(request, Check.PAST, (Slot.DATE, Slot.START_TIME), said.get(Slot.START_TIME, ""),
                      _passed(request, start, now),
                      _later_same_day(start, now, said.get(Slot.START_TIME, ""), interval))
    outside = _out_of_range(request, interval, (Slot.DATE,), said.get(Slot.DATE, ""))
    return outside if outside is not None else _check_room(request, interval)


def _out_of_range(request: MeetingRequest, interval: Interval, slots: tuple[Slot, ...], said: str) -> Doubt | None:
    """A booking that starts or ends outside the years FIRST_YEAR-LAST_YEAR ("tomorrow" said on 2199-12-31)."""
    return check_days(request, (interval.start.date(), (interval.end - timedelta(microseconds=1)).date()), slots,
                      said)


def check_days(request: MeetingRequest, days: tuple[date, ...], slots: tuple[Slot, ...], said: str) -> Doubt | None:
    """The first of `days` outside the years FIRST_YEAR-LAST_YEAR, as a question; None when all are inside."""
    for day in days:
        if not FIRST_YEAR <= day.year <= LAST_YEAR:
            problem = _say(request, "doubt.out_of_range", first=f"{FIRST_YEAR}-01-01", last=f"{LAST_YEAR}-12-31",
                           day=day.isoformat())
            return _doubt(request, Check.OUT_OF_RANGE, slots, said, problem, None)
    return None


def _check_room(request: MeetingRequest, interval: Interval) -> Doubt | None:
    """A room found only by sound or by a distant spelling is offered with the booking's time; "yes" books it."""
    match = request.room
    if match is None or match.sure:
        return None
    question = _say(request, "did_you_mean_room", room=match.room.name, said=match.said,
                    when=f"{clock(interval.start)}-{clock(interval.end)}")
    return Doubt(Check.ROOM, (Slot.ROOM,), match.said, question, interval)


def _say(request: MeetingRequest, key: str, **fields: object) -> str:
    return say(request.language, key, **fields)


def _passed(request: MeetingRequest, start: datetime, now: datetime) -> str:
    language = request.language
    return say(language, "doubt.past", clock=clock_words(language, start), day=day_words(language, start, now.date()))


def _overnight_said(said: dict[Slot, str], start: datetime, end: datetime) -> bool:
    """A crossing of midnight is planned when both ends carry their own am/pm ("10 pm to 1 am")."""
    first, last = parse_clock(said.get(Slot.START_TIME, "")), parse_clock(said.get(Slot.END_TIME, ""))
    return (first is not None and last is not None and first.meridiem is Meridiem.PM
            and last.meridiem is Meridiem.AM and not first.fixed and not last.fixed)


def _later_same_day(start: datetime, now: datetime, said: str, interval: Interval) -> Interval | None:
    """'at 9' said at 10 am, read as 9 am by the morning rule: 9 pm is the reading offered, if still to come."""
    clock = parse_clock(said)
    if clock is None or clock.meridiem is not None or clock.fixed or start.hour >= 12:
        return None
    zone = start.tzinfo
    assert isinstance(zone, ZoneInfo)
    later = localize(start.date(), start.hour + 12, start.minute, zone)
    return Interval(later, later + (interval.end - interval.start)) if later > now else None


def check_move(request: MeetingRequest, now: datetime, policy: TimePolicy | None = None) -> Doubt | None:
    """A reschedule's target time: read in full, a real time, not in the past."""
    doubt = _check_words(request, now, policy or TimePolicy())
    if doubt is not None:
        return doubt
    if request.new_interval is not None and request.new_interval.start < now:
        start = request.new_interval.start
        return _doubt(request, Check.PAST, (Slot.NEW_TIME,), dict(request.spans).get(Slot.NEW_TIME, ""),
                      _passed(request, start, now), None)
    if request.new_interval is not None:
        return _out_of_range(request, request.new_interval, (Slot.NEW_DATE,),
                             dict(request.spans).get(Slot.NEW_DATE, ""))
    return None

