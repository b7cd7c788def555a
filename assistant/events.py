"""The websocket protocol's messages as typed events, and the codec between them and the wire. No I/O here.

Client -> server: a JSON `start`, then binary audio frames (pcm_s16le), JSON `playback` reports of spoken replies,
then a JSON `stop`.
Server -> client: JSON events `ready`, `speech_start`, `speech_end`, `partial`, `turn`, `transcript`, `intent`,
`result`, `latency`, `reply_audio`, `reply_audio_end`, `error`, and binary messages of reply audio (ReplyFrame).
Every message carries `"protocol": PROTOCOL_VERSION`. See docs/protocol.md.

Both sides use this module: the server decodes client messages and writes events, the clients (send, mic, the
load benchmark) write `start`/`stop` and read events, so the two can only disagree in one place.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar

from assistant.errors import ProtocolError
from assistant.language.registry import AUTO, CODES, DEFAULT, SESSION_LANGUAGES, Spoken, spoken

__all__ = [
    "PROTOCOL_VERSION", "MAX_TEXT_MESSAGE", "Start", "Stop", "Audio", "ClientMessage",
    "decode_client", "ServerEvent", "Ready", "SpeechStart", "SpeechEnd", "Partial", "Transcript", "IntentEvent",
    "ResultEvent", "TurnEvent", "Latency", "ErrorEvent", "decode_server", "server_event", "Playback",
    "ReplyAudio", "ReplyAudioEnd", "ReplyFrame", "REPLY_HEADER", "ReplyHeard", "decode_server_message",
]

PROTOCOL_VERSION = 1
MAX_TEXT_MESSAGE = 16 * 1024  # a control message is small; anything bigger is a client bug


# ---- client -> server ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Start:
    sample_rate: int
    format: str = "pcm_s16le"
    channels: int = 1
    timezone: str = "UTC"
    now: str | None = None  # ISO 8601 reference time, for reproducible tests
    conversation_id: str | None = None
    token: str | None = None  # the server's access token, for clients that cannot send an Authorization header
    # what the speaker speaks: "en" (default), "zh" (Chinese, and Chinese with English), or "auto" (told apart in
    # every utterance; each transcript says which)
    language: str | None = None
    # replies spoken as well as shown: the server streams their audio as binary messages (ReplyFrame) between a
    # `reply_audio` and a `reply_audio_end`; a client that asks must play or skip them
    speech: bool | None = None

    def heard_in(self) -> Spoken:
        """What the session is heard in: the code read once, here (a decoded start's code was checked)."""
        return spoken(self.language) if self.language else DEFAULT

    def to_wire(self) -> str:
        """The client's side of the codec; fields left unset are left out."""
        values = {k: v for k, v in asdict(self).items() if v is not None}
        return json.dumps({"type": "start", "protocol": PROTOCOL_VERSION, **values}, ensure_ascii=False)


@dataclass(frozen=True)
class Stop:
    def to_wire(self) -> str:
        return json.dumps({"type": "stop", "protocol": PROTOCOL_VERSION})


@dataclass(frozen=True)
class Audio:
    pcm: bytes


@dataclass(frozen=True)
class Playback:
    """What the client did with a spoken reply: `started` playing it when its own audio sent so far reached
    `at_ms` (the server's echo canceller then knows where in the microphone stream the reply is, whatever the
    network and the client's buffers added), `stopped` it after `played_ms` (the speaker cut in: barge-in), or
    `finished` it."""

    reply: int
    state: str  # "started" | "stopped" | "finished"
    played_ms: int = 0
    at_ms: int | None = None  # "started": the client's audio sent so far, in ms, when the reply's sound began

    def to_wire(self) -> str:
        data: dict[str, Any] = {"type": "playback", "protocol": PROTOCOL_VERSION, "reply": self.reply,
                                "state": self.state, "played_ms": self.played_ms}
        if self.at_ms is not None:
            data["at_ms"] = self.at_ms
        return json.dumps(data)


PLAYBACK_STATES = ("started", "stopped", "finished")
ClientMessage = Start | Stop | Audio | Playback

_START_TYPES: dict[str, tuple[type, ...]] = {
    "sample_rate": (int,), "format": (str,), "channels": (int,), "timezone": (str,), "now": (str, type(None)),
    "conversation_id": (str, type(None)), "token": (str, type(None)), "language": (str, type(None)),
    "speech": (bool, type(None)),
}
_TYPE_NAMES = {int: "a whole number", str: "text", type(None): "null", float: "a fraction", bool: "true/false",
               list: "a list", dict: "an object"}
MAX_START_TEXT = 256  # any text field of start (a zone name, an id, a token)


def decode_client(message: str | bytes) -> ClientMessage:
    """One websocket message from a client; raises ProtocolError with a code a client can act on."""
    if isinstance(message, bytes):
        return Audio(message)
    if len(message) > MAX_TEXT_MESSAGE:
        raise ProtocolError("message_too_large", f"a text message is at most {MAX_TEXT_MESSAGE} bytes")
    try:
        data = json.loads(message)
    except json.JSONDecodeError as exc:
        raise ProtocolError("bad_json", f"not JSON: {exc.msg} at character {exc.pos}") from exc
    except RecursionError:  # "[[[[..." thousands deep: no message of the protocol nests
        raise ProtocolError("bad_json", "not JSON the protocol uses: nested too deep") from None
    except ValueError:  # an integer of thousands of digits (Python's int limit)
        raise ProtocolError("bad_json", "not JSON the protocol uses: a number too long") from None
    if not isinstance(data, dict):
        raise ProtocolError("bad_message", "a text message must be a JSON object with a \"type\"")
    kind = data.get("type")
    if kind == "stop":
        return Stop()
    if kind == "playback":
        return _playback(data)
    if kind != "start":
        raise ProtocolError("unknown_type", f"unknown message type {kind!r}; expected \"start\", \"stop\" "
                                            "or \"playback\"")
    values = {k: v for k, v in data.items() if k not in ("type", "protocol")}
    unknown = set(values) - set(_START_TYPES)
    if unknown:
        raise ProtocolError("bad_start", f"unknown field(s) in start: {', '.join(sorted(unknown))}")
    if "sample_rate" not in values:
        raise ProtocolError("bad_start", "start needs \"sample_rate\" (e.g. 16000)")
    for key, value in values.items():
        if not isinstance(value, _START_TYPES[key]) or (isinstance(value, bool) and bool not in _START_TYPES[key]):
            # the type, never the value: a field may carry a secret (the token), and an error is no place for it
            expected = " or ".join(_TYPE_NAMES[t] for t in _START_TYPES[key])
            given = _TYPE_NAMES.get(type(value), "that")
            raise ProtocolError("bad_start", f"start field {key!r} must be {expected}, not {given}")
        if isinstance(value, str) and len(value) > MAX_START_TEXT:
            raise ProtocolError("bad_start", f"start field {key!r} is longer than {MAX_START_TEXT} characters")
    if values.get("language") not in (None, *SESSION_LANGUAGES):
        raise ProtocolError("bad_language", f"start field 'language' must be one of {', '.join(CODES)} "
                                            f"or {AUTO.code}; got {_short(values['language'])}")
    return Start(**values)


def _playback(data: dict[str, Any]) -> Playback:
    reply, state, played, at = data.get("reply"), data.get("state"), data.get("played_ms", 0), data.get("at_ms")
    if not all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n < 1 << 31 for n in (reply, played)) or \
            not (at is None or (isinstance(at, int) and not isinstance(at, bool) and 0 <= at < 1 << 31)):
        raise ProtocolError("bad_message", "playback needs \"reply\" (and \"played_ms\", \"at_ms\"): whole "
                                           "numbers from 0")
    if state not in PLAYBACK_STATES:
        raise ProtocolError("bad_message", f"playback \"state\" is one of {', '.join(PLAYBACK_STATES)}")
    assert isinstance(reply, int) and isinstance(played, int) and isinstance(state, str)
    return Playback(reply, state, played, at)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# ---- server -> client ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ServerEvent:
    type: ClassVar[str] = ""

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "protocol": PROTOCOL_VERSION, **asdict(self)}

    def to_wire(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)


