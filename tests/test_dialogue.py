"""Scripted multi-turn dialogues: the dialogue state machine, the dispatcher and a real SQLite store; the NLU's
output is scripted, so these test the state machine and not the model."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from assistant.booking.dialogue import Dialogue, Reopen
from assistant.booking.dispatcher import Dispatcher
from assistant.booking.request import normalize_request
from assistant.booking.results import Answer, Clarify, Command, Rejected, Result
from assistant.booking.rooms import RoomDirectory
from assistant.booking.sqlite_store import SqliteStore
from assistant.config import DEFAULT_CONFIG
from tests.schema import assert_valid_result

NOW = datetime(2026, 12, 2, 10, 0, tzinfo=ZoneInfo("Europe/Berlin"))  # a Wednesday
Slots = list[tuple[str, str]]


@pytest.fixture
def dialogue(tmp_path: Path) -> Iterator[Dialogue]:
    rooms = RoomDirectory.load(DEFAULT_CONFIG.parent / "rooms.toml")
    store = SqliteStore(tmp_path / "bookings.sqlite")
    yield Dialogue(Dispatcher(store, rooms), rooms)
    store.close()


def say(d: Dialogue, text: str, intent: str, slots: Slots, conv: str = "c1", commit: bool = True,
        now: datetime = NOW) -> Result:
    result = d.turn(conv, text, intent, slots, now, commit=commit)
    assert_valid_result(result.to_dict())
    return result


def test_book_in_one_turn(dialogue: Dialogue) -> None:
    r = say(dialogue, "book fuji next monday at 9 am for two hours", "book_meeting",
            [("room", "fuji"), ("date", "next monday"), ("start_time", "9 am"), ("duration", "two hours")])
    assert isinstance(r, Command) and r.committed and r.executable and r.booking_id
    assert (r.room, r.start.isoformat(), r.end.isoformat()) == ("fuji", "2026-12-07T09:00:00+01:00",
                                                                 "2026-12-07T11:00:00+01:00")


def test_missing_time_is_asked_then_filled(dialogue: Dialogue) -> None:
    r = say(dialogue, "book everest tomorrow", "book_meeting", [("room", "everest"), ("date", "tomorrow")])
    assert isinstance(r, Clarify) and r.missing == ("start_time",) and r.question == "At what time?"
    r = say(dialogue, "at 3 pm", "book_meeting", [("start_time", "3 pm")])
    assert isinstance(r, Command) and r.committed
    assert (r.room, r.start.isoformat(), r.end.isoformat()) == ("everest", "2026-12-03T15:00:00+01:00",
                                                                 "2026-12-03T15:30:00+01:00")
    assert "no end or duration said: 30 minutes" in r.assumptions


def test_missing_date_then_time(dialogue: Dialogue) -> None:
    r = say(dialogue, "book denali", "book_meeting", [("room", "denali")])
    assert isinstance(r, Clarify) and set(r.missing) == {"date", "start_time"}
    r = say(dialogue, "friday", "out_of_scope", [("date", "friday")])
    assert isinstance(r, Clarify) and r.missing == ("start_time",)
    r = say(dialogue, "ten to eleven", "book_meeting", [("start_time", "ten"), ("end_time", "eleven")])
    assert isinstance(r, Command) and r.start.isoformat() == "2026-12-04T10:00:00+01:00"
    assert r.end.isoformat() == "2026-12-04T11:00:00+01:00"


def test_conflict_offers_alternatives_and_yes_takes_the_first(dialogue: Dialogue) -> None:
    slots = [("room", "fuji"), ("date", "tomorrow"), ("start_time", "9 am"), ("duration", "an hour")]
    assert isinstance(say(dialogue, "book fuji", "book_meeting", slots, conv="first"), Command)
    dry = say(dialogue, "book fuji", "book_meeting", slots, conv="second", commit=False)
    assert isinstance(dry, Command) and not dry.executable and dry.reason == "room taken"
    r = say(dialogue, "book fuji", "book_meeting", slots, conv="second")
    assert isinstance(r, Clarify) and "Fuji is taken" in r.question
    assert r.options[0].to_dict()["room"] == "denali"  # the smallest other free room
    assert r.options[-1].to_dict() == {"room": "fuji", "start": "2026-12-03T10:00:00+01:00",
                             "end": "2026-12-03T11:00:00+01:00"}  # the next free slot of Fuji
    yes = say(dialogue, "yes", "out_of_scope", [], conv="second")
    assert isinstance(yes, Command) and yes.committed and yes.room == "denali"
    assert yes.start.isoformat() == "2026-12-03T09:00:00+01:00"


def test_no_drops_the_proposal(dialogue: Dialogue) -> None:
    slots = [("room", "fuji"), ("date", "tomorrow"), ("start_time", "9 am")]
    say(dialogue, "book fuji", "book_meeting", slots, conv="a")
    assert isinstance(say(dialogue, "book fuji", "book_meeting", slots, conv="b"), Clarify)
    r = say(dialogue, "no", "out_of_scope", [], conv="b")
    assert isinstance(r, Answer) and r.text == "OK, nothing booked."


def test_undo_cancels_the_last_booking_of_this_conversation_only(dialogue: Dialogue) -> None:
    r = say(dialogue, "book olympus", "book_meeting", [("room", "olympus"), ("date", "friday"), ("start_time", "2")])
    assert isinstance(r, Command) and r.committed
    assert isinstance(say(dialogue, "undo", "out_of_scope", [], conv="someone-else"), Rejected)
    undo = say(dialogue, "cancel that", "cancel_meeting", [])
    assert isinstance(undo, Command) and undo.action == "cancel_meeting" and undo.booking_id == r.booking_id
    assert dialogue.dispatcher.store.get(r.booking_id or "") is None
    assert isinstance(say(dialogue, "undo", "out_of_scope", []), Rejected)


def test_state_expires_after_idle_time(dialogue: Dialogue) -> None:
    assert isinstance(say(dialogue, "book everest", "book_meeting", [("room", "everest"), ("date", "tomorrow")]),
                      Clarify)
    later = NOW + timedelta(minutes=6)
    r = say(dialogue, "at 3", "book_meeting", [("start_time", "3")], now=later)
    assert isinstance(r, Clarify) and "date" in r.missing  # the earlier question was forgotten


def test_no_room_named_picks_the_smallest_free_room_that_fits(dialogue: Dialogue) -> None:
    r = say(dialogue, "a room for 7", "book_meeting",
            [("people_count", "seven"), ("date", "tomorrow"), ("start_time", "10 am")])
    assert isinstance(r, Command) and r.room == "kilimanjaro"
    assert any("smallest free room" in a for a in r.assumptions)


def test_cancel_and_reschedule_name_the_meeting_they_act_on(dialogue: Dialogue) -> None:
    booked = say(dialogue, "book", "book_meeting", [("room", "matterhorn"), ("date", "tomorrow"),
                                                    ("start_time", "2 pm"), ("title", "design sync")])
    assert isinstance(booked, Command)
    move = say(dialogue, "move the design sync to friday", "reschedule_meeting",
               [("title", "design sync"), ("new_date", "friday")], commit=False)
    assert isinstance(move, Command) and move.booking_id == booked.booking_id and move.executable
    assert move.new_start is not None and move.new_start.isoformat() == "2026-12-04T14:00:00+01:00"
    cancel = say(dialogue, "cancel my 2 pm in matterhorn tomorrow", "cancel_meeting",
                 [("start_time", "2 pm"), ("room", "matterhorn"), ("date", "tomorrow")], commit=False)
    assert isinstance(cancel, Command) and cancel.booking_id == booked.booking_id
    assert cancel.start.isoformat() == "2026-12-03T14:00:00+01:00" and not cancel.committed
    nothing = say(dialogue, "cancel the standup", "cancel_meeting", [("title", "standup")])
    assert isinstance(nothing, Answer) and nothing.data["reason"] == "no such booking"


def test_answers_and_rejections(dialogue: Dialogue) -> None:
    say(dialogue, "book", "book_meeting", [("room", "everest"), ("date", "tomorrow"), ("start_time", "9 am")])
    check = say(dialogue, "is everest free tomorrow at 9", "check_availability",
                [("room", "everest"), ("date", "tomorrow"), ("start_time", "9")])
    assert isinstance(check, Answer) and check.data["available"] is False
    listing = say(dialogue, "what is booked tomorrow", "list_bookings", [("date", "tomorrow")])
    assert isinstance(listing, Answer) and [b["room"] for b in listing.data["bookings"]] == ["everest"]
    assert isinstance(say(dialogue, "play jazz", "out_of_scope", []), Rejected)
    unknown = say(dialogue, "book narnia", "book_meeting", [("room", "Narnia"), ("date", "tomorrow"),
                                                            ("start_time", "9")])
    assert isinstance(unknown, Clarify) and unknown.missing == ("room",) and "Narnia" in unknown.question


def test_attendees_are_names_without_the_punctuation_their_spans_took_along(dialogue: Dialogue) -> None:
    slots = [("room", "fuji"), ("date", "tomorrow"), ("start_time", "4 pm"), ("attendees", "Priya,"),
             ("attendees", "Tom."), ("attendees", "Tom"), ("attendees", "小王。"), ("attendees", ".")]
    assert normalize_request("book_meeting", slots, NOW, dialogue.rooms).attendees == ("Priya", "Tom", "小王")


def test_replayed_turn_never_books_twice(dialogue: Dialogue) -> None:
    slots = [("room", "fuji"), ("date", "tomorrow"), ("start_time", "4 pm")]
    request = normalize_request("book_meeting", slots, NOW, dialogue.rooms)
    first = dialogue.dispatcher.handle(request, NOW, commit=True, key="k")
    again = dialogue.dispatcher.handle(request, NOW, commit=True, key="k")
    assert isinstance(first, Command) and isinstance(again, Command) and first.booking_id == again.booking_id
    assert [b.id for b in dialogue.dispatcher.store.bookings(NOW, NOW + timedelta(days=2))] == [first.booking_id]


@pytest.mark.parametrize(("reply", "missing", "slots"), [
    ("at 3 pm", ("start_time",), [("start_time", "3 pm")]),
    ("Make it half past four, please.", ("start_time",), [("start_time", "half past four")]),
    ("Friday", ("date", "start_time"), [("date", "Friday")]),
    ("um, Denali", ("room",), [("room", "Denali")]),
    ("for an hour", ("duration",), [("duration", "an hour")]),
    ("purple", ("start_time", "date"), []),
])
def test_short_replies_are_read_for_the_missing_kind(dialogue: Dialogue, reply: str, missing: tuple[str, ...],
                                                     slots: Slots) -> None:
    from assistant.booking.dialogue import read_answer

    assert read_answer(reply, missing, dialogue.rooms, NOW) == slots


def test_a_fragment_the_model_calls_out_of_scope_still_answers_the_question(dialogue: Dialogue) -> None:
    assert isinstance(say(dialogue, "book fuji tomorrow", "book_meeting", [("room", "fuji"), ("date", "tomorrow")]),
                      Clarify)
    r = say(dialogue, "at 11", "out_of_scope", [])
    assert isinstance(r, Command) and r.start.isoformat() == "2026-12-03T11:00:00+01:00"


def test_moving_to_another_day_keeps_the_wall_clock_time_across_dst(dialogue: Dialogue) -> None:
    before_dst_end = datetime(2026, 10, 22, 10, 0, tzinfo=ZoneInfo("Europe/Berlin"))  # Thursday, +02:00
    booked = say(dialogue, "book", "book_meeting", [("room", "fuji"), ("date", "friday"), ("start_time", "2 pm"),
                                                    ("title", "retro")], now=before_dst_end)
    assert isinstance(booked, Command) and booked.start.isoformat() == "2026-10-23T14:00:00+02:00"
    moved = say(dialogue, "move the retro to monday", "reschedule_meeting", [("title", "retro"),
                                                                              ("new_date", "monday")],
                now=before_dst_end)
    assert isinstance(moved, Command) and moved.new_start is not None and moved.new_end is not None
    assert (moved.new_start.isoformat(), moved.new_end.isoformat()) == ("2026-10-26T14:00:00+01:00",
                                                                        "2026-10-26T14:30:00+01:00")


def test_availability_says_when_a_free_room_is_too_small(dialogue: Dialogue) -> None:
    r = say(dialogue, "is fuji free tomorrow at 10 for 6", "check_availability",
            [("room", "fuji"), ("date", "tomorrow"), ("start_time", "10"), ("people_count", "6")])
    assert isinstance(r, Answer) and r.data["available"] is True and r.data["fits"] is False
    assert "seats 4" in r.text and "denali" in r.data["free_rooms"]


def test_a_short_request_asks_for_what_is_missing_then_books_the_named_room(dialogue: Dialogue) -> None:
    asked = say(dialogue, "book denali", "book_meeting", [("room", "denali")])
    assert isinstance(asked, Clarify) and asked.missing == ("date", "start_time")
    booked = say(dialogue, "tomorrow at three pm for an hour", "book_meeting",
                 [("date", "tomorrow"), ("start_time", "three pm"), ("duration", "an hour")])
    assert isinstance(booked, Command) and booked.committed and booked.room == "denali"
    assert (booked.start.isoformat(), booked.end.isoformat()) == ("2026-12-03T15:00:00+01:00",
                                                                  "2026-12-03T16:00:00+01:00")


def test_a_fragment_amends_the_open_request(dialogue: Dialogue) -> None:
    assert isinstance(say(dialogue, "book fuji tomorrow", "book_meeting", [("room", "fuji"), ("date", "tomorrow")]),
                      Clarify)
    still = say(dialogue, "for an hour", "out_of_scope", [])  # a length, not the time asked for: kept, asked again
    assert isinstance(still, Clarify) and still.missing == ("start_time",)
    booked = say(dialogue, "from 11", "out_of_scope", [])
    assert isinstance(booked, Command) and booked.room == "fuji"
    assert (booked.start.isoformat(), booked.end.isoformat()) == ("2026-12-03T11:00:00+01:00",
                                                                  "2026-12-03T12:00:00+01:00")


def test_a_fragment_that_starts_a_conversation_asks_which_room(dialogue: Dialogue) -> None:
    asked = say(dialogue, "tomorrow at 3 for an hour", "book_meeting",
                [("date", "tomorrow"), ("start_time", "3"), ("duration", "an hour")])
    assert isinstance(asked, Clarify) and asked.missing == ("room",) and "Denali" in asked.question
    booked = say(dialogue, "Everest", "out_of_scope", [])
    assert isinstance(booked, Command) and booked.room == "everest" and booked.start.hour == 15
    picked = say(dialogue, "book a room for 4 people tomorrow at 3", "book_meeting",  # a request, not a fragment
                 [("people_count", "4"), ("date", "tomorrow"), ("start_time", "3")], conv="c2")
    assert isinstance(picked, Command) and picked.room != "everest"


def test_a_fragment_answers_a_pending_move(dialogue: Dialogue) -> None:
    booked = say(dialogue, "book fuji tomorrow at 10 for the retro", "book_meeting",
                 [("room", "fuji"), ("date", "tomorrow"), ("start_time", "10"), ("title", "retro")])
    assert isinstance(booked, Command) and booked.committed
    asked = say(dialogue, "move the retro", "reschedule_meeting", [("title", "retro")])
    assert isinstance(asked, Clarify) and asked.missing == ("new_time",)
    moved = say(dialogue, "friday at 3", "book_meeting", [("date", "friday"), ("start_time", "3")])
    assert isinstance(moved, Command) and moved.action == "reschedule_meeting" and moved.new_start is not None
    assert moved.new_start.isoformat() == "2026-12-04T15:00:00+01:00"


def test_a_weak_reading_is_proposed_and_yes_books_it(dialogue: Dialogue) -> None:
    slots = [("room", "denali"), ("date", "tomorrow"), ("start_time", "3 pm")]
    proposed = dialogue.turn("c1", "book denali tomorrow at 3 pm", "book_meeting", slots, NOW, commit=True,
                             unsure=True)
    assert isinstance(proposed, Clarify) and proposed.missing == ("confirmation",)
    assert "Did you want to book Denali" in proposed.question
    assert dialogue.dispatcher.store.bookings(NOW, NOW + timedelta(days=2)) == []
    booked = say(dialogue, "yes", "out_of_scope", [])
    assert isinstance(booked, Command) and booked.committed and booked.room == "denali" and booked.start.hour == 15


@pytest.mark.parametrize(("reply", "missing", "slots"), [
    ("for an hour", ("start_time",), [("duration", "an hour")]),
    ("from 11", ("date",), [("start_time", "11")]),
    ("until 5 pm", ("start_time",), [("end_time", "5 pm")]),
    ("in an hour", ("start_time",), [("start_time", "in an hour")]),
    ("in an hour", ("new_time",), [("new_time", "in an hour")]),
    ("and make it 45 minutes", ("start_time",), [("duration", "45 minutes")]),
])
def test_a_fragment_is_read_by_the_word_before_it(dialogue: Dialogue, reply: str, missing: tuple[str, ...],
                                                  slots: Slots) -> None:
    from assistant.booking.dialogue import read_answer

    assert read_answer(reply, missing, dialogue.rooms, NOW) == slots


def _booked_at_three(dialogue: Dialogue) -> Command:
    made = say(dialogue, "book everest tomorrow at three", "book_meeting",
               [("room", "everest"), ("date", "tomorrow"), ("start_time", "three")])
    assert isinstance(made, Command) and made.committed
    return made


_AT_THREE = [("room", "everest"), ("date", "tomorrow"), ("start_time", "three")]


def reopen(d: Dialogue, text: str, intent: str, slots: Slots, tail: Reopen, commit: bool = True) -> Result:
    """A turn that continues the last one: `text` the whole request heard again, `tail` the new words alone."""
    result = d.turn("c1", text, intent, slots, NOW, commit=commit, reopen=tail)
    assert_valid_result(result.to_dict())
    return result


@pytest.mark.parametrize(("text", "slots", "tail", "start", "end"), [
    ("book everest tomorrow at three for two hours", [*_AT_THREE, ("duration", "two hours")],
     Reopen("for two hours", "book_meeting", (("duration", "two hours"),), 0.6), "15:00", "17:00"),  # longer
    ("book everest tomorrow at three until five", [*_AT_THREE, ("end_time", "five")],
     Reopen("until five", "out_of_scope", (("end_time", "five"),), 0.3), "15:00", "17:00"),
    ("book everest tomorrow at three for an hour and a half", [*_AT_THREE, ("duration", "an hour and a half")],
     Reopen("and a half"), "15:00", "16:30"),  # a bare continuation: read only in the whole request
    # a correction changes the booking the turn before made: a new start keeps the length
    ("book everest tomorrow at three actually make it four", _AT_THREE, Reopen("actually make it four"), "16:00",
     "16:30"),
])
def test_a_reopened_turn_replaces_what_its_first_part_booked(dialogue: Dialogue, text: str, slots: Slots,
                                                             tail: Reopen, start: str, end: str) -> None:
    made = _booked_at_three(dialogue)
    with dialogue.snapshot("c1"):  # a read at a pause: a dry run, nothing moves
        preview = reopen(dialogue, text, "book_meeting", slots, tail, commit=False)
    assert isinstance(preview, Command) and preview.executable and not preview.committed
    assert preview.amends == made.booking_id  # it would replace the booking, not conflict with it
    assert dialogue.dispatcher.store.get(str(made.booking_id)) == dialogue.dispatcher.store.bookings(
        NOW, NOW + timedelta(days=7))[0]
    amended = reopen(dialogue, text, "book_meeting", slots, tail)
    assert isinstance(amended, Command) and amended.committed, amended
    assert amended.action == "reschedule_meeting" and amended.amends == made.booking_id
    assert amended.to_dict()["command"]["amends"] == made.booking_id  # the result says so
    assert amended.new_start is not None and amended.new_end is not None
    assert (amended.new_start.strftime("%H:%M"), amended.new_end.strftime("%H:%M")) == (start, end)
    booking = dialogue.dispatcher.store.get(str(made.booking_id))
    assert booking is not None and (booking.start, booking.end) == (amended.new_start, amended.new_end)
    assert len(dialogue.dispatcher.store.bookings(NOW, NOW + timedelta(days=7))) == 1  # moved, never a second


def test_a_correction_inside_one_utterance_replaces_what_it_corrects(dialogue: Dialogue) -> None:
    """Held through its pause, "book Olympus tomorrow at two. Actually, make it three." is one utterance: the
    correction is read over the words before it, as it is when it comes after a pause."""
    made = say(dialogue, "book olympus tomorrow at two for an hour. actually, make it three.", "book_meeting",
               [("room", "olympus"), ("date", "tomorrow"), ("start_time", "two"), ("duration", "an hour"),
                ("start_time", "three")])
    assert isinstance(made, Command) and made.committed, made
    assert (made.start.strftime("%H:%M"), made.end.strftime("%H:%M")) == ("15:00", "16:00")  # the length kept
    moved = say(dialogue, "book everest tomorrow at three, actually on friday", "book_meeting",
                [("room", "everest"), ("date", "tomorrow"), ("start_time", "three"), ("date", "friday")])
    assert isinstance(moved, Command) and moved.committed and moved.start.strftime("%a %H:%M") == "Fri 15:00"


def test_a_first_part_heard_as_another_room_is_undone_as_the_right_room_is_booked(dialogue: Dialogue) -> None:
    """'Book Denali tomorrow at three' alone; the whole request heard in context says Everest: one transaction
    cancels the first guess and books the room said."""
    first = say(dialogue, "book denali tomorrow at three", "book_meeting",
                [("room", "denali"), ("date", "tomorrow"), ("start_time", "three")])
    assert isinstance(first, Command) and first.committed
    replaced = reopen(dialogue, "book everest tomorrow at three for an hour", "book_meeting",
                      [*_AT_THREE, ("duration", "an hour")], Reopen("for an hour"))
    assert isinstance(replaced, Command) and replaced.committed and replaced.action == "book_meeting"
    assert replaced.room == "everest" and replaced.amends == first.booking_id
    left = dialogue.dispatcher.store.bookings(NOW, NOW + timedelta(days=7))
    assert [(b.room, b.id) for b in left] == [("everest", replaced.booking_id)]
    undone = say(dialogue, "undo", "out_of_scope", [])  # undo takes back the booking as it stands
    assert isinstance(undone, Command) and undone.booking_id == replaced.booking_id


def test_new_words_that_are_a_request_of_their_own_are_a_new_turn(dialogue: Dialogue) -> None:
    made = _booked_at_three(dialogue)
    denali = (("room", "denali"), ("date", "tomorrow"), ("start_time", "nine"))
    alone = Reopen("book denali tomorrow at nine", "book_meeting", denali, 0.99)
    assert not dialogue.reopens_request("c1", alone, "book_meeting")  # so the new words are the turn:
    other = say(dialogue, alone.text, alone.intent, list(alone.slots))
    assert isinstance(other, Command) and other.committed and other.room == "denali" and other.amends is None
    question = Reopen("is fuji free on friday at ten", "check_availability", (("room", "fuji"),), 0.97)
    assert not dialogue.reopens_request("c1", question, "book_meeting")  # another intent, another room
    for part_of_it in (Reopen("for two hours", "book_meeting", (("duration", "two hours"),), 0.99),
                       Reopen("and a half"), Reopen("actually make it four", "reschedule_meeting",
                                                    (("new_time", "four"),), 0.95)):
        assert dialogue.reopens_request("c1", part_of_it, "book_meeting"), part_of_it
    assert not dialogue.reopens_request("nobody", Reopen("for two hours"), "book_meeting")
    assert dialogue.dispatcher.store.get(str(made.booking_id)) is not None  # the first booking stands
    # and without a reopened turn, a bare length is not taken as an amendment: it asks which room
    late = say(dialogue, "for two hours", "book_meeting", [("duration", "two hours")])
    assert isinstance(late, Clarify)


def test_a_reopened_request_that_cannot_be_booked_withdraws_its_first_part(dialogue: Dialogue) -> None:
    """Said at once, "book Everest tomorrow at three for fourteen hours" books nothing and asks: so it does when
    the length comes after a pause, and the booking made from the first part is taken back."""
    made = _booked_at_three(dialogue)
    asked = reopen(dialogue, "book everest tomorrow at three for fourteen hours", "book_meeting",
                   [*_AT_THREE, ("duration", "fourteen hours")], Reopen("for fourteen hours"))
    assert isinstance(asked, Clarify) and asked.doubt is not None and asked.doubt.check == "too_long"
    assert asked.amends == made.booking_id and asked.to_dict()["amends"] == made.booking_id
    assert dialogue.dispatcher.store.get(str(made.booking_id)) is None
    answered = say(dialogue, "at three for an hour", "book_meeting", [("start_time", "three"), ("duration", "an hour")])
    assert isinstance(answered, Command) and answered.committed and answered.room == "everest"
    assert len(dialogue.dispatcher.store.bookings(NOW, NOW + timedelta(days=7))) == 1  # booked once


def test_a_reopened_turn_answers_the_question_its_first_part_asked(dialogue: Dialogue) -> None:
    asked = say(dialogue, "book everest", "book_meeting", [("room", "everest")])
    assert isinstance(asked, Clarify)
    booked = reopen(dialogue, "book everest tomorrow at three", "book_meeting", _AT_THREE,
                    Reopen("tomorrow at three", "out_of_scope", (("date", "tomorrow"), ("start_time", "three")), 0.4))
    assert isinstance(booked, Command) and booked.committed and booked.amends is None
    assert not dialogue.expects_answer("c1")  # the question is answered, not left open


def test_a_snapshot_turn_leaves_the_conversation_as_it_was(dialogue: Dialogue) -> None:
    asked = say(dialogue, "book everest tomorrow", "book_meeting", [("room", "everest"), ("date", "tomorrow")])
    assert isinstance(asked, Clarify) and asked.missing == ("start_time",)
    before = repr(dialogue.conversations["c1"])
    with dialogue.snapshot("c1"):
        dialogue.turn("c1", "cancel that", "out_of_scope", [], NOW, commit=False)
        dialogue.turn("c1", "book fuji friday at 9", "book_meeting",
                      [("room", "fuji"), ("date", "friday"), ("start_time", "9")], NOW, commit=False)
    with dialogue.snapshot("c2"):  # a conversation that did not exist stays absent
        dialogue.turn("c2", "book fuji friday at 9", "book_meeting", [("room", "fuji")], NOW, commit=False)
    assert repr(dialogue.conversations["c1"]) == before and "c2" not in dialogue.conversations
    filled = say(dialogue, "at 3 pm", "book_meeting", [("start_time", "3 pm")])  # the open question still open
    assert isinstance(filled, Command) and filled.committed and filled.room == "everest"


def test_only_what_the_turn_just_ended_did_is_replaced(dialogue: Dialogue) -> None:
    made = _booked_at_three(dialogue)
    answer = say(dialogue, "is fuji free tomorrow at 9", "check_availability",
                 [("room", "fuji"), ("date", "tomorrow"), ("start_time", "9")])
    assert isinstance(answer, Answer)
    # the question's turn made no booking: the request reopened is the question again, the booking before stands
    again = reopen(dialogue, "is fuji free tomorrow at 9 for two hours", "check_availability",
                   [("room", "fuji"), ("date", "tomorrow"), ("start_time", "9"), ("duration", "two hours")],
                   Reopen("for two hours", "book_meeting", (("duration", "two hours"),), 0.5))
    assert isinstance(again, Answer)
    booking = dialogue.dispatcher.store.get(str(made.booking_id))
    assert booking is not None and (booking.end - booking.start) == timedelta(minutes=30)


def test_when_no_room_that_fits_is_free_the_soonest_free_time_is_offered(dialogue: Dialogue) -> None:
    for n in range(4):  # Kilimanjaro (8 seats), Matterhorn (10), Everest (12), Olympus (20): every room for 8
        made = say(dialogue, "book a room for 8 tomorrow at 11", "book_meeting",
                   [("people_count", "8"), ("date", "tomorrow"), ("start_time", "11")], conv=f"c{n}")
        assert isinstance(made, Command) and made.committed
    asked = say(dialogue, "book a room for 8 tomorrow at 11", "book_meeting",
                [("people_count", "8"), ("date", "tomorrow"), ("start_time", "11")], conv="c9")
    assert isinstance(asked, Clarify) and asked.options, asked  # a question with an answer ready: "yes" books it
    assert asked.options[0].to_dict()["start"] == "2026-12-03T11:30:00+01:00" and "free from 11:30" in asked.question
    yes = say(dialogue, "yes", "out_of_scope", [], conv="c9")
    assert isinstance(yes, Command) and yes.committed and yes.start.strftime("%H:%M") == "11:30"
    huge = say(dialogue, "book a room for 40 tomorrow at 11", "book_meeting",
               [("people_count", "40"), ("date", "tomorrow"), ("start_time", "11")], conv="c10")
    assert isinstance(huge, Clarify) and "No room seats 40" in huge.question


def test_words_after_a_pause_add_to_the_booking_the_turn_made(dialogue: Dialogue) -> None:
    """'... with Priya' [pause] 'and Tom': the whole request heard again is the same booking with one more
    attendee; the new words alone are no request."""
    made = say(dialogue, "book fuji tomorrow at 4 pm with Priya", "book_meeting",
               [("room", "fuji"), ("date", "tomorrow"), ("start_time", "4 pm"), ("attendees", "Priya")])
    assert isinstance(made, Command) and made.committed
    whole = [("room", "fuji"), ("date", "tomorrow"), ("start_time", "4 pm"), ("attendees", "Priya"),
             ("attendees", "Tom")]
    amended = reopen(dialogue, "book fuji tomorrow at 4 pm with Priya and Tom", "book_meeting", whole,
                     Reopen("and Tom"))
    assert isinstance(amended, Command) and amended.committed and amended.amends == made.booking_id
    assert amended.attendees == ("Priya", "Tom") and amended.new_start == made.start
    stored = dialogue.dispatcher.store.get(str(made.booking_id))
    assert stored is not None and stored.attendees == ("Priya", "Tom")


def test_words_after_an_early_question_are_read_with_the_words_before(dialogue: Dialogue) -> None:
    """'... with Priya' ended with a question (the room is taken); 'and Tom' after a pause is the same request
    heard whole: the same question, not a rejection."""
    say(dialogue, "book fuji tomorrow at 4 pm", "book_meeting",
        [("room", "fuji"), ("date", "tomorrow"), ("start_time", "4 pm")], conv="other")
    asked = say(dialogue, "book fuji tomorrow at 4 pm with Priya", "book_meeting",
                [("room", "fuji"), ("date", "tomorrow"), ("start_time", "4 pm"), ("attendees", "Priya")])
    assert isinstance(asked, Clarify) and asked.options  # taken: alternatives offered
    whole = [("room", "fuji"), ("date", "tomorrow"), ("start_time", "4 pm"), ("attendees", "Priya"),
             ("attendees", "Tom")]
    again = reopen(dialogue, "book fuji tomorrow at 4 pm with Priya and Tom", "book_meeting", whole,
                   Reopen("and Tom"))
    assert isinstance(again, Clarify) and again.options == asked.options and again.amends is None
    # without a reopened turn the same words are what they are alone
    alone = say(dialogue, "and Tom", "out_of_scope", [])
    assert isinstance(alone, Rejected | Clarify) and not (isinstance(alone, Clarify) and alone.options)


# ---- owners: cancel, move and undo act on the caller's own bookings ------------------------------------------
BOOK_FUJI: Slots = [("room", "fuji"), ("date", "tomorrow"), ("start_time", "9 am")]
CANCEL_FUJI: Slots = [("room", "fuji"), ("date", "tomorrow"), ("start_time", "9 am")]


def test_only_the_owner_cancels_or_moves_a_booking(dialogue: Dialogue) -> None:
    booked = dialogue.turn("a", "book fuji tomorrow at 9 am", "book_meeting", BOOK_FUJI, NOW, commit=True,
                           owner="token:alice")
    assert isinstance(booked, Command) and booked.committed
    for intent, slots in (("cancel_meeting", CANCEL_FUJI),
                          ("reschedule_meeting", [*CANCEL_FUJI, ("new_time", "11 am")])):
        refused = dialogue.turn("b", f"{intent} fuji tomorrow at 9 am", intent, slots, NOW, commit=True,
                                owner="token:bob")
        assert isinstance(refused, Answer) and refused.data["reason"] == "not yours"
    bookings = dialogue.dispatcher.store.bookings(NOW, NOW + timedelta(days=2))
    assert [(b.id, b.owner) for b in bookings] == [(booked.booking_id, "token:alice")]  # untouched
    cancelled = dialogue.turn("a2", "cancel fuji tomorrow at 9 am", "cancel_meeting", CANCEL_FUJI, NOW,
                              commit=True, owner="token:alice")  # the owner, from another conversation
    assert isinstance(cancelled, Command) and cancelled.committed


def test_with_shared_bookings_anyone_may_cancel(dialogue: Dialogue) -> None:
    dialogue.dispatcher.owners_only = False  # [access] own_bookings_only = false
    dialogue.turn("a", "book fuji tomorrow at 9 am", "book_meeting", BOOK_FUJI, NOW, commit=True, owner="token:alice")
    cancelled = dialogue.turn("b", "cancel fuji tomorrow at 9 am", "cancel_meeting", CANCEL_FUJI, NOW, commit=True,
                              owner="token:bob")
    assert isinstance(cancelled, Command) and cancelled.committed
    assert dialogue.dispatcher.store.bookings(NOW, NOW + timedelta(days=2)) == []  # alice's booking is gone


def test_a_conversation_never_undoes_a_booking_it_does_not_own(dialogue: Dialogue) -> None:
    booked = dialogue.turn("shared-id", "book fuji tomorrow at 9 am", "book_meeting", BOOK_FUJI, NOW, commit=True,
                           owner="token:alice")
    assert isinstance(booked, Command) and booked.committed
    undo = dialogue.turn("shared-id", "undo", "out_of_scope", [], NOW, commit=True, owner="token:bob")
    assert isinstance(undo, Rejected)
    assert dialogue.dispatcher.store.get(booked.booking_id or "") is not None


def test_idle_conversations_are_evicted_and_the_count_is_capped(dialogue: Dialogue) -> None:
    dialogue.max_conversations = 3
    for n in range(5):
        say(dialogue, "book fuji", "book_meeting", [("room", "fuji")], conv=f"c{n}")  # each leaves a question open
    assert list(dialogue.conversations) == ["c2", "c3", "c4"]  # the least recently active went first
    dialogue.idle_timeout = timedelta(0)
    say(dialogue, "book denali", "book_meeting", [("room", "denali")], conv="c9")
    assert list(dialogue.conversations) == ["c9"]


def test_a_new_request_after_a_conflict_keeps_none_of_the_old_span(dialogue: Dialogue) -> None:
    """A whole request with its own start, said while a conflict question waits, is its own span: the waiting
    request's end ("to 4 pm") once stretched "Friday at 10 for an hour" into 10:00-16:00, booked as if said."""
    say(dialogue, "book everest tomorrow at 3 pm", "book_meeting",
        [("room", "everest"), ("date", "tomorrow"), ("start_time", "3 pm")])
    r = say(dialogue, "book everest tomorrow from 3 to 4 pm", "book_meeting",
            [("room", "everest"), ("date", "tomorrow"), ("start_time", "3"), ("end_time", "4 pm")])
    assert isinstance(r, Clarify) and r.options  # taken: alternatives offered
    r = say(dialogue, "book fuji on friday at 10 am for an hour", "book_meeting",
            [("room", "fuji"), ("date", "friday"), ("start_time", "10 am"), ("duration", "an hour")])
    assert isinstance(r, Command) and (r.start.hour, r.end.hour) == (10, 11)


