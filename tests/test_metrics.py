import pytest

from models.metrics import score


def test_entity_level_scoring() -> None:
    gold = [("book_meeting", ["B-room", "O", "B-start_time", "I-start_time"]),
            ("cancel_meeting", ["O", "B-title"])]
    pred = [("book_meeting", ["B-room", "O", "B-start_time", "O"]),  # start_time span cut short: wrong entity
            ("cancel_meeting", ["O", "B-title"])]
    s = score(gold, pred)
    assert s.intent_accuracy == 100.0
    assert s.slot_precision == pytest.approx(200 / 3)
    assert s.slot_recall == pytest.approx(200 / 3)
    assert s.slot_f1 == pytest.approx(200 / 3)
    assert s.sentence_accuracy == 50.0


def test_wrong_intent_fails_the_sentence() -> None:
    s = score([("list_bookings", ["B-date"])], [("book_meeting", ["B-date"])])
    assert (s.intent_accuracy, s.slot_f1, s.sentence_accuracy) == (0.0, 100.0, 0.0)


def test_no_slots_anywhere_is_zero_f1_not_a_crash() -> None:
    assert score([("out_of_scope", ["O"])], [("out_of_scope", ["O"])]).slot_f1 == 0.0
    with pytest.raises(ValueError):
        score([], [("x", [])])
