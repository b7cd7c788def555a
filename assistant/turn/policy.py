"""The end-of-turn policy: a reading of the words so far -> how much more silence ends the turn.

At a pause inside an utterance the server reads the audio so far (a decode and a dry-run understanding, nothing
committed) and asks this module what the reading means for the turn:

    complete    an executable command or an answerable question, confident, its words agreeing with the read
                before it: end the turn after a short silence (`complete_ms`) and act on this reading; a booking
                that could still grow (a start and no end or length said: "... at two [until four]") after a
                longer one (`complete_open_ms`), chosen from measured curves (docs/turn-taking.md)
    incomplete  a required slot is missing, the words end in one that asks for more ("at", "for", "um"), or a
                slot's words cannot be read (yet): hold the turn up to a long silence (`hold_ms`)
    unsure      anything else (a rejection, a question about a doubtful time, a room conflict): `unsure_ms`,
                or the plain hangover of [audio]

No model, no I/O: a pure function of the reading, so the policy is tested with plain values.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from assistant.booking.results import Answer, Check, Clarify, Command, Result
from assistant.domain import Intent, Slot
from assistant.errors import SettingError
from assistant.language.words import asks_for_more, words

__all__ = ["TurnSettings", "TurnVerdict", "VerdictKind", "COMPLETE", "INCOMPLETE", "UNSURE", "read_verdict",
           "acoustic_verdict", "transcripts_agree"]


class VerdictKind(StrEnum):
    """What a read at a pause says of the turn (the wire's `turn` event `verdict`)."""

    COMPLETE = "complete"  # the turn ends soon
    INCOMPLETE = "incomplete"  # held: the request goes on
    UNSURE = "unsure"  # the plain hangover


COMPLETE, INCOMPLETE, UNSURE = VerdictKind.COMPLETE, VerdictKind.INCOMPLETE, VerdictKind.UNSURE
TURN_MODELS = ("reading", "smart-turn", "hangover")

_REQUIRED = frozenset({Slot.ROOM, Slot.DATE, Slot.START_TIME, Slot.NEW_TIME, Slot.END_TIME, Slot.DURATION})
_LENGTH = frozenset({Slot.END_TIME, Slot.DURATION})  # a booking that says one of these cannot grow a length any more


@dataclass(frozen=True)
class TurnSettings:
    """[turn] in configs/*.toml; reported in /metrics."""

    model: str = "reading"  # reading (our schema) | smart-turn (acoustic, Smart Turn v3.2) | hangover (plain VAD)
    read_after_ms: int = 100  # silence inside an utterance before the words so far are read (or heard)
    complete_ms: int = 150  # silence that ends a turn read as complete
    complete_open_ms: int = 800  # ... as complete, but a booking with a start and no end or length said
    hold_ms: int = 1300  # silence that ends a turn read as incomplete
    complete_confidence: float = 0.8  # a complete reading needs at least this intent probability
    unsure_ms: int = 0  # silence that ends a turn read as unsure; 0: the [audio] hangover
    amend_ms: int = 1500  # speech starting this soon after a turn ended reopens it (the whole request is read again)
    smart_turn_threshold: float = 0.5  # Smart Turn's probability of a finished turn above which it ends

    def __post_init__(self) -> None:
        if self.model not in TURN_MODELS:
            raise SettingError("model", f"{self.model!r} is not one of {', '.join(TURN_MODELS)}")
        if min(self.read_after_ms, self.complete_ms, self.complete_open_ms, self.hold_ms) < 20 or self.amend_ms < 0 \
                or not (self.unsure_ms == 0 or 20 <= self.unsure_ms <= self.hold_ms):
            raise SettingError(None, "read_after_ms, complete_ms, complete_open_ms and hold_ms are at least one 20 ms "
                                     "frame; unsure_ms is 0 (the [audio] hangover) or between that and hold_ms")
        if not self.read_after_ms <= min(self.complete_ms, self.complete_open_ms) <= \
                max(self.complete_ms, self.complete_open_ms) <= self.hold_ms:
            raise SettingError(None, "expected read_after_ms <= complete_ms, complete_open_ms <= hold_ms")


@dataclass(frozen=True)
class TurnVerdict:
    kind: VerdictKind
    hangover_ms: int | None  # the silence that ends this turn; None: the configured hangover
    reason: str  # in words, for the client and the logs
    waiting_for: tuple[Slot, ...] = ()  # the slots an incomplete request lacks

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "hangover_ms": self.hangover_ms, "reason": self.reason,
                "waiting_for": list(self.waiting_for)}


def transcripts_agree(previous: str | None, current: str) -> bool:
    """The earlier read of this utterance says what this one says as far as it went (its last word may have
    been cut mid-word): the recognizer is not rewriting the request. With no earlier read nothing disagrees."""
    if not previous:
        return True
    before, now = words(previous)[:-1], words(current)
    return now[: len(before)] == before


def read_verdict(text: str, result: Result | None, confidence: float, previous: str | None,
                 settings: TurnSettings) -> TurnVerdict:
    """What a reading at a pause means for the turn. `result`: the dry run's result (None: nothing read)."""
    if not words(text):  # voice with no words yet: a hesitation ("um" is often not transcribed at all)
        return TurnVerdict(INCOMPLETE, settings.hold_ms, "no words yet")
    missing: tuple[Slot, ...] = ()
    if isinstance(result, Clarify) and result.doubt is None and not result.options:
        missing = tuple(Slot(m) for m in result.missing if m in _REQUIRED)
    last = asks_for_more(text)
    if last is not None:
        return TurnVerdict(INCOMPLETE, settings.hold_ms, f"ends in \"{last}\"", missing)
    if missing:
        return TurnVerdict(INCOMPLETE, settings.hold_ms, "missing " + ", ".join(missing), missing)
    if isinstance(result, Clarify) and result.doubt is not None and result.doubt.check == Check.UNREAD:
        # words a slot was tagged on but no reader can read ("on Monday yet", "quarter past two for"): most
        # often an expression still being said
        return TurnVerdict(INCOMPLETE, settings.hold_ms, f"cannot read \"{result.doubt.said}\" yet",
                           result.doubt.slots)
    if isinstance(result, Command | Answer) and confidence >= settings.complete_confidence:
        if not transcripts_agree(previous, text):
            return TurnVerdict(UNSURE, settings.unsure_ms or None, "the transcript changed since the last read")
        if isinstance(result, Command) and result.action == Intent.BOOK_MEETING and \
                not _LENGTH & {slot for slot, _ in result.spans}:
            return TurnVerdict(COMPLETE, settings.complete_open_ms, "a complete book_meeting with no end said")
        what = result.action if isinstance(result, Command) else "question"
        return TurnVerdict(COMPLETE, settings.complete_ms, f"a complete {what}")
    return TurnVerdict(UNSURE, settings.unsure_ms or None, "not a complete request")


def acoustic_verdict(probability: float, settings: TurnSettings) -> TurnVerdict:
    """Smart Turn's answer: the turn sounds finished (end now) or not (hold)."""
    if probability >= settings.smart_turn_threshold:
        return TurnVerdict(COMPLETE, settings.read_after_ms, f"sounds finished (p={probability:.2f})")
    return TurnVerdict(INCOMPLETE, settings.hold_ms, f"sounds unfinished (p={probability:.2f})")
