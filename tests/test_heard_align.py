"""A request's slots moved onto what a recognizer wrote for it (models/heard/align.py): numbers written as digits,
words run together, a room misheard across a word's edge; what cannot be told, or was not heard, is dropped with
its reason."""

from __future__ import annotations

import pytest

from models.example import Example
from models.heard.align import Misaligned, align


def request(text: str, intent: str = "book_meeting", **slots: str) -> Example:
    spans = []
    for name, said in slots.items():
        start = text.index(said)
        spans.append((start, start + len(said), name))
    return Example(text, intent, tuple(spans))


CASES = [
    (request("book everest at ten thirty for forty five minutes", room="everest", start_time="ten thirty",
             duration="forty five minutes"),
     "Book Everest at 1034 for 45 minutes.", {"room": "Everest", "start_time": "1034", "duration": "45 minutes"}),
    (request("book fuji at 3 pm tomorrow", room="fuji", start_time="3 pm", date="tomorrow"),
     "Book Fuji at 3 p.m. tomorrow.", {"room": "Fuji", "start_time": "3 p.m.", "date": "tomorrow"}),
    (request("will the olympus have space for 8 people on next saturday", room="olympus", people_count="8 people",
             date="next saturday"),
     "Will deal lumpus have space for eight people on the next Saturday.",
     {"room": "lumpus", "people_count": "eight people", "date": "next Saturday"}),
    (request("帮我订明天上午九点的会议室", date="明天", start_time="上午九点"),
     "帮我定明天上午9点的会议室", {"date": "明天", "start_time": "上午9点"}),
    (request("is anything free", intent="check_availability"), "Is anything free?", {}),
]


@pytest.mark.parametrize(("said", "heard", "slots"), CASES, ids=["digits", "meridiem", "misheard", "zh", "none"])
def test_slots_move_onto_the_recognized_words(said: Example, heard: str, slots: dict[str, str]) -> None:
    aligned = align(said, heard)
    assert aligned.text == heard and aligned.intent == said.intent
    assert dict(aligned.slot_texts()) == slots


@pytest.mark.parametrize(("said", "heard", "reason"), [
    (request("book everest tomorrow", room="everest", date="tomorrow"), "", "nothing heard"),
    (request("book everest tomorrow", room="everest", date="tomorrow"), "Book everest.", "slot not heard"),
    (request("book Denali tomorrow at nine", room="Denali", date="tomorrow", start_time="nine"),
     "Booked in Ollie tomorrow at 9", "a slot misheard beyond recognition"),  # "Ollie" would teach nothing true
    (request("what is going on in Matterhorn on Wednesday", room="Matterhorn", date="Wednesday"),
     "You'll be coming over the back and all the way", "heard too little of it"),
])
def test_what_cannot_be_told_is_dropped_with_its_reason(said: Example, heard: str, reason: str) -> None:
    with pytest.raises(Misaligned) as dropped:
        align(said, heard)
    assert dropped.value.reason == reason
