"""Understanding chooses among the recognizer's readings (assistant/nlu/nbest.py): the sounder request wins over a
likelier but broken one, a close rival that reads another room or time makes those slots doubtful. The readings'
understandings are scripted (this tests the choice, not the tagger)."""

from __future__ import annotations

from assistant.domain import Intent, Slot
from assistant.nlu.nbest import RIVAL_MARGIN, Candidate, choose
from assistant.nlu.parser import ParseFailure, SlotValue, Understanding


def understood(text: str, intent: Intent = Intent.BOOK_MEETING, confidence: float = 0.98,
               **slots: str) -> Understanding:
    values = []
    for name, said in slots.items():
        start = text.index(said)
        values.append(SlotValue(Slot(name), said, start, start + len(said), 0.95))
    return Understanding(text, intent, confidence, tuple(values))


def room_of(said: str) -> str | None:
    return said.lower() if said.lower() in {"everest", "denali", "fuji"} else None


def candidate(text: str, score: float, **slots: str) -> Candidate:
    return Candidate(text, score, understood(text, **slots))


def test_a_readable_time_wins_over_a_likelier_run_together_one() -> None:
    heard = [candidate("Book Everest Friday at 1034 for 45 minutes", -0.20, room="Everest", date="Friday",
                       start_time="1034", duration="45 minutes"),
             candidate("Book Everest Friday at 10:30 for 45 minutes", -0.26, room="Everest", date="Friday",
                       start_time="10:30", duration="45 minutes")]
    assert choose(heard, room_of).index == 1


def test_a_known_room_wins_over_a_misheard_one() -> None:
    heard = [candidate("Booked in Ollie tomorrow at nine", -0.30, room="in Ollie", date="tomorrow",
                       start_time="nine"),
             candidate("Book Denali tomorrow at nine", -0.40, room="Denali", date="tomorrow", start_time="nine")]
    assert choose(heard, room_of).index == 1


def test_the_recognizers_best_stays_when_both_read_the_same() -> None:
    heard = [candidate("Book Everest tomorrow at nine.", -0.10, room="Everest", date="tomorrow", start_time="nine"),
             candidate("Book Everest tomorrow at 9", -0.12, room="Everest", date="tomorrow", start_time="9")]
    choice = choose(heard, room_of)
    assert choice.index == 0 and choice.doubtful == ()


def test_a_close_rival_with_another_time_makes_it_doubtful_a_distant_one_does_not() -> None:
    best = candidate("Book Everest tomorrow at nine", -0.10, room="Everest", date="tomorrow", start_time="nine")
    close = candidate("Book Everest tomorrow at five", -0.10 - RIVAL_MARGIN / 2, room="Everest", date="tomorrow",
                      start_time="five")
    far = candidate("Book Everest tomorrow at five", -0.10 - RIVAL_MARGIN * 2, room="Everest", date="tomorrow",
                    start_time="five")
    assert choose([best, close], room_of).doubtful == (Slot.START_TIME,)
    assert choose([best, far], room_of).doubtful == ()


def test_tagging_more_wins_nothing_a_time_said_twice_loses() -> None:
    # tiny.en's n-best for hibari's "Book Denali for [pause] two hours tomorrow at ten a.m." (tests/data/pauses)
    clean = candidate("Book Denali for two hours tomorrow at 10 a.m.", -0.32, room="Denali", duration="two hours",
                      date="tomorrow", start_time="10 a.m.")
    two_times = Candidate("Book Denali 4, two hours tomorrow at 10 am.", -0.30, Understanding(
        "Book Denali 4, two hours tomorrow at 10 am.", Intent.BOOK_MEETING, 0.97, (
            SlotValue(Slot.ROOM, "Denali", 5, 11, 0.9), SlotValue(Slot.START_TIME, "4", 12, 13, 0.6),
            SlotValue(Slot.DURATION, "two hours", 15, 24, 0.9), SlotValue(Slot.DATE, "tomorrow", 25, 33, 0.9),
            SlotValue(Slot.START_TIME, "10 am", 37, 42, 0.9))))
    assert choose([two_times, clean], room_of).index == 1


def test_an_end_said_as_a_time_and_as_a_length_loses() -> None:
    # joe's "Book Denali tomorrow at two for an hour" [pause] "with Maria", heard again as one (the pause corpus)
    run_together = candidate("Book Denali tomorrow at 2-4 an hour with Maria.", -0.25, room="Denali",
                             date="tomorrow", start_time="2", end_time="4", duration="an hour")
    meant = candidate("Book Denali tomorrow at 2 for an hour with Maria.", -0.28, room="Denali", date="tomorrow",
                      start_time="2", duration="an hour")
    assert choose([run_together, meant], room_of).index == 1


def test_a_rival_that_leaves_a_slot_out_contradicts_nothing() -> None:
    best = candidate("Book Denali for 2 hours tomorrow at 10 am.", -0.32, room="Denali", duration="2 hours",
                     date="tomorrow", start_time="10 am")
    rival = candidate("Book, Denali for. Two hours tomorrow at 10 am.", -0.36, room="Denali", date="tomorrow",
                      start_time="10 am")
    choice = choose([best, rival], room_of)
    assert choice.index == 0 and choice.doubtful == ()


def test_a_reading_that_failed_is_never_chosen() -> None:
    heard = [Candidate("", -0.01, ParseFailure("", "empty", "nothing to read")),
             candidate("Book Fuji tomorrow at three", -0.5, room="Fuji", date="tomorrow", start_time="three")]
    assert choose(heard, room_of).index == 1
