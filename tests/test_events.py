"""The wire codec without sockets: every event round-trips, every bad client message gets a code."""

import json

import pytest

from assistant.clients.send import Received
from assistant.errors import InputError, ProtocolError
from assistant.events import (
    MAX_TEXT_MESSAGE,
    PROTOCOL_VERSION,
    Audio,
    ErrorEvent,
    IntentEvent,
    Latency,
    Partial,
    Ready,
    ResultEvent,
    SpeechEnd,
    SpeechStart,
    Start,
    Stop,
    Transcript,
    decode_client,
    decode_server,
)


def test_client_messages() -> None:
    start = decode_client(json.dumps({"type": "start", "sample_rate": 48000, "timezone": "Europe/Berlin",
                                      "now": "2026-12-02T10:00:00", "conversation_id": "c1"}))
    assert start == Start(48000, "pcm_s16le", 1, "Europe/Berlin", "2026-12-02T10:00:00", "c1")
    chinese = decode_client('{"type": "start", "sample_rate": 16000, "language": "zh"}')
    assert isinstance(chinese, Start) and chinese.language == "zh"
    either = decode_client('{"type": "start", "sample_rate": 16000, "language": "auto"}')
    assert isinstance(either, Start) and either.language == "auto"
    assert decode_client('{"type": "stop"}') == Stop()
    assert decode_client(b"\x01\x02") == Audio(b"\x01\x02")


@pytest.mark.parametrize(("message", "code"), [
    ("not json", "bad_json"),
    ("[1, 2]", "bad_message"),
    ('{"type": "hello"}', "unknown_type"),
    ('{"sample_rate": 16000}', "unknown_type"),
    ('{"type": "start"}', "bad_start"),
    ('{"type": "start", "sample_rate": "16000"}', "bad_start"),
    ('{"type": "start", "sample_rate": true}', "bad_start"),
    ('{"type": "start", "sample_rate": 16000, "codec": "opus"}', "bad_start"),
    ('{"type": "start", "sample_rate": 16000, "language": "fr"}', "bad_language"),
    ('{"type": "start", "sample_rate": 16000, "language": 7}', "bad_start"),
    ("x" * (MAX_TEXT_MESSAGE + 1), "message_too_large"),
])
def test_bad_client_messages_get_a_code(message: str, code: str) -> None:
    with pytest.raises(ProtocolError) as info:
        decode_client(message)
    assert info.value.code == code and info.value.message


@pytest.mark.parametrize("event", [
    Ready("s1", 16000), Ready("s2", 16000, "zh"), SpeechStart(1, 740), SpeechEnd(1, 2300, forced=True),
    Partial(1, "book ever"),
    Transcript(1, "Book Everest tomorrow at nine."), Transcript(2, "帮我订明天上午九点的会议室", "zh"),
    IntentEvent(1, "book_meeting", 0.99, [{"name": "room", "text": "Everest"}]),
    ResultEvent(1, {"type": "rejected", "reason": "x"}), Latency(1, {"transcript": 512.0, "result": 530.5}),
    ErrorEvent("bad_json", "not JSON"),
])
def test_server_events_round_trip(event: object) -> None:
    wire = event.to_wire()  # type: ignore[attr-defined]
    data = json.loads(wire)
    assert data["protocol"] == PROTOCOL_VERSION and data["type"] == type(event).type  # type: ignore[attr-defined]
    assert decode_server(wire) == event


@pytest.mark.parametrize("start", [Start(48000), Start(44100, "pcm_s16le", 2, "Europe/Berlin", "2026-12-02T10:00:00",
                                                  "c1")])
def test_clients_write_start_and_stop_through_the_codec(start: Start) -> None:
    wire = start.to_wire()
    assert decode_client(wire) == start
    assert "null" not in wire and json.loads(wire)["protocol"] == PROTOCOL_VERSION  # unset fields are left out
    assert decode_client(Stop().to_wire()) == Stop()


def test_a_printed_event_line_reads_back_as_the_event() -> None:
    received = Received(IntentEvent(2, "book_meeting", 0.97, [{"name": "room", "text": "Fuji"}]), 3.25)
    assert Received.from_line(received.to_line()) == received


@pytest.mark.parametrize(("message", "code"), [
    ("{oops", "bad_json"), ("[]", "bad_message"), ('{"type": "hologram"}', "unknown_type"),
    ('{"type": "transcript", "text": "no utterance"}', "bad_message"),
])
def test_a_server_message_a_client_cannot_read_gets_a_code(message: str, code: str) -> None:
    with pytest.raises(ProtocolError) as info:
        decode_server(message)
    assert info.value.code == code


def test_a_newer_servers_extra_fields_are_ignored() -> None:
    assert decode_server('{"type": "partial", "utterance": 1, "text": "book", "stability": 0.4}') == Partial(1, "book")


def test_protocol_errors_are_input_errors_of_the_one_error_tree() -> None:
    assert issubclass(ProtocolError, InputError)