def test_a_fragment_with_a_start_keeps_the_end_it_answers_for(dialogue: Dialogue) -> None:
    r = say(dialogue, "book denali tomorrow until 5 pm", "book_meeting",
            [("room", "denali"), ("date", "tomorrow"), ("end_time", "5 pm")])
    assert isinstance(r, Clarify) and r.question == "At what time?"
    r = say(dialogue, "at 3", "book_meeting", [("start_time", "3")])
    assert isinstance(r, Command) and (r.start.hour, r.end.hour) == (15, 17)


def test_a_chinese_conversation_is_asked_and_answered_in_chinese(dialogue: Dialogue) -> None:
    r = say(dialogue, "帮我订珠峰", "book_meeting", [("room", "珠峰")])
    assert isinstance(r, Clarify) and r.question == "哪一天？您想订几点？"
    r = say(dialogue, "明天下午三点", "book_meeting", [("date", "明天"), ("start_time", "下午三点")])
    assert isinstance(r, Command) and r.committed and (r.room, r.start.hour) == ("everest", 15)
    r = say(dialogue, "订珠峰明天下午三点", "book_meeting",
            [("room", "珠峰"), ("date", "明天"), ("start_time", "下午三点")], conv="c2")
    assert isinstance(r, Clarify) and r.question.startswith("Everest那时已被占用。")
    assert r.question.endswith("您想要哪个？")
    r = say(dialogue, "好的", "out_of_scope", [], conv="c2")  # yes, in Chinese: the first alternative
    assert isinstance(r, Command) and r.committed
    r = say(dialogue, "撤销", "out_of_scope", [], conv="c2")
    assert isinstance(r, Command) and r.action == "cancel_meeting"
    r = say(dialogue, "今天天气怎么样", "out_of_scope", [], conv="c3")
    assert isinstance(r, Rejected) and r.reason.startswith("这不是会议室的请求")


