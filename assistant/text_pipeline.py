"""Text -> outcome: the order of the text stages in one place, for `assistant parse` and the voice server alike.

    text -> NLU (intent + slots) -> dialogue state (clarify / confirm / undo) -> normalizer -> dispatcher -> store

`act_many` takes turns (of one conversation, or of many: the voice server batches every session's utterances
into one model call) and returns one typed `TurnOutcome` per turn, in order. A turn that fails carries its
failure; the others are unaffected. Outcomes are turned into JSON only where they are written (the CLI's lines,
the server's events).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from assistant.asr.hypotheses import Hypothesis, alternatives_of, score_of
from assistant.booking.dialogue import Dialogue, Reopen
from assistant.booking.results import Rejected, Result
from assistant.booking.rooms import Room, RoomDirectory
from assistant.booking.store import Booking, BookingStore, StoreUnavailable
from assistant.domain import OUT_OF_SCOPE, Intent, Slot
from assistant.language.words import tail_after
from assistant.nlu.nbest import Candidate, choose
from assistant.nlu.parser import IntentSlotParser, ParseFailure, SlotValue, Understanding
from assistant.nlu.routing import LanguageRoutedParser
from engines.base import BackendInfo

__all__ = ["Turn", "TurnOutcome", "DayBookings", "TextPipeline", "spoken_turn"]


@dataclass(frozen=True)
class Turn:
    """One thing a person said (typed, or recognized from speech) in a conversation, at a reference time."""

    text: str
    conversation: str
    now: datetime  # aware; "tomorrow" and "at 9" are read against it
    preview: bool = False  # a reading of speech still going on: a dry run that leaves the conversation as it was
    # The speaker went on right after the last turn ended: `text` is the whole request heard again (that turn's
    # words and the new ones) and replaces what that turn did; `tail` is the new words alone.
    reopens: bool = False
    tail: str = ""
    owner: str | None = None  # who speaks (a token's identity or the conversation): owns what it books; None: local
    # Speech: the recognizer's other readings (text, score), best first, and the score of `text`; understanding
    # chooses among them all (assistant/nlu/nbest.py). A spoken time is also held to what people say (the guard).
    alternatives: tuple[Hypothesis, ...] = ()
    score: float = 0.0
    spoken: bool = False
    # said over the assistant's own spoken reply (barge-in): heard under its echo, so what it would book is
    # proposed ("Did you want to book ...? Say yes"), never booked at once
    cut_in: bool = False


def spoken_turn(text: str, conversation: str, now: datetime, earlier: str | None, *, preview: bool = False,
                owner: str | None = None, cut_in: bool = False) -> Turn:
    """A turn of speech; `earlier`: the words of the turn it reopens (None: it reopens none), so it carries the
    words it adds to them. The session and `bench turns` make their turns here alike."""
    return Turn(text, conversation, now, preview=preview, reopens=bool(earlier),
                tail=tail_after(earlier, text) if earlier else "", owner=owner, alternatives=alternatives_of(text),
                score=score_of(text), spoken=True, cut_in=cut_in)


@dataclass(frozen=True)
class TurnOutcome:
    """What became of one turn: what was understood and the result, or why the turn failed."""

    turn: Turn
    understood: Understanding | ParseFailure
    result: Result | None  # None only when the dialogue step failed (then `failure` says why)
    failure: Exception | None = None

    @property
    def intent(self) -> str:
        return self.understood.intent if isinstance(self.understood, Understanding) else OUT_OF_SCOPE

    @property
    def confidence(self) -> float:
        return self.understood.confidence if isinstance(self.understood, Understanding) else 0.0

    @property
    def slots(self) -> tuple[SlotValue, ...]:
        return self.understood.slots if isinstance(self.understood, Understanding) else ()

    def to_dict(self) -> dict[str, Any]:
        """The `assistant parse` line: what was understood, then `result` (or `error` when the turn failed)."""
        record = self.understood.to_dict()
        if self.result is not None:
            record["result"] = self.result.to_dict()
        elif isinstance(self.failure, StoreUnavailable):
            record["error"] = {"code": "store_unavailable", "message": f"{self.failure}; nothing was booked"}
        else:
            record["error"] = {"code": "internal", "message": f"{type(self.failure).__name__}: {self.failure}"}
        return record


@dataclass(frozen=True)
class DayBookings:
    """The rooms and one day's bookings in a time zone (the browser demo's day view)."""

    day: date
    zone: ZoneInfo
    rooms: tuple[Room, ...]
    bookings: tuple[Booking, ...]  # by start time


@dataclass
class TextPipeline:
    parser: IntentSlotParser | LanguageRoutedParser
    dialogue: Dialogue
    store: BookingStore  # the dialogue's store: read for the day view; one worker thread touches it
    rooms: RoomDirectory

    @property
    def backend(self) -> BackendInfo:
        return self.parser.backend.info()

    def act_many(self, turns: Sequence[Turn], *, commit: bool) -> list[TurnOutcome]:
        """Understand every turn in one batched model call, then act on each in order (turns of one
        conversation build on each other). A dialogue step that raises fails its own turn only."""
        # A turn that reopens the last one is also read by its new words alone, in the same model call: whether they
        # are a request of their own ("... and cancel my 3 pm") or a part of the one they continue ("until four").
        tails = {i: t.tail for i, t in enumerate(turns) if t.reopens and t.tail}
        # ... and each recognizer reading of a turn (its n-best) too, for understanding to choose from
        others = {i: t.alternatives for i, t in enumerate(turns) if t.alternatives}
        texts = [t.text for t in turns] + list(tails.values()) + [text for alts in others.values() for text, _ in alts]
        parsed = self.parser.parse_many(texts)
        alone = dict(zip(tails, parsed[len(turns):len(turns) + len(tails)], strict=True))
        readings = iter(parsed[len(turns) + len(tails):])
        outcomes = []
        for i, (turn, understood) in enumerate(zip(turns, parsed[: len(turns)], strict=True)):
            doubtful: tuple[Slot, ...] = ()
            if i in others:
                candidates = [Candidate(turn.text, turn.score, understood)] + [
                    Candidate(text, score, next(readings)) for text, score in others[i]]
                choice = choose(candidates, self._room_id)
                turn = replace(turn, text=candidates[choice.index].text) if choice.index else turn
                understood, doubtful = candidates[choice.index].understood, choice.doubtful
            outcomes.append(self._act(turn, understood, commit, alone.get(i), doubtful))
        return outcomes

    def _room_id(self, said: str) -> str | None:
        match = self.rooms.match(said)
        return match.room.key if match is not None and match.sure else None

    def _act(self, turn: Turn, understood: Understanding | ParseFailure, commit: bool,
             tail: Understanding | ParseFailure | None = None, doubtful: tuple[Slot, ...] = ()) -> TurnOutcome:
        if isinstance(understood, ParseFailure):
            return TurnOutcome(turn, understood, Rejected(understood.message))
        intent, slots = understood.intent, [(s.name, s.text) for s in understood.slots]
        guess = understood.guess
        # another reading of the recognizer, about as likely, names another room or time: proposed, not booked
        unsure = (bool(doubtful) or turn.cut_in) and intent == Intent.BOOK_MEETING
        reopen = None
        if turn.reopens:
            reopen = Reopen(turn.tail) if not isinstance(tail, Understanding) else \
                Reopen(tail.text, tail.intent, tuple((s.name, s.text) for s in tail.slots), tail.confidence)
            if isinstance(tail, Understanding) and not self.dialogue.reopens_request(turn.conversation, reopen,
                                                                                     understood.intent):
                # the new words are a request of their own: they are the turn, understood alone
                return self._act(replace(turn, text=tail.text, reopens=False, tail=""), tail, commit)
        try:
            if guess is not None and self.dialogue.expects_answer(turn.conversation):
                # "at 3 pm" alone is a weak request but a fine answer to "At what time?"
                intent, slots = guess.intent, [(s.name, s.text) for s in guess.slots]
            elif guess is not None and guess.intent == Intent.BOOK_MEETING and guess.slots:
                # A borderline booking ("book Denali" at 0.4) is asked about rather than rejected: what it would
                # book is proposed, and "yes" books it.
                intent, slots, unsure = guess.intent, [(s.name, s.text) for s in guess.slots], True
            if turn.preview:
                with self.dialogue.snapshot(turn.conversation):
                    result = self.dialogue.turn(turn.conversation, understood.text, intent, slots, turn.now,
                                                commit=False, unsure=unsure, owner=turn.owner, reopen=reopen,
                                                spoken=turn.spoken)
            else:
                result = self.dialogue.turn(turn.conversation, understood.text, intent, slots, turn.now,
                                            commit=commit, unsure=unsure, owner=turn.owner, reopen=reopen,
                                            spoken=turn.spoken)
        except Exception as exc:  # noqa: BLE001 - this turn fails; the batch's other turns go on
            return TurnOutcome(turn, understood, None, exc)
        return TurnOutcome(turn, understood, result)

    def day(self, day: date, zone: ZoneInfo) -> DayBookings:
        start = datetime.combine(day, time(0), zone)
        found = self.store.bookings(start, start + timedelta(days=1))
        return DayBookings(day, zone, tuple(self.rooms.rooms), tuple(sorted(found, key=lambda b: b.start)))
