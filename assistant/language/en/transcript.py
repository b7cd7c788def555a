"""English transcripts put right where a recognizer writes a form that has one meaning in this domain.

Only forms with a single meaning, which the value readers must see whole; anything with two readings is left for
the guard to ask about:
- "from 9-10-30" / "between 9-10-30": a range run together, read as "from 9 to 10:30" only after "from" or
  "between" (alone, "9-10-30" could be a date);
- "Quarterpass 2", "halfpast four": the two words run together ("quarter pass 2", read as past by the clock).
"Half pass four" is read by the clock reader itself (pass as past: assistant/language/en/clock.py). What a
recognizer writes otherwise ("a design sink" for a sync, "Booked in Ollie") is the model's to read: it is trained
on recognizer text (models/heard), so a rewrite that served one voice's mishearing went ("sink" as "sync",
docs/nlu.md#heard).
"""

from __future__ import annotations

import re

__all__ = ["rewrite"]

_RUN_ON_RANGE = re.compile(r"\b(from|between)\s+(\d{1,2})-(\d{1,2})-([0-5]\d)\b", re.I)
_RUN_TOGETHER = re.compile(r"\b(quarter|half)(pass|past)\b", re.I)


def rewrite(text: str) -> str:
    text = _RUN_TOGETHER.sub(lambda m: f"{m.group(1)} {m.group(2)}", text)
    return _RUN_ON_RANGE.sub(lambda m: f"{m.group(1)} {m.group(2)} to {m.group(3)}:{m.group(4)}", text)