def test_a_room_that_matches_nothing_is_asked_about_and_not_carried(dialogue: Dialogue) -> None:
    """After "no room called 2": the whole request said again without a room books one (it was asked about five
    times in a row when the unknown name stayed in the conversation), and a room named in reply is booked."""
    def unknown(conv: str) -> None:
        r = say(dialogue, "帮我订明天上午九点的会议室２", "book_meeting",
                [("date", "明天"), ("start_time", "上午九点"), ("room", "２")], conv=conv)
        assert isinstance(r, Clarify) and r.missing == ("room",) and "２" in r.question

    unknown("c1")
    again = say(dialogue, "帮我订明天上午九点的会议室", "book_meeting", [("date", "明天"), ("start_time", "上午九点")])
    assert isinstance(again, Command) and again.committed and again.room == "fuji"
    assert again.start.isoformat() == "2026-12-03T09:00:00+01:00"
    unknown("c2")
    named = say(dialogue, "德纳利", "out_of_scope", [], conv="c2")
    assert isinstance(named, Command) and named.committed and named.room == "denali"


def test_a_room_matched_by_sound_beside_the_named_one_is_never_booked(dialogue: Dialogue) -> None:
    # tiny.en: "can you buck, Denali for tomorrow at 9" tagged "buck" (0.81) and "Denali" (0.99) as rooms
    r = say(dialogue, "can you buck, Denali for tomorrow at 9", "book_meeting",
            [("room", "buck"), ("room", "Denali"), ("date", "tomorrow"), ("start_time", "9")])
    assert isinstance(r, Command) and r.committed and r.room == "denali", r


