"""Understanding chooses among the recognizer's readings of one utterance (its n-best).

Each hypothesis is understood (in the same batched model call as every other turn) and weighed: how much of it
makes a complete, consistent request (an intent the model is sure of; nothing left to ask for; every time, date
and length read in full, and each said once; a room in the directory; minutes a person says), plus the
recognizer's own score. The best total is acted on.
A hypothesis the recognizer found about as likely, and that understanding finds as sound, but that reads a room or
time both name otherwise ("at nine" against "at five"; one that leaves a slot out contradicts nothing) makes those
slots doubtful: the booking is proposed, never made on the recognizer's coin toss.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta

from assistant.domain import Intent, Slot
from assistant.language.readers import parse_clock, parse_date, parse_duration
from assistant.nlu.parser import ParseFailure, Understanding

__all__ = ["Candidate", "Choice", "choose", "SCORE_WEIGHT", "RIVAL_MARGIN"]

SCORE_WEIGHT = 2.0  # points per nat of the recognizer's mean log-probability per token
RIVAL_MARGIN = 0.15  # nats per token: a hypothesis this close to the chosen one is a rival reading
_SURE_INTENT = 0.5
_TIMES = (Slot.START_TIME, Slot.END_TIME, Slot.NEW_TIME)
_DATES = (Slot.DATE, Slot.NEW_DATE)
_ANY_DAY = date(2026, 1, 5)  # dates are only checked for being readable; the day they name does not matter
# what a request needs to be acted on without a question: each entry, one of its slots
_NEEDS: dict[Intent, tuple[tuple[Slot, ...], ...]] = {
    Intent.BOOK_MEETING: ((Slot.DATE,), (Slot.START_TIME,)),
    Intent.RESCHEDULE_MEETING: ((Slot.NEW_DATE, Slot.NEW_TIME),),
}


@dataclass(frozen=True)
class Candidate:
    text: str
    score: float  # the recognizer's mean log-probability per token
    understood: Understanding | ParseFailure


@dataclass(frozen=True)
class Choice:
    index: int  # into the candidates
    doubtful: tuple[Slot, ...] = ()  # slots that a rival reading reads otherwise
    points: tuple[float, ...] = field(default=())  # each candidate's total, for the record


@dataclass(frozen=True)
class _Weighed:
    points: float  # understanding's alone
    total: float  # with the recognizer's score
    values: dict[Slot, object]


def choose(candidates: Sequence[Candidate], room_of: Callable[[str], str | None]) -> Choice:
    """The candidate to act on (the first on a tie) and the slots rivals make doubtful. `room_of`: the id of the
    room a slot's words surely name, None when they name none surely."""
    weighed = [_weigh(c, room_of) for c in candidates]
    best = max(range(len(candidates)), key=lambda i: (weighed[i].total, -i))
    chosen = weighed[best]
    doubtful: set[Slot] = set()
    for i, other in enumerate(weighed):
        understood = candidates[i].understood
        if i == best or not isinstance(understood, Understanding) or other.points < chosen.points:
            continue
        if candidates[best].score - candidates[i].score > RIVAL_MARGIN:
            continue
        chosen_intent = candidates[best].understood
        if isinstance(chosen_intent, Understanding) and understood.intent != chosen_intent.intent:
            continue
        # a slot both read, read otherwise (a reading that leaves a slot out contradicts nothing)
        doubtful |= {slot for slot in chosen.values.keys() & other.values.keys()
                     if chosen.values[slot] != other.values[slot]}
    return Choice(best, tuple(sorted(doubtful)), tuple(w.total for w in weighed))


def _weigh(candidate: Candidate, room_of: Callable[[str], str | None]) -> _Weighed:
    """Understanding's points for a reading: sure of its intent, complete, and consistent. Nothing is gained by
    tagging more: a slot read in full is worth nothing, a slot that cannot be read or is said twice costs."""
    understood = candidate.understood
    if not isinstance(understood, Understanding):
        return _Weighed(float("-inf"), float("-inf"), {})
    points = 0.0
    if understood.intent != Intent.OUT_OF_SCOPE:
        points += 2.0 if understood.confidence >= _SURE_INTENT else 1.0
    names = [slot.name for slot in understood.slots]
    needed = _NEEDS.get(understood.intent, ())
    if needed and all(any(name in names for name in either) for either in needed):
        points += 1.0  # nothing to ask for
    points -= 2.0 * (len(names) - len(set(names)))  # a slot said twice: which one is meant is not known
    if Slot.END_TIME in names and Slot.DURATION in names:
        points -= 2.0  # the end said twice, as a time and as a length ("at 2-4 an hour": "two for an hour")
    values: dict[Slot, object] = {}
    for slot in understood.slots:
        said = slot.text
        if slot.name in _TIMES:
            clock = parse_clock(said)
            if clock is None:
                points -= 2.0
            else:
                values[slot.name] = (clock.hour % 12, clock.minute, clock.meridiem)
                points -= 1.0 if clock.minute % 5 else 0.0  # nobody says "10:34" to book a room
        elif slot.name in _DATES:
            points -= 2.0 if parse_date(said, _ANY_DAY) is None else 0.0
        elif slot.name == Slot.DURATION:
            length = parse_duration(said)
            if length is None or length <= timedelta(0):
                points -= 2.0
            else:
                values[slot.name] = length
        elif slot.name == Slot.ROOM:
            room = room_of(said)
            points += 1.0 if room is not None else -1.0
            values[slot.name] = room
    return _Weighed(points, points + SCORE_WEIGHT * candidate.score, values)
