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

__all__ = ["implausible", "cut", "prompt_lists"]

_REPEATS = re.compile(r"(\S.{4,}?\S)(?:\s*\1){2,}", re.S)
_CJK = re.compile(r"[\u3400-\u9fff]")
_LIST_SEPARATORS = ("、", ", ", "，")
WORDS_PER_SECOND = 6.0  # fast English speech is about 4
CHARACTERS_PER_SECOND = 10.0  # fast Mandarin is about 7 syllables (characters) a second
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
    """How long the text is (Chinese characters, else words) and how many a second of speech holds."""
    characters = len(_CJK.findall(text))
    if characters:
        return characters + len(_CJK.sub(" ", text).split()), CHARACTERS_PER_SECOND
    return len(text.split()), WORDS_PER_SECOND


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
        if _CJK.search(text):
            kept, count = [], 0
            for ch in text:
                count += bool(_CJK.match(ch))
                if count > most:
                    break
                kept.append(ch)
            text = "".join(kept)
        else:
            text = " ".join(text.split()[:most])
    return text.strip(" ,、，（(")