@dataclass(frozen=True)
class Ready(ServerEvent):
    type: ClassVar[str] = "ready"
    session_id: str
    sample_rate: int  # what the server resamples to
    language: str = DEFAULT.code  # what the recognizer hears this session as (start's "language"; "auto" too)
    speech: bool = False  # replies are spoken to this session (it asked, and the server has voices)


@dataclass(frozen=True)
class SpeechStart(ServerEvent):
    type: ClassVar[str] = "speech_start"
    utterance: int
    audio_ms: int  # audio time since the first frame


@dataclass(frozen=True)
class SpeechEnd(ServerEvent):
    type: ClassVar[str] = "speech_end"
    utterance: int
    audio_ms: int  # where speech ended in the audio
    forced: bool = False  # cut at the maximum utterance length
    discarded: bool = False  # too short to be a request (a cough, a click): nothing follows for this utterance


@dataclass(frozen=True)
class Partial(ServerEvent):
    """The utterance so far while it is spoken, with the running understanding: `intent` and the `result` it
    would give now (a dry run: nothing is booked; `final` is always false)."""

    type: ClassVar[str] = "partial"
    utterance: int
    text: str
    intent: str | None = None
    result: dict[str, Any] | None = None
    final: bool = False


@dataclass(frozen=True)
class TurnEvent(ServerEvent):
    """What the read at a pause said about the turn: `complete` (it ends after `hangover_ms` of silence),
    `incomplete` (held up to `hangover_ms` for what it is `waiting_for`), or `unsure` (the plain hangover)."""

    type: ClassVar[str] = "turn"
    utterance: int
    audio_ms: int  # where the pause was noticed
    verdict: str
    hangover_ms: int | None
    reason: str
    waiting_for: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Transcript(ServerEvent):
    type: ClassVar[str] = "transcript"
    utterance: int
    text: str
    language: str = DEFAULT.code  # the language it was recognized in


