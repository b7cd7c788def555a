"""Recognizer output that cannot be what was said: caught before anything reads it.

Whisper, given a prompt, sometimes goes on with the prompt instead of the speech, or loops: base, prompted with
the room names in both languages, wrote "帮我订明天上午九点的会议室（Everest、Kilimanjaro（Everest、Kilimanjaro（..."
until the text had 170 tokens. Three signs, each cheap and each impossible in a spoken request:

- `repeats`: one stretch of six or more characters three times in a row;
- `too_long`: more words (Chinese: characters) than the audio could hold, at a fast speaker's rate;
- `echoes_prompt`: three names of a list in the prompt, in the prompt's order and with its separators
  ("Everest, Kilimanjaro, Denali"), which is the prompt read back, not a request.

The recognizer decodes such an utterance again without the prompt; what is still implausible then is cut
(`cut`) to the part before the loop or the echo, so a loop never reaches the model as a 170-token refusal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from assistant.language.registry import language_of

__all__ = ["implausible", "cut", "prompt_lists"]

_REPEATS = re.compile(r"(\S.{4,}?\S)(?:\s*\1){2,}", re.S)
_LIST_SEPARATORS = ("、", ", ", "，")
_SLACK = 3  # a very short utterance may still hold a few words


def prompt_lists(prompt: str | None) -> tuple[str, ...]:
    """Every run of three list items of the prompt as it is written there ("Everest, Kilimanjaro, Denali")."""
    if not prompt:
        return ()
    runs: list[str] = []
    for separator in _LIST_SEPARATORS:
        for chunk in re.split(r"[:：。.（）()]", prompt):
            items = [item.strip() for item in chunk.split(separator)]
            items = [item for item in items if item]
            runs += [separator.join(items[i : i + 3]) for i in range(len(items) - 2)]
    return tuple(dict.fromkeys(runs))


def _length(text: str) -> tuple[int, float]:
    """How long the text is and how many such units a second of speech holds, in the language it is written in:
    words, or in a script without spaces its characters and the words of other scripts among them."""
    language = language_of(text)
    if language.script is None:
        return len(text.split()), language.units_per_second
    return len(language.script.findall(text)) + len(language.script.sub(" ", text).split()), language.units_per_second


def implausible(text: str, seconds: float, lists: Sequence[str] = ()) -> str | None:
    """Why `text` cannot be what `seconds` of speech said ("repeats", "too_long", "echoes_prompt"), or None."""
    if _REPEATS.search(text):
        return "repeats"
    length, rate = _length(text)
    if length > _SLACK + rate * seconds:
        return "too_long"
    if any(run in text for run in lists):
        return "echoes_prompt"
    return None


def cut(text: str, seconds: float, lists: Sequence[str] = ()) -> str:
    """The text up to where it stops being speech: before the second copy of a loop, before an echoed prompt
    list, and no longer than the audio could hold."""
    loop = _REPEATS.search(text)
    if loop is not None:
        text = text[: loop.start() + len(loop.group(1))]
    for run in lists:
        if run in text:
            text = text[: text.index(run)]
    length, rate = _length(text)
    most = int(_SLACK + rate * seconds)
    if length > most:
        script = language_of(text).script
        if script is not None:
            kept, count = [], 0
            for ch in text:
                count += bool(script.match(ch))
                if count > most:
                    break
                kept.append(ch)
            text = "".join(kept)
        else:
            text = " ".join(text.split()[:most])
    return text.strip(" ,、，（(")
