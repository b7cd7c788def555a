"""What the assistant says in English, by key (assistant/language/replies.py fills in the fields)."""

from __future__ import annotations

__all__ = ["REPLIES"]

REPLIES: dict[str, str] = {
    # the questions asked for what a request lacks
    "ask.date": "Which day?",
    "ask.start_time": "At what time?",
    "ask.room": "Which room?",
    "ask.new_time": "When should it move to?",
    "ask.end_time": "Until when?",
    "ask.duration": "For how long?",
    "ask.people_count": "How many people?",
    "ask.other": "What {slot}?",
    "out_of_scope": "not a meeting-room request: I can book, cancel, move, check and list room bookings",
    "unknown_room": 'I don\'t know a room called "{said}". Which room: {names}?',
    "which_room": "I heard two rooms, {names}. Which one?",
    "did_you_mean_room": 'Did you mean {room} ("{said}")? Say yes to book it {when}, or say the room.',
    "which_room_to_change": 'Did you mean {room} ("{said}")? Say the room.',
    "free_then": " Free then: {names}.",
    "conflict": "{room} is taken then.",
    "conflict.other": " {names} is free at that time, or {room} is free from {later}.",  # one other room
    "conflict.others": " {names} are free at that time, or {room} is free from {later}.",
    "conflict.later": " It is free from {later}.",
    "conflict.which": " Which would you like?",
    "no_room_fits": "No room seats {people}. Fewer people, or two rooms?",
    "none_free": "No room for {people} is free then. {room} is free from {later}. Would that do?",
    "not_yours": "That booking was made by someone else: only they can change it.",
    "no_such_booking": "I found no such booking.",
    "which_booking": "Which one? I found {count} bookings that match.",
    "day_bookings": "{count} booking(s) on {day}{where}.",
    "where": " in {room}",
    "room_verdict": "{room} is {verdict} {start}-{end}{fits}.",
    "verdict.free": "free",
    "verdict.taken": "taken",
    "fits.no": " (it seats {seats}, fewer than {people})",
    "free_rooms": "Free {start}-{end}: {names}.",
    "no_room": "no room",
    "bookings": "{count} booking(s){where}.",
    "seats_fewer": "{room} seats {seats}, fewer than {people}",
    # the guard's doubts: what is doubtful, then what to say next
    "doubt.not_a_time": '"{said}" is not a {kind}.',
    "doubt.split": "I heard two {kind}s.",
    "doubt.unread": 'I could not read the {kind} "{said}".',
    "doubt.order": "The end ({end}) is not after the start ({start}).",
    "doubt.too_long": "That is {hours} hours ({shown}{next_day}), longer than a booking may last ({most} hours).",
    "doubt.midnight": "That runs past midnight ({shown} the next day).",
    "doubt.past": "{clock} {day} has already passed.",
    "doubt.out_of_range": "I can book from {first} to {last} only, and {day} is outside that.",
    "doubt.teen": '"{said}" sounds like {ty} minutes too. Did you mean {ty} minutes? Say yes, or say the length '
                  'again.',
    "doubt.did_you_mean": "Did you mean {clock}?",
    "doubt.odd_minutes": 'I heard "{said}", {clock}, a time people rarely say.',
    "span": "{start} to {end}",
    "next_day": " the next day",
    "kind.date": "date",
    "kind.length": "length",
    "kind.time": "time",
    "kind.end time": "end time",
    "today": "today",
    "tomorrow": "tomorrow",
    # the dialogue
    "nothing_booked": "OK, nothing booked.",
    "propose": "Did you want to book {room} {when}? Say yes to book it.",
    "nothing_to_undo": "there is no booking of this conversation to undo",
    # spoken replies (assistant/speech/ear.py): what a command did, said aloud
    "spoken.book_meeting": "Booked {room} {day}, {span}.",
    "spoken.cancel_meeting": "Cancelled {room} {day}, {span}.",
    "spoken.reschedule_meeting": "Moved {room} to {day}, {span}.",
    "spoken.not_done": "I could not do that: {reason}.",
}