@dataclass(frozen=True)
class IntentEvent(ServerEvent):
    type: ClassVar[str] = "intent"
    utterance: int
    intent: str
    confidence: float
    slots: list[dict[str, Any]] = field(default_factory=list)
    # the words understood, which the slots' offsets index: the transcript, or another of the recognizer's
    # readings of the same audio that understanding chose (assistant/nlu/nbest.py)
    text: str = ""


@dataclass(frozen=True)
class ResultEvent(ServerEvent):
    type: ClassVar[str] = "result"
    utterance: int
    result: dict[str, Any]  # the same object as `assistant parse` prints under "result"


@dataclass(frozen=True)
class Latency(ServerEvent):
    type: ClassVar[str] = "latency"
    utterance: int
    stages_ms: dict[str, float]  # stage -> milliseconds since the utterance's speech end was decided


@dataclass(frozen=True)
class ReplyAudio(ServerEvent):
    """A spoken reply begins: binary messages of its audio follow (ReplyFrame), then `reply_audio_end`."""

    type: ClassVar[str] = "reply_audio"
    utterance: int
    reply: int  # 1, 2, ... within the session: each audio message starts with it
    text: str  # what is said (written for the ear; the result's own text is in `result`)
    sample_rate: int  # of the audio messages: 16-bit little-endian mono PCM
    language: str = DEFAULT.code


@dataclass(frozen=True)
class ReplyAudioEnd(ServerEvent):
    type: ClassVar[str] = "reply_audio_end"
    utterance: int
    reply: int
    audio_ms: int  # the audio sent
    cut: bool = False  # not all of it: the speaker cut in (or the session moved on to a newer reply)


REPLY_HEADER = 4  # bytes before a reply audio message's PCM: the reply's number, uint32 little-endian


@dataclass(frozen=True)
class ReplyFrame:
    """One binary message of a reply's audio (server -> client)."""

    reply: int
    pcm: bytes

    def to_wire(self) -> bytes:
        return self.reply.to_bytes(REPLY_HEADER, "little") + self.pcm

    @staticmethod
    def decode(message: bytes) -> ReplyFrame:
        if len(message) < REPLY_HEADER:
            raise ProtocolError("bad_message", "a reply audio message is shorter than its header")
        return ReplyFrame(int.from_bytes(message[:REPLY_HEADER], "little"), message[REPLY_HEADER:])


@dataclass(frozen=True)
class ReplyHeard(ServerEvent):
    """Not sent by the server: what a client that plays nothing (`assistant send`) prints once a reply's audio has
    all arrived; its line's "t" is when the first audio came (the voice-to-first-audio a listener would hear)."""

    type: ClassVar[str] = "reply_audio_received"
    utterance: int
    reply: int
    sample_rate: int
    audio_ms: int  # the audio that came
    cut: bool = False
    t_end: float = 0.0  # when the last of it came, on the same clock as "t"


@dataclass(frozen=True)
class ErrorEvent(ServerEvent):
    type: ClassVar[str] = "error"
    code: str
    message: str


_SERVER_EVENTS: dict[str, type[ServerEvent]] = {
    cls.type: cls for cls in (Ready, SpeechStart, SpeechEnd, Partial, TurnEvent, Transcript, IntentEvent,
                              ResultEvent, Latency, ReplyAudio, ReplyAudioEnd, ReplyHeard, ErrorEvent)
}


def decode_server(message: str | bytes) -> ServerEvent:
    """A server event back from the wire (clients and tests). Fields a newer server adds are ignored; an event
    this client does not know, or a malformed one, raises ProtocolError."""
    try:
        data = json.loads(message)
    except json.JSONDecodeError as exc:
        raise ProtocolError("bad_json", f"a server message is not JSON: {exc.msg}") from exc
    return server_event(data)


def decode_server_message(message: str | bytes) -> ServerEvent | ReplyFrame:
    """Any server message: a binary one is a spoken reply's audio (a client that asked for speech gets them)."""
    if isinstance(message, bytes):
        return ReplyFrame.decode(message)
    return decode_server(message)


def server_event(data: object) -> ServerEvent:
    """A server event from its decoded JSON object (a line that `assistant send` printed, say)."""
    if not isinstance(data, dict):
        raise ProtocolError("bad_message", "a server message must be a JSON object with a \"type\"")
    cls = _SERVER_EVENTS.get(data.get("type", ""))
    if cls is None:
        raise ProtocolError("unknown_type", f"unknown server event {data.get('type')!r}")
    names = {f.name for f in fields(cls)}
    try:
        return cls(**{k: v for k, v in data.items() if k in names})
    except TypeError as exc:  # a required field is missing
        raise ProtocolError("bad_message", f"server event {cls.type!r}: {exc}") from exc
