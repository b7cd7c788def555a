"""The language of the product: intents and slots, with their exact names.

The rest of the product (normalizer, dispatcher, evaluation) relies on these names; change them only together.
"""

from __future__ import annotations

__all__ = ["INTENTS", "SLOT_NAMES", "OUT_OF_SCOPE", "bio_labels"]

OUT_OF_SCOPE = "out_of_scope"

INTENTS: tuple[str, ...] = (
    "book_meeting",
    "cancel_meeting",
    "reschedule_meeting",
    "check_availability",
    "list_bookings",
    OUT_OF_SCOPE,
)

SLOT_NAMES: tuple[str, ...] = (
    "room",
    "date",
    "start_time",
    "end_time",
    "duration",
    "title",
    "attendees",
    "people_count",
    "new_date",
    "new_time",
)


def bio_labels(slot_names: tuple[str, ...] | list[str]) -> list[str]:
    """BIO tag set: "O" first (index 0), then B-/I- for each slot in order."""
    labels = ["O"]
    for name in slot_names:
        labels += [f"B-{name}", f"I-{name}"]
    return labels
