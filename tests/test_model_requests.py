"""The real trained model on a handful of requests, through the parser the CLI uses."""

import pytest

from assistant.nlu.parser import IntentSlotParser, Understanding


def _understand(parser: IntentSlotParser, text: str) -> Understanding:
    result = parser.parse(text)
    assert isinstance(result, Understanding), result
    return result


def _slots(result: Understanding) -> dict[str, str]:
    return {s.name: s.text for s in result.slots}


@pytest.mark.parametrize(("text", "intent", "slots"), [
    ("book everest tomorrow at 9 for an hour", "book_meeting",
     {"room": "everest", "date": "tomorrow", "start_time": "9", "duration": "an hour"}),
    ("Book Kilimanjaro on Friday from 2 to 3:30 p.m. for the budget review.", "book_meeting",
     {"room": "Kilimanjaro", "date": "Friday", "start_time": "2", "end_time": "3:30 p.m.", "title": "budget review"}),
    ("everest tomorrow 10 to 11", "book_meeting",
     {"room": "everest", "date": "tomorrow", "start_time": "10", "end_time": "11"}),
    ("cancel my meeting in denali tomorrow at half past four", "cancel_meeting",
     {"room": "denali", "date": "tomorrow", "start_time": "half past four"}),
    ("move my 2 pm meeting to 4 pm", "reschedule_meeting", {"start_time": "2 pm", "new_time": "4 pm"}),
    ("is fuji free on monday at noon", "check_availability", {"room": "fuji", "date": "monday", "start_time": "noon"}),
    ("what meetings do i have tomorrow", "list_bookings", {"date": "tomorrow"}),
    ("what's the weather in paris tomorrow", "out_of_scope", {}),
    ("set a timer for ten minutes", "out_of_scope", {}),
    # what recognizers write, read by the model trained on it (models/heard): no rewrite puts these right first
    ("Book, Fuji, tomorrow at 1034 for an hour.", "book_meeting",
     {"room": "Fuji", "date": "tomorrow", "start_time": "1034", "duration": "an hour"}),
])
def test_requests(parser: IntentSlotParser, text: str, intent: str, slots: dict[str, str]) -> None:
    result = _understand(parser, text)
    assert result.intent == intent
    assert _slots(result) == slots
    assert 0.5 <= result.confidence <= 1.0


def test_slot_offsets_point_into_the_text(parser: IntentSlotParser) -> None:
    result = _understand(parser, "Uh, book the Matterhorn room next Tuesday, 3.45pm-5pm, with Priya and Tom.")
    assert result.intent == "book_meeting"
    for slot in result.slots:
        assert result.text[slot.start : slot.end] == slot.text
    assert [s.text for s in result.slots if s.name == "attendees"] == ["Priya", "Tom"]


def test_batch_answers_match_one_by_one(parser: IntentSlotParser) -> None:
    texts = ["book everest tomorrow at 9", "cancel the standup", "hello", "list my bookings on friday"]
    batched = parser.parse_many(texts)
    alone = [parser.parse(t) for t in texts]
    # Same answers; confidences may differ in the 4th decimal: dynamic INT8 scales activations per batch.
    assert [(u.intent, _slots(u)) for u in batched] == [(u.intent, _slots(u)) for u in alone]  # type: ignore[union-attr]
    assert [u.confidence for u in batched] == pytest.approx([u.confidence for u in alone], abs=1e-2)  # type: ignore[union-attr]


def test_a_misheard_request_keeps_its_room_and_day_and_never_gets_another_time(parser: IntentSlotParser) -> None:
    """"meeting" heard as "sink": the room and the day are read; the time is read as said or left for the dialogue
    to ask. The model built on 2026-12-07 (pinned numerics, docs/nlu.md#shipped-models) leaves "4pm" untagged here
    (its FP32 file too) where the model before read it: one request of a different training path; the heard dev
    split, 114 such requests, scores higher (sentence accuracy 68.42 against 67.54)."""
    result = _understand(parser, "schedule a sink in Matterhorn at 4pm today")
    slots = _slots(result)
    assert result.intent == "book_meeting" and slots["room"] == "Matterhorn" and slots["date"] == "today", slots
    assert slots.get("start_time", "4pm") == "4pm", slots