def test_a_room_found_only_by_sound_is_proposed_and_yes_books_it(dialogue: Dialogue) -> None:
    slots = [("room", "Dinally"), ("date", "tomorrow"), ("start_time", "9 am"), ("duration", "an hour")]
    r = say(dialogue, "book Dinally tomorrow at 9 am for an hour", "book_meeting", slots)
    assert isinstance(r, Clarify) and r.missing == ("room",) and r.question.startswith("Did you mean Denali")
    assert dialogue.dispatcher.store.bookings(NOW, NOW + timedelta(days=2)) == []
    yes = say(dialogue, "yes", "out_of_scope", [])
    assert isinstance(yes, Command) and yes.committed and yes.room == "denali"
    assert yes.start.isoformat() == "2026-12-03T09:00:00+01:00" and yes.end.isoformat() == "2026-12-03T10:00:00+01:00"


def test_a_room_found_only_by_sound_is_put_right_by_naming_it(dialogue: Dialogue) -> None:
    slots = [("room", "buck"), ("date", "tomorrow"), ("start_time", "9 am"), ("duration", "an hour")]
    r = say(dialogue, "book buck tomorrow at 9 am for an hour", "book_meeting", slots)
    assert isinstance(r, Clarify) and "Olympus" in r.question
    named = say(dialogue, "Fuji", "out_of_scope", [("room", "Fuji")])
    assert isinstance(named, Command) and named.committed and named.room == "fuji"


