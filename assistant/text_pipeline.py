"""Text -> result: the order of the text stages in one place.

    text -> NLU (intent + slots) -> dialogue state (clarify / confirm / undo) -> normalizer -> dispatcher -> store

The voice server runs the same pipeline after speech recognition.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from assistant.booking.dialogue import Dialogue
from assistant.booking.results import Rejected
from assistant.nlu.parser import IntentSlotParser, ParseFailure, Understanding

__all__ = ["TextPipeline"]


@dataclass
class TextPipeline:
    parser: IntentSlotParser
    dialogue: Dialogue

    def handle(self, texts: Sequence[str], conversation_id: str, now: datetime, *, commit: bool
               ) -> list[dict[str, Any]]:
        """One JSON-ready object per text, in order; the texts are turns of one conversation."""
        return [self.act(understood, conversation_id, now, commit=commit)
                for understood in self.parser.parse_many(texts)]

    def act(self, understood: Understanding | ParseFailure, conversation_id: str, now: datetime, *, commit: bool
            ) -> dict[str, Any]:
        """The dialogue step for one parsed text. The voice server parses many conversations' texts in one
        model call (parser.parse_many), then acts on each in turn."""
        record = understood.to_dict()
        if isinstance(understood, ParseFailure):
            record["result"] = Rejected(understood.message).to_dict()
            return record
        intent, slots = understood.intent, [(s.name, s.text) for s in understood.slots]
        guess = understood.guess
        if guess is not None and self.dialogue.expects_answer(conversation_id):
            # "at 3 pm" alone is a weak request but a fine answer to "At what time?"
            intent, slots = guess.intent, [(s.name, s.text) for s in guess.slots]
        result = self.dialogue.turn(conversation_id, understood.text, intent, slots, now, commit=commit)
        record["result"] = result.to_dict()
        return record
