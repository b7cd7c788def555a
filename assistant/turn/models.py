"""Turn models behind one protocol: what a reading at a pause means for the turn.

- reading: the words so far, understood (a dry run): our schema says whether the request is complete;
- smart-turn: Smart Turn v3.2's probability that the speaker sounds finished (acoustic);
- hangover: no reading at all; the endpointer's plain hangover ends every turn.

Each says what it listens to at a pause (`listens`: the words, the sound, or nothing), so the owner of the
turn taker computes only that.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from assistant.booking.results import Result
from assistant.turn.policy import TurnSettings, TurnVerdict, acoustic_verdict, read_verdict

__all__ = ["Reading", "TurnModel", "ReadingTurnModel", "AcousticTurnModel", "HangoverTurnModel", "turn_model",
           "WORDS", "SOUND", "NOTHING"]

WORDS, SOUND, NOTHING = "words", "sound", "nothing"
Listens = Literal["words", "sound", "nothing"]


@dataclass(frozen=True)
class Reading:
    """What was read at a pause: the words and their dry-run understanding, or an acoustic probability."""

    text: str | None = None
    result: Result | None = None
    confidence: float = 0.0
    probability: float | None = None


class TurnModel(Protocol):
    name: str
    listens: Listens

    def verdict(self, reading: Reading, previous: str | None) -> TurnVerdict:
        """`previous`: the words read at this utterance's pause before (the recognizer's agreement with itself)."""
        ...


class ReadingTurnModel:
    name = "reading"
    listens: Listens = "words"

    def __init__(self, settings: TurnSettings) -> None:
        self.settings = settings

    def verdict(self, reading: Reading, previous: str | None) -> TurnVerdict:
        return read_verdict(reading.text or "", reading.result, reading.confidence, previous, self.settings)


class AcousticTurnModel:
    name = "smart-turn"
    listens: Listens = "sound"

    def __init__(self, settings: TurnSettings) -> None:
        self.settings = settings

    def verdict(self, reading: Reading, previous: str | None) -> TurnVerdict:
        return acoustic_verdict(reading.probability or 0.0, self.settings)


class HangoverTurnModel:
    name = "hangover"
    listens: Listens = "nothing"

    def __init__(self, settings: TurnSettings) -> None:
        self.settings = settings

    def verdict(self, reading: Reading, previous: str | None) -> TurnVerdict:
        raise RuntimeError("the hangover model reads nothing: the endpointer reports no pauses to it")


def turn_model(settings: TurnSettings) -> TurnModel:
    """The model [turn] model names (config.py has checked the name)."""
    if settings.model == "smart-turn":
        return AcousticTurnModel(settings)
    if settings.model == "hangover":
        return HangoverTurnModel(settings)
    return ReadingTurnModel(settings)
