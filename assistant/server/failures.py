"""What a client hears when one of its utterances fails: a code and plain words. What went wrong inside goes to
the log only."""

from __future__ import annotations

import logging

from assistant.booking.store import StoreUnavailable
from assistant.errors import ModelServerUnavailable, Overloaded
from assistant.events import ErrorEvent

__all__ = ["utterance_failed", "model_waiting", "queue_full"]

log = logging.getLogger(__name__)


def utterance_failed(session: str, utterance: int, exc: Exception | None) -> ErrorEvent:
    if isinstance(exc, Overloaded):
        return ErrorEvent("overloaded", f"utterance {utterance} was not processed: the server is busy; please say "
                                        "it again")
    if isinstance(exc, ModelServerUnavailable):
        log.warning("session %s: utterance %d: %s", session, utterance, exc)
        return ErrorEvent("model_unavailable", f"utterance {utterance} was not processed: the model server did not "
                                               "come back in time; please say it again")
    if isinstance(exc, StoreUnavailable):  # said plainly: nothing was booked, and it is safe to say it again
        log.warning("session %s: utterance %d: %s", session, utterance, exc)
        return ErrorEvent("store_unavailable", f"utterance {utterance} was not carried out: the calendar server is "
                                               "not answering, so nothing was booked or changed; please try again in "
                                               "a moment")
    log.error("session %s: utterance %d failed", session, utterance, exc_info=exc)
    return ErrorEvent("internal", f"utterance {utterance} could not be processed; please say it again")


def model_waiting(utterance: int, left_s: float) -> ErrorEvent:
    """The utterance waits for the model server to come back: the answer follows when it does (a result, or a
    final error)."""
    return ErrorEvent("model_unavailable", f"utterance {utterance}: the model server is unavailable; retrying for "
                                           f"up to {left_s:.0f} s")


def queue_full(utterance: int, waiting: int) -> ErrorEvent:
    """The utterance was refused: `waiting` of this client's (or session's) utterances still wait for the
    recognizer."""
    return ErrorEvent("overloaded", f"utterance {utterance} was not processed: {waiting} of yours are still "
                                    "waiting for the recognizer; send audio in real time")
