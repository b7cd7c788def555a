"""The test helper that compares recognizer output as words (tests/transcripts.py)."""

import pytest

from tests.transcripts import normalized


@pytest.mark.parametrize(("one", "other"), [
    ("Book Everest tomorrow at 9 for an hour.", "book everest tomorrow at nine for an hour"),
    ("Cancel my 3 p.m. in Denali", "cancel my 3pm in denali"),
    ("at 3 P.M.", "at three pm"),
    ("for forty-five minutes", "for 45 minutes"),
    ("9:30 a.m.", "9.30am"),
])
def test_the_same_words_compare_equal(one: str, other: str) -> None:
    assert normalized(one) == normalized(other)


@pytest.mark.parametrize(("one", "other"), [
    ("book everest tomorrow at 9", "book everest tomorrow at 10"),
    ("book Denali", "booked in Ollie"),
    ("at 3 pm", "at 3 am"),
])
def test_different_words_do_not(one: str, other: str) -> None:
    assert normalized(one) != normalized(other)
