"""The turn taker: when a turn ends, and what the turn covers. Sans I/O: no asyncio, no clock, no models.

    feed(pcm) -> the voice stream (VAD, endpointer) -> [decisions]
    ReadDue  -> the owner reads the request so far (what the turn model listens to) -> answer(reading)
             -> the turn model's verdict -> the silence that ends this turn -> the stream goes on

Decisions are taken in audio time, so the server's session and `assistant bench turns` drive this one class and
get the same turns from the same audio, however fast it arrives and however long each read takes.

- **Read at every pause.** A pause stops the stream until `answer()`: the verdict (complete, incomplete, unsure)
  sets the silence that ends the turn there; speech resuming makes the read stale.
- **Reopen.** Speech that starts within `amend_ms` of the end of the last turn, however that turn ended (early,
  held, the plain hangover), continues the same request: its reads and its end carry the audio from the start
  of the request (`reopens` names the turn it continues), so the recognizer hears the words in context and the
  owner understands them as one request that replaces what the earlier part did.
- **Heard whole.** Every audio handed out for decoding has its inner silences shortened
  (assistant/audio/silence.py): whisper ends its text at a long silence, and a held turn must not lose the words
  after one.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from assistant.audio.silence import shorten_silences
from assistant.audio.stream import (
    PartialDue,
    PauseDue,
    StreamEvent,
    UtteranceDropped,
    UtteranceEnded,
    UtteranceResumed,
    UtteranceStarted,
    VoiceStream,
)
from assistant.turn.models import Reading, TurnModel
from assistant.turn.policy import TurnSettings, TurnVerdict

__all__ = ["TurnTaker", "TurnBegan", "TurnEnd", "ReadDue", "Verdict", "SpeechWentOn", "TurnEnded", "SpeechDropped",
           "PartialDue", "Decision", "MAX_REQUEST_MS"]

MAX_REQUEST_MS = 25_000  # a reopened request is decoded whole: it must fit whisper's 30 s window


@dataclass(frozen=True)
class TurnBegan:
    utterance: int
    start_ms: int  # where the utterance (with its pre-roll) begins
    reopens: int | None  # the utterance whose turn this speech continues, if it came within amend_ms of its end


@dataclass(frozen=True)
class ReadDue:
    """The speaker paused: read `audio` (the request so far) and call `TurnTaker.answer`."""

    utterance: int
    audio: bytes  # 16 kHz PCM to decode: from the start of the request, inner silences shortened
    at_ms: int
    speech_end_ms: int
    reopens: int | None


@dataclass(frozen=True)
class Verdict:
    utterance: int
    at_ms: int
    verdict: TurnVerdict


@dataclass(frozen=True)
class SpeechWentOn:
    utterance: int
    at_ms: int


class TurnEnd(StrEnum):
    """How a turn ended: the verdict of the read in the pause it ended in, the plain hangover, or a forced cut."""

    COMPLETE = "complete"
    INCOMPLETE = "incomplete"
    UNSURE = "unsure"
    HANGOVER = "hangover"  # no read in this pause (none asked, shed, failed, or speech resumed since)
    FORCED = "forced"  # cut at the maximum utterance length while speech went on


@dataclass(frozen=True)
class TurnEnded:
    utterance: int
    audio: bytes  # to decode: from the start of the request, inner silences shortened
    start_ms: int
    end_ms: int  # the last voiced frame
    decided_ms: int  # where the end was decided
    forced: bool  # cut at the maximum utterance length while speech went on
    ended_by: TurnEnd
    heard: str | None  # the read's words when the turn ended in the pause that was read: no second decode
    reopens: int | None  # the turn this one continues (its words are part of `audio`)
    pauses: int  # pauses read inside this utterance


@dataclass(frozen=True)
class SpeechDropped:
    utterance: int
    start_ms: int
    reason: str


Decision = TurnBegan | PartialDue | ReadDue | Verdict | SpeechWentOn | TurnEnded | SpeechDropped


@dataclass(frozen=True)
class _Read:
    due: ReadDue
    text: str | None
    verdict: TurnVerdict | None  # None: not read (shed, failed): the plain hangover


class TurnTaker:
    def __init__(self, stream: VoiceStream, model: TurnModel, settings: TurnSettings) -> None:
        self.stream = stream
        self.model = model
        self.settings = settings
        self._pre_roll_ms = stream.config.endpointer.pre_roll_ms
        self._due: ReadDue | None = None  # the read asked for and not yet answered
        self._read: _Read | None = None  # the answered read of the current pause, while no voice came after it
        self._heard: dict[int, str] = {}  # utterance -> the words of its last read (the model's agreement check)
        self._pauses: dict[int, int] = {}
        self._request: list[bytes] = []  # the audio of the turns the open request is made of so far
        self._request_turn: int | None = None  # the last of those turns (what speech soon after it reopens)
        self._ended_ms: int | None = None  # where that turn ended
        self._reopens: dict[int, int] = {}  # utterance -> the turn it continues

    @property
    def awaiting_read(self) -> bool:
        return self._due is not None

    def reopened(self, utterance: int) -> int | None:
        """The turn this utterance continues, while it is spoken (its partials show the whole request)."""
        return self._reopens.get(utterance)

    def feed(self, pcm: bytes) -> list[Decision]:
        return self._decide(self.stream.feed(pcm))

    def finish(self) -> list[Decision]:
        """The client's audio ended: a read still unanswered is dropped (the plain hangover), the open
        utterance ends."""
        self._due = None
        return self._decide(self.stream.finish())

    def answer(self, reading: Reading | None) -> list[Decision]:
        """The answer to the ReadDue: what was read (what the turn model listens to), or None when nothing could
        be read (shed under load, failed): the plain hangover. The turn model gives its verdict, and the stream
        goes on from the frame where the pause began."""
        due, self._due = self._due, None
        if due is None:
            raise RuntimeError("answer() answers a ReadDue; none is waiting")
        verdict = None if reading is None else self.model.verdict(reading, self._heard.get(due.utterance))
        text = None if reading is None else reading.text
        self._read = _Read(due, text, verdict)
        if text is not None:
            self._heard[due.utterance] = text
        decisions: list[Decision] = [Verdict(due.utterance, due.at_ms, verdict)] if verdict is not None else []
        return decisions + self._decide(self.stream.decide(verdict.hangover_ms if verdict else None))

    def _decide(self, events: list[StreamEvent]) -> list[Decision]:
        out: list[Decision] = []
        for event in events:
            decision = self._on(event)
            if decision is not None:
                out.append(decision)
        return out

    def _on(self, event: StreamEvent) -> Decision | None:
        if isinstance(event, UtteranceStarted):
            return self._began(event)
        if isinstance(event, PartialDue):
            return PartialDue(event.utterance, self._audio(event.utterance, event.audio), event.at_ms)
        if isinstance(event, PauseDue):
            self._read = None
            self._pauses[event.utterance] = self._pauses.get(event.utterance, 0) + 1
            self._due = ReadDue(event.utterance, self._audio(event.utterance, event.audio), event.at_ms,
                                event.speech_end_ms, self._reopens.get(event.utterance))
            return self._due
        if isinstance(event, UtteranceResumed):
            self._read = None  # the speaker went on: what was read at the pause is stale
            return SpeechWentOn(event.utterance, event.at_ms)
        if isinstance(event, UtteranceEnded):
            return self._ended(event)
        assert isinstance(event, UtteranceDropped)
        return SpeechDropped(event.utterance, event.start_ms, event.reason)

    def _began(self, event: UtteranceStarted) -> TurnBegan:
        """Speech soon after the last turn ended continues that turn's request, unless the request would no
        longer fit one decode."""
        heard_at = event.start_ms + self._pre_roll_ms  # start_ms includes the pre-roll
        reopens = None
        if self._ended_ms is not None and self._request_turn is not None and \
                heard_at - self._ended_ms <= self.settings.amend_ms and \
                self._request_ms() + self.stream.config.endpointer.max_utterance_ms <= MAX_REQUEST_MS:
            reopens = self._request_turn
            self._reopens[event.utterance] = reopens
        else:
            self._request = []
        return TurnBegan(event.utterance, event.start_ms, reopens)

    def _ended(self, event: UtteranceEnded) -> TurnEnded:
        """The turn is over: with the read's words when it ended in the pause that was read. Its audio joins the
        request's, which speech soon after this end reopens (a cough in between, dropped, changes nothing)."""
        read, self._read = self._read, None
        if read is not None and (read.due.utterance, read.due.speech_end_ms) != (event.utterance, event.end_ms):
            read = None  # read before voice that came later: stale
        if event.forced:
            ended_by = TurnEnd.FORCED
        else:
            ended_by = TurnEnd(read.verdict.kind) if read is not None and read.verdict is not None else \
                TurnEnd.HANGOVER
        audio = self._audio(event.utterance, event.audio)
        reopens = self._reopens.pop(event.utterance, None)
        self._request.append(event.audio)
        self._request_turn = event.utterance
        # a forced cut goes on at once: the next piece is its own turn (the request would outgrow one decode)
        self._ended_ms = None if event.forced else event.decided_ms
        self._heard.pop(event.utterance, None)
        heard = read.text if read is not None and not event.forced else None
        return TurnEnded(event.utterance, audio, event.start_ms, event.end_ms, event.decided_ms, event.forced,
                         ended_by, heard, reopens, self._pauses.pop(event.utterance, 0))

    def _request_ms(self) -> int:
        return sum(len(piece) for piece in self._request) * 1000 // (2 * 16_000)

    def _audio(self, utterance: int, audio: bytes) -> bytes:
        """What to decode for this utterance so far: the request's earlier turns first when it reopens them."""
        earlier = b"".join(self._request) if utterance in self._reopens else b""
        return shorten_silences(earlier + audio)