def test_two_rooms_named_are_asked_about(dialogue: Dialogue) -> None:
    r = say(dialogue, "book fuji or denali tomorrow at 9", "book_meeting",
            [("room", "fuji"), ("room", "denali"), ("date", "tomorrow"), ("start_time", "9")])
    assert isinstance(r, Clarify) and r.missing == ("room",) and "Fuji, Denali" in r.question
    r = say(dialogue, "denali", "out_of_scope", [("room", "denali")])
    assert isinstance(r, Command) and r.committed and r.room == "denali"


def test_a_room_named_among_other_words_is_booked_and_says_what_was_heard(dialogue: Dialogue) -> None:
    r = say(dialogue, "book the Fuji Rune tomorrow at half pass four", "book_meeting",
            [("room", "Fuji Rune"), ("date", "tomorrow"), ("start_time", "half pass four")])
    assert isinstance(r, Command) and r.committed and r.room == "fuji" and r.start.isoformat().startswith(
        "2026-12-03T16:30")
    assert 'room "Fuji Rune" taken as Fuji' in r.assumptions
    exact = say(dialogue, "book Fuji tomorrow at 9", "book_meeting",
                [("room", "Fuji"), ("date", "tomorrow"), ("start_time", "9")])
    assert isinstance(exact, Command) and not any("taken as Fuji" in a for a in exact.assumptions)


