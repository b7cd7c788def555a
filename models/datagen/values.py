"""Renderers for slot values: times, ranges, dates, durations, rooms, people, titles.

Each renderer takes (rng, kind) and returns pieces (text, slot label or None); the words around a value that are
not part of it ("at", "for", "on", "from ... to") are pieces without a label. A renderer writes in one of two
styles: "asr" (cased and punctuated as a speech recognizer writes: "9 a.m.", "10.30", "3:45 p.m.") or "plain"
(lower case, no punctuation around words).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from models.datagen.lexicon import (
    DIRECTORY_ROOMS,
    EXTRA_ROOMS,
    FIRST_NAMES,
    LAST_NAMES,
    MISHEARD_ROOMS,
    MONTHS,
    TEAMS,
    TITLES,
    WEEKDAYS,
    number_word,
    ordinal_suffix,
    ordinal_word,
)
from models.datagen.template import Piece, Renderer

__all__ = ["ValueRenderers"]


def _pick(rng: random.Random, weighted: list[tuple[float, str]]) -> str:
    total = sum(w for w, _ in weighted)
    x = rng.random() * total
    for weight, value in weighted:
        x -= weight
        if x <= 0:
            return value
    return weighted[-1][1]


@dataclass
class ValueRenderers:
    style: str  # "asr" or "plain"

    def table(self) -> dict[str, Renderer]:
        return {
            "room": self.room,
            "date": lambda rng, kind: self.date(rng, kind, "date"),
            "new_date": lambda rng, kind: self.date(rng, kind, "new_date"),
            "start_time": lambda rng, kind: self.time(rng, kind, "start_time"),
            "end_time": lambda rng, kind: self.time(rng, kind, "end_time"),
            "new_time": lambda rng, kind: self.time(rng, kind, "new_time"),
            "range": self.range,
            "duration": self.duration,
            "title": self.title,
            "attendees": self.attendees,
            "people_count": self.people_count,
        }

    # ---- times -------------------------------------------------------------------------------------------
    def _meridiem(self, rng: random.Random, pm: bool) -> str:
        if self.style == "plain":
            return _pick(rng, [(4, " pm" if pm else " am"), (1, "pm" if pm else "am")])
        word = "p.m." if pm else "a.m."
        short = "pm" if pm else "am"
        return _pick(rng, [(5, " " + word), (2, " " + short.upper()), (2, short), (1, " " + short)])

    def clock(self, rng: random.Random, hour24: int | None = None, minute: int | None = None,
              meridiem: bool | None = None) -> str:
        """One clock time as people say it or a recognizer writes it."""
        if hour24 is None:
            hour24 = rng.choice([8, 9, 9, 10, 10, 11, 11, 12, 13, 13, 14, 14, 15, 15, 16, 16, 17, 18, 7, 19])
        if minute is None:
            minute = int(_pick(rng, [(10, "0"), (4, "30"), (2, "15"), (2, "45"), (1, "10"), (1, "20"), (1, "50")]))
        pm = hour24 >= 12
        hour12 = hour24 % 12 or 12
        if meridiem is None:
            meridiem = rng.random() < 0.55
        suffix = self._meridiem(rng, pm) if meridiem else ""
        if hour24 == 12 and minute == 0 and rng.random() < 0.5:
            return rng.choice(["noon", "midday", "12 noon", "twelve noon"])
        form = _pick(rng, [(5, "digits"), (3, "words"), (2.5, "past"), (1, "h24"), (0.6, "compact"),
                           (0.4, "french"), (0.4, "zero")])
        if form == "h24" and (hour24 >= 13 or rng.random() < 0.3):
            return f"{hour24:02d}:{minute:02d}" if hour24 < 10 else f"{hour24}:{minute:02d}"
        if form == "french":  # "16h", "15h30": a 24-hour clock
            return f"{hour24}h" if minute == 0 else f"{hour24}h{minute:02d}"
        if form == "zero" and meridiem:  # "07:00 PM": a 12-hour clock written with a leading zero
            return f"{hour12:02d}:{minute:02d}" + suffix
        if form == "compact":  # "3p", "9a", "3:15p" (typed)
            letter = "p" if pm else "a"
            return (str(hour12) if minute == 0 else f"{hour12}:{minute:02d}") + letter
        if form == "past" and minute:
            relative = self._relative_clock(rng, hour12, minute)
            return f"{relative} {suffix.strip()}" if suffix else relative
        if form == "words":
            if minute == 0:
                base = number_word(hour12) + (" o'clock" if rng.random() < 0.2 else "")
            else:
                mins = f"oh {number_word(minute)}" if minute < 10 else number_word(minute)
                base = f"{number_word(hour12)} {mins}"
            return base + (" " + suffix.strip() if suffix else "")  # "nine am", never "nineam"
        if minute == 0:
            return (f"{hour12}:00" if rng.random() < 0.2 else str(hour12)) + suffix
        sep = ":" if self.style == "plain" or rng.random() < 0.6 else "."
        return f"{hour12}{sep}{minute:02d}" + suffix

    def _relative_clock(self, rng: random.Random, hour12: int, minute: int) -> str:
        """'quarter past three', 'a quarter to 10', 'half three', '20 minutes to 2', 'ten past nine'."""
        to = minute > 30
        hour = hour12 % 12 + 1 if to else hour12
        hour_text = number_word(hour) if rng.random() < 0.5 else str(hour)
        if hour == 12 and rng.random() < 0.5:  # "15 to noon", "quarter past midday"
            hour_text = rng.choice(["noon", "midday"])
        amount = 60 - minute if to else minute
        if amount == 30:
            british = rng.random() < 0.25 and hour_text not in ("noon", "midday")
            return f"half {hour_text}" if british else f"half past {hour_text}"
        if amount == 15:
            amount_text = _pick(rng, [(3, "quarter"), (2, "a quarter")])
        else:
            number = number_word(amount) if rng.random() < 0.5 else str(amount)
            amount_text = _pick(rng, [(1, f"{number} minutes"), (1, number)]) if amount > 12 else f"{number} minutes"
        word = _pick(rng, [(4, "to" if to else "past"), (1, "before" if to else "after")])
        return f"{amount_text} {word} {hour_text}"

    def _relative_start(self, rng: random.Random) -> str:
        """'in an hour', 'in 30 minutes', 'in two hours' (from now)."""
        return _pick(rng, [(2, "in an hour"), (1, "in one hour"), (2, f"in {rng.choice([10, 15, 20, 30, 45])} minutes"),
                           (1, "in half an hour"), (1, f"in {number_word(rng.choice([2, 3]))} hours"),
                           (1, f"in {rng.choice([2, 3])} hours")])

    def _with_period(self, rng: random.Random, hour24: int) -> str:
        """'9 in the morning', 'three in the afternoon'."""
        hour12 = hour24 % 12 or 12
        hour_text = number_word(hour12) if rng.random() < 0.4 else str(hour12)
        period = "in the morning" if hour24 < 12 else ("in the afternoon" if hour24 < 18 else "in the evening")
        if rng.random() < 0.2:
            period = "in the " + _pick(rng, [(1, "am" if hour24 < 12 else "pm"), (1, "AM" if hour24 < 12 else "PM")])
        return f"{hour_text} {period}"

    def time(self, rng: random.Random, kind: str, label: str) -> list[Piece]:
        if label == "start_time" and kind == "at" and rng.random() < 0.04:  # from now: no "at" before it
            return [(self._relative_start(rng), label)]
        if rng.random() < 0.08:
            text = self._with_period(rng, rng.choice([8, 9, 10, 11, 13, 14, 15, 16, 19]))
        else:
            text = self.clock(rng)
        if kind == "at":
            prefix = _pick(rng, [(8, "at "), (1, "at around "), (1, "around "), (2, "")])
            return [(prefix, None), (text, label)]
        if kind == "to":
            return [(rng.choice(["to ", "to ", "to ", "for "]), None), (text, label)]
        if kind == "until":
            return [(rng.choice(["until ", "till ", "to ", "ending at ", "until "]), None), (text, label)]
        return [(text, label)]

    def range(self, rng: random.Random, kind: str) -> list[Piece]:
        """A start and an end: 'from 2 to 3', '10-11', 'between 1 and 2 pm' (am/pm often on one end only)."""
        start = rng.choice([8, 9, 9, 10, 10, 11, 13, 13, 14, 14, 15, 15, 16, 12])
        length = _pick(rng, [(6, "60"), (3, "30"), (2, "120"), (1, "90"), (1, "45")])
        end_minutes = start * 60 + rng.choice([0, 0, 0, 30]) + int(length)
        start_minute = (end_minutes - int(length)) % 60
        end_h, end_m = divmod(end_minutes, 60)
        end_h = min(end_h, 23)
        both_meridiem = rng.random() < 0.25
        end_meridiem = both_meridiem or rng.random() < 0.5
        compact = kind == "bare" or rng.random() < 0.3
        digits = compact or rng.random() < 0.6
        start_text = self._range_end(rng, start, start_minute, both_meridiem, digits)
        end_text = self._range_end(rng, end_h, end_m, end_meridiem, digits)
        if compact and rng.random() < 0.5:
            sep = "-" if self.style == "asr" else rng.choice([" to ", " "])
            return [(start_text, "start_time"), (sep, None), (end_text, "end_time")]
        opener, joiner = _pick(rng, [
            (4, "from |to"), (2, "from |until"), (1, "from |till"), (2, "between |and"), (3, "|to"), (1, "|until"),
        ]).split("|")
        return [(opener, None), (start_text, "start_time"), (f" {joiner} ", None), (end_text, "end_time")]

    def _range_end(self, rng: random.Random, hour: int, minute: int, meridiem: bool, digits: bool) -> str:
        if minute in (15, 30, 45) and not meridiem and rng.random() < 0.15:  # "from a quarter past 2 to 3"
            return self._relative_clock(rng, hour % 12 or 12, minute)
        if digits and rng.random() < 0.08:  # "9a to 11a", "15h30-18h"
            if meridiem:
                return f"{hour % 12 or 12}" + (f":{minute:02d}" if minute else "") + ("p" if hour >= 12 else "a")
            return f"{hour}h" + (f"{minute:02d}" if minute else "")
        if digits:
            hour12 = hour % 12 or 12
            text = str(hour12) if minute == 0 else f"{hour12}:{minute:02d}"
            if minute and self.style == "asr" and rng.random() < 0.3:
                text = text.replace(":", ".")
            return text + (self._meridiem(rng, hour >= 12) if meridiem else "")
        return self.clock(rng, hour, minute, meridiem)

    # ---- dates -------------------------------------------------------------------------------------------
    def _cap(self, word: str) -> str:
        return word.lower() if self.style == "plain" else word

    def date_text(self, rng: random.Random, allow_weeks: bool = False) -> tuple[str, bool]:
        """A date expression and whether 'on' may precede it."""
        kind = _pick(rng, [(5, "relative"), (5, "weekday"), (4, "absolute"), (1.5, "period"), (0.6, "week"),
                           (1.2, "calendar")])
        weekday = self._cap(rng.choice(WEEKDAYS))
        month = self._cap(rng.choice(MONTHS))
        day = rng.randint(1, 28 if month.lower() == "february" else 30)
        if kind == "week" and allow_weeks:
            return rng.choice(["this week", "next week", "the rest of the week"]), False
        if kind == "relative" or kind == "week":
            return _pick(rng, [(6, "tomorrow"), (4, "today"), (2, "the day after tomorrow"),
                               (1, "day after tomorrow")]), False
        if kind == "weekday":
            return _pick(rng, [(4, weekday), (2, f"this {weekday}"), (2, f"next {weekday}"),
                               (1, f"{weekday} next week"), (0.5, f"coming {weekday}")]), True
        if kind == "calendar":  # "on" goes before a date, never before "in 3 days" or "a week from today"
            text = self._calendar_date(rng, weekday, month)
            return text, not text.startswith(("in ", "a week", "two weeks", "2 weeks"))
        if kind == "period":
            return _pick(rng, [(3, f"tomorrow {rng.choice(['morning', 'afternoon', 'evening'])}"),
                               (2, f"{weekday} {rng.choice(['morning', 'afternoon'])}"),
                               (2, f"this {rng.choice(['morning', 'afternoon', 'evening'])}"),
                               (1, "tonight")]), False
        day_word = ordinal_word(day) if rng.random() < 0.35 else ordinal_suffix(day)
        plain_day = str(day)
        short_month = month[:3]
        return _pick(rng, [
            (3, f"{month} {day_word}"), (2, f"{month} {plain_day}"), (1, f"{short_month} {plain_day}"),
            (2, f"the {day_word}"), (1, f"the {day_word} of {month}"), (1, f"{plain_day} {month}"),
            (1, f"{weekday} the {day_word}"), (1.5, f"{weekday}, {month} {plain_day}" if self.style == "asr"
                                                 else f"{weekday} {month} {plain_day}"),
            (0.5, f"{weekday} {month} {day_word}"),
        ]), True

    def _calendar_date(self, rng: random.Random, weekday: str, month: str) -> str:
        """Weeks, months and offsets: 'wednesday of next week', 'the last friday of october', '9/20',
        'a week from tomorrow', 'in 3 days', 'Fri, Sep 20', 'December 20, 2027'."""
        day = rng.randint(1, 28)
        n = rng.choice([2, 3, 4, 5, 7, 10])
        nth = rng.choice(["first", "second", "third", "fourth", "last", "1st", "2nd", "3rd"])
        short = _pick(rng, [(3, month[:3]), (1, "Sept" if month.lower().startswith("sep") else month[:3])])
        return _pick(rng, [
            (2, f"{weekday} of {rng.choice(['this', 'next'])} week"), (1, f"the {ordinal_suffix(day)} of next month"),
            (1, f"the {ordinal_word(day)} of this month"), (2, f"the {nth} {weekday} of {month}"),
            (1, f"{nth} {weekday} in {month}"), (1.5, f"{MONTHS.index(month.title()) + 1}/{day}"),
            (1, f"a week from {rng.choice(['tomorrow', 'today', weekday])}"),
            (1, f"in {n if rng.random() < 0.5 else number_word(n)} days"), (0.5, "in a week"),
            (0.5, f"in {rng.choice(['two', '2', 'three'])} weeks"),
            (1.5, f"{weekday[:3]}, {short} {day}" if self.style == "asr" else f"{weekday[:3]} {short} {day}"),
            (1, f"{short} {ordinal_suffix(day)}"), (1, f"{month} {day}, {rng.choice([2027, 2028])}"),
        ])

    def date(self, rng: random.Random, kind: str, label: str) -> list[Piece]:
        text, takes_on = self.date_text(rng, allow_weeks=kind == "list")
        if kind in ("on", "list") and takes_on and rng.random() < 0.6:
            return [("on ", None), (text, label)]
        if kind == "for":  # "move it to friday", "push it to tomorrow"
            return [(rng.choice(["to ", "to ", "until ", "for "]), None), (text, label)]
        return [(text, label)]

    # ---- durations ---------------------------------------------------------------------------------------
    def duration_text(self, rng: random.Random) -> str:
        n = rng.choice([2, 2, 3, 4])
        m = rng.choice([15, 20, 30, 30, 45, 45, 90, 10, 25, 40])
        return _pick(rng, [
            (5, "an hour"), (2, "one hour"), (2, "1 hour"), (2, f"{number_word(n)} hours"), (2, f"{n} hours"),
            (3, f"{m} minutes"), (2, f"{number_word(m)} minutes"), (1, f"{m} min"), (1, f"{m} mins"),
            (3, "half an hour"), (2, "an hour and a half"), (1, "one and a half hours"), (1, "1.5 hours"),
            (1, "an hour and fifteen minutes"), (1, "a couple of hours"), (1, "a full hour"), (0.5, "a half hour"),
            (0.5, "two and a half hours"), (0.5, f"{n}h"), (0.5, f"1h{rng.choice([15, 30, 45])}"),
            (0.3, "a quarter of an hour"), (0.3, "an hour and a quarter"),
        ])

    def duration(self, rng: random.Random, kind: str) -> list[Piece]:
        if kind == "adj":  # "a 30 minute meeting", "a one-hour slot"
            m = rng.choice([15, 30, 45, 60, 90])
            text = _pick(rng, [(3, f"{m} minute"), (1, f"{m}-minute"), (2, f"{number_word(m)} minute"),
                               (2, "one hour"), (1, "one-hour"), (1, "two hour"), (1, "half hour"),
                               (1, "half-hour"), (1, "90 minute")])
            return [(text, "duration")]
        text = self.duration_text(rng)
        if kind == "for":
            return [(rng.choice(["for ", "for ", "for ", "lasting ", "for about "]), None), (text, "duration")]
        return [(text, "duration")]

    # ---- rooms, people, titles ---------------------------------------------------------------------------
    def room(self, rng: random.Random, kind: str) -> list[Piece]:
        source = _pick(rng, [(12, "directory"), (2, "alias"), (2, "misheard"), (5, "extra")])
        if source == "directory":
            name = rng.choice(list(DIRECTORY_ROOMS))
        elif source == "alias":
            alias = rng.choice([a for aliases in DIRECTORY_ROOMS.values() for a in aliases])
            name = alias.removeprefix("the ").removesuffix(" room")
        elif source == "misheard":
            name = rng.choice(MISHEARD_ROOMS)
        else:
            name = rng.choice(EXTRA_ROOMS)
        name = self._cap(name)
        if kind == "bare":
            return [(name, "room")]
        before, after = _pick(rng, [(8, "|"), (3, "the |"), (3, "| room"), (3, "the | room"),
                                    (0.5, "the | conference room"), (0.5, "room |")]).split("|")
        if self.style == "asr" and after == " room" and rng.random() < 0.3:
            after = " Room"
        return [(before, None), (name, "room"), (after, None)]

    def person(self, rng: random.Random) -> str:
        first = rng.choice(FIRST_NAMES)
        name = f"{first} {rng.choice(LAST_NAMES)}" if rng.random() < 0.2 else first
        return self._cap(name)

    def attendees(self, rng: random.Random, kind: str) -> list[Piece]:
        if rng.random() < 0.15:
            people: list[Piece] = [(self._cap(rng.choice(TEAMS)).removeprefix("the "), "attendees")]
            pieces: list[Piece] = [("the " if rng.random() < 0.5 else "", None), *people]
        else:
            count = _pick(rng, [(5, "1"), (4, "2"), (2, "3"), (0.5, "4")])
            names = rng.sample([self.person(rng) for _ in range(6)], int(count))
            pieces = []
            for i, name in enumerate(names):
                if i > 0:
                    last = i == len(names) - 1
                    comma = "," if self.style == "asr" else ""
                    pieces.append((" and " if last else f"{comma} ", None))
                pieces.append((name, "attendees"))
        if kind == "with":
            return [(rng.choice(["with ", "with ", "with ", "and invite ", "inviting "]), None), *pieces]
        return pieces

    def people_count(self, rng: random.Random, kind: str) -> list[Piece]:
        n = rng.choice([2, 3, 4, 4, 5, 6, 6, 8, 8, 10, 12, 12, 15, 20])
        text = number_word(n) if rng.random() < 0.45 else str(n)
        if kind == "for":
            before, after = _pick(rng, [(5, "for | people"), (1, "for | persons"), (2, "for |"),
                                        (1, "for a team of |"), (1, "for a group of |"), (1, "for | of us"),
                                        (1, "that seats |"), (1, "with room for |"), (1, "for | attendees")]
                                  ).split("|")
            return [(before, None), (text, "people_count"), (after, None)]
        return [(text, "people_count")]

    def title(self, rng: random.Random, kind: str) -> list[Piece]:
        title = rng.choice(TITLES)
        if self.style == "asr" and rng.random() < 0.3:
            title = title.title()
        if kind == "for":
            before = rng.choice(["for the ", "for a ", "for our ", "for my ", "for the ", "for "])
            return [(before, None), (title, "title")]
        if kind == "called":
            before = rng.choice(["called ", "titled ", "named ", "about ", "called ", "for the "])
            if self.style == "asr" and rng.random() < 0.3:
                return [(before + '"', None), (title, "title"), ('"', None)]
            return [(before, None), (title, "title")]
        return [(title, "title")]
