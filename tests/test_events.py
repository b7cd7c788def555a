"""The wire codec without sockets: every event round-trips, every bad client message gets a code."""

import json

import pytest

from assistant.events import (
    MAX_TEXT_MESSAGE,
    PROTOCOL_VERSION,
    Audio,
    ErrorEvent,
    IntentEvent,
    Latency,
    Partial,
    ProtocolError,
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
    ("x" * (MAX_TEXT_MESSAGE + 1), "message_too_large"),
])
def test_bad_client_messages_get_a_code(message: str, code: str) -> None:
    with pytest.raises(ProtocolError) as info:
        decode_client(message)
    assert info.value.code == code and info.value.message


@pytest.mark.parametrize("event", [
    Ready("s1", 16000), SpeechStart(1, 740), SpeechEnd(1, 2300, forced=True), Partial(1, "book ever"),
    Transcript(1, "Book Everest tomorrow at nine."),
    IntentEvent(1, "book_meeting", 0.99, [{"name": "room", "text": "Everest"}]),
    ResultEvent(1, {"type": "rejected", "reason": "x"}), Latency(1, {"transcript": 512.0, "result": 530.5}),
    ErrorEvent("bad_json", "not JSON"),
])
def test_server_events_round_trip(event: object) -> None:
    wire = event.to_wire()  # type: ignore[attr-defined]
    data = json.loads(wire)
    assert data["protocol"] == PROTOCOL_VERSION and data["type"] == type(event).type  # type: ignore[attr-defined]
    assert decode_server(wire) == event
