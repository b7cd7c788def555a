"""English transcripts put right where a recognizer writes a form that has one meaning in this domain.

Only unambiguous forms, seen in what tiny.en wrote for the spoken corpora (issue 29); anything with two readings
is left for the guard to ask about:
- "from 9-10-30" / "between 9-10-30": a range run together, read as "from 9 to 10:30" only after "from" or
  "between" (alone, "9-10-30" could be a date);
- "Quarterpass 2", "halfpast four": the two words run together ("quarter pass 2", read as past by the clock);
- "a sink", "the design sink": "sync", the meeting (nobody books a room for a sink), before a word that is no
  plumbing ("sink in Matterhorn", "sink at 4").
"Half pass four" is read by the clock reader itself (pass as past: assistant/language/en/clock.py).
"""

from __future__ import annotations

import re

__all__ = ["rewrite"]

_RUN_ON_RANGE = re.compile(r"\b(from|between)\s+(\d{1,2})-(\d{1,2})-([0-5]\d)\b", re.I)
_RUN_TOGETHER = re.compile(r"\b(quarter|half)(pass|past)\b", re.I)
_SINK = re.compile(r"\b(a|the|our|my|team|design|weekly|daily|quick|short)\s+sinks?\b(?=\s+(?:in|at|on|with|for|"
                   r"to|tomorrow|today|next)\b)", re.I)


def rewrite(text: str) -> str:
    text = _RUN_TOGETHER.sub(lambda m: f"{m.group(1)} {m.group(2)}", text)
    text = _RUN_ON_RANGE.sub(lambda m: f"{m.group(1)} {m.group(2)} to {m.group(3)}:{m.group(4)}", text)
    return _SINK.sub(lambda m: f"{m.group(1)} sync", text)