def test_a_cancel_in_a_room_found_only_by_sound_asks_which_room(dialogue: Dialogue) -> None:
    slots = [("room", "Denali"), ("date", "tomorrow"), ("start_time", "9 am"), ("duration", "an hour")]
    assert isinstance(say(dialogue, "book Denali tomorrow at 9 am for an hour", "book_meeting", slots), Command)
    r = say(dialogue, "cancel my meeting in Dinally tomorrow at 9", "cancel_meeting",
            [("room", "Dinally"), ("date", "tomorrow"), ("start_time", "9")])
    assert isinstance(r, Clarify) and r.missing == ("room",) and "Did you mean Denali" in r.question
    assert len(dialogue.dispatcher.store.bookings(NOW, NOW + timedelta(days=2))) == 1  # nothing cancelled
    named = say(dialogue, "Denali", "out_of_scope", [("room", "Denali")])
    assert isinstance(named, Command) and named.action == "cancel_meeting" and named.committed
    assert dialogue.dispatcher.store.bookings(NOW, NOW + timedelta(days=2)) == []


def test_a_correction_right_after_a_booking_changes_that_booking(dialogue: Dialogue) -> None:
    """"No, Denali" said over or after "Booked Everest ...": that booking moves to Denali (one booking, in one
    store transaction), and "actually, make it ten" then moves it in time; a correction with nothing booked just
    before it is an ordinary turn."""
    booked = say(dialogue, "book everest tomorrow at 9 for an hour", "book_meeting",
                 [("room", "everest"), ("date", "tomorrow"), ("start_time", "9"), ("duration", "an hour")])
    assert isinstance(booked, Command) and booked.committed
    moved = say(dialogue, "no, Denali", "book_meeting", [("room", "Denali")])
    assert isinstance(moved, Command) and moved.committed and moved.room == "denali"
    assert moved.amends == booked.booking_id and moved.start == booked.start and moved.end == booked.end
    later = say(dialogue, "actually, make it ten", "reschedule_meeting", [("start_time", "ten")])
    assert isinstance(later, Command) and later.committed and later.new_start is not None
    assert later.new_start.hour == 10 and later.booking_id == moved.booking_id
    store = dialogue.dispatcher.store
    assert [(b.room, b.start.hour) for b in store.bookings(NOW, NOW + timedelta(days=2))] == [("denali", 10)]
    alone = say(dialogue, "no, Fuji", "book_meeting", [("room", "Fuji")], conv="c2")
    assert isinstance(alone, Clarify)
