"""The language of the product: intents and slots, with their exact names.

The rest of the product (normalizer, dispatcher, evaluation) relies on these names; change them only together.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Intent", "Slot", "INTENTS", "SLOT_NAMES", "OUT_OF_SCOPE", "bio_labels"]


class Intent(StrEnum):
    """What a request asks for. Members are their wire names (`Intent.BOOK_MEETING == "book_meeting"`), so
    results and events serialize as before; in code a typo is an AttributeError, not a silent mismatch."""

    BOOK_MEETING = "book_meeting"
    CANCEL_MEETING = "cancel_meeting"
    RESCHEDULE_MEETING = "reschedule_meeting"
    CHECK_AVAILABILITY = "check_availability"
    LIST_BOOKINGS = "list_bookings"
    OUT_OF_SCOPE = "out_of_scope"


class Slot(StrEnum):
    """What a span of a request says; the model's BIO tags are named by these (`B-start_time`)."""

    ROOM = "room"
    DATE = "date"
    START_TIME = "start_time"
    END_TIME = "end_time"
    DURATION = "duration"
    TITLE = "title"
    ATTENDEES = "attendees"
    PEOPLE_COUNT = "people_count"
    NEW_DATE = "new_date"
    NEW_TIME = "new_time"


OUT_OF_SCOPE = Intent.OUT_OF_SCOPE
# the models' label order (labels.json): plain strings, in the order above
INTENTS: tuple[str, ...] = tuple(intent.value for intent in Intent)
SLOT_NAMES: tuple[str, ...] = tuple(slot.value for slot in Slot)


def bio_labels(slot_names: tuple[str, ...] | list[str]) -> list[str]:
    """BIO tag set: "O" first (index 0), then B-/I- for each slot in order."""
    labels = ["O"]
    for name in slot_names:
        labels += [f"B-{name}", f"I-{name}"]
    return labels
