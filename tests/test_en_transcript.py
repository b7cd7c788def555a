"""English recognizer forms with one meaning in this domain, put right before the model reads them; forms with
two readings left alone (assistant/language/en/transcript.py)."""

import pytest

from assistant.language.en.transcript import rewrite


@pytest.mark.parametrize(("heard", "meant"), [
    ("book Everest tomorrow from 9-10-30", "book Everest tomorrow from 9 to 10:30"),
    ("Book Fuji between 2-3-45 on Friday.", "Book Fuji between 2 to 3:45 on Friday."),
    ("I'm Book Everest, on Friday at Quarterpass 2.", "I'm Book Everest, on Friday at Quarter pass 2."),  # GPU tiny.en
])
def test_unambiguous_forms_are_put_right(heard: str, meant: str) -> None:
    assert rewrite(heard) == meant


@pytest.mark.parametrize("heard", ["book Everest on 9-10-30", "book Everest from 9-10", "the kitchen sink is broken",
                                   "a sink.", "Book Everest tomorrow at 9 for an hour.",
                                   "schedule a sink in Matterhorn at 4pm today"])  # the model's to read
def test_everything_else_is_left_as_heard(heard: str) -> None:
    assert rewrite(heard) == heard
