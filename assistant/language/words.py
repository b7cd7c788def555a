"""Words as the turn policy counts them, per language: how a text splits into words, and which last words ask
for more ("book Everest at ...", "帮我订明天下午三点到 ...").

English words are runs of Latin letters, digits and apostrophes. Chinese has no spaces: each Han character is a
word, and a Latin run inside Chinese text ("帮我订 Everest") stays one word. A text is read as Chinese when it
holds a Han character.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["WordProfile", "profile_for", "words", "asks_for_more", "tail_after"]

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


@dataclass(frozen=True)
class WordProfile:
    language: str
    pattern: re.Pattern[str]  # one match per word
    asks_for_more: frozenset[str]  # a request ending on one of these goes on
    ends_asking: tuple[str, ...] = ()  # multi-character endings that ask for more (Chinese words of 2+ characters)
    fillers: frozenset[str] = frozenset()  # hesitations a recognizer writes in one decode and drops in another


# Prepositions before a slot, joins, fillers (whisper writes a lone "um" as "M." or "Ah.").
_ENGLISH = WordProfile("en", re.compile(r"[a-z0-9']+"), frozenset({
    "a", "about", "ah", "an", "and", "around", "at", "between", "book", "but", "by", "can", "cancel", "could", "eh",
    "er", "erm", "for", "from", "hm", "hmm", "in", "m", "maybe", "mm", "move", "next", "on", "or", "past",
    "quarter", "reserve", "schedule", "so", "starting", "the", "this", "till", "to", "uh", "uhm", "um", "until",
    "with",
}), fillers=frozenset({"ah", "eh", "er", "erm", "hm", "hmm", "m", "mm", "uh", "uhm", "um"}))

# Chinese: the characters that put a slot after them (在 at, 从 from, 到 until, 和/跟 with, 给 for, 订 book, 开 hold
# for), the fillers (嗯, 呃, 那个, 就是), and the joins (然后, 还有, 再).
_CHINESE = WordProfile("zh", re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]|[a-z0-9']+"), frozenset({
    "在", "从", "到", "和", "跟", "与", "给", "订", "约", "开", "嗯", "呃", "额", "哦", "那", "就",
    "再", "还", "用", "把", "帮", "请", "要", "想", "预", "的", "第",
}), ("那个", "就是", "然后", "还有", "我想", "我要", "一下", "大概", "可能", "或者", "以及"),
    frozenset({"嗯", "呃", "额", "啊", "哦"}))
# Not "点" or "个": "订富士明天下午三点" is a whole request though "三点 ...半" may go on (the turn reopens for that).


def profile_for(text: str) -> WordProfile:
    """The profile of the language the text is written in."""
    return _CHINESE if _HAN.search(text) else _ENGLISH


def words(text: str) -> list[str]:
    """The text's words, lower case, in its language's sense of a word."""
    return profile_for(text).pattern.findall(text.lower())


def asks_for_more(text: str) -> str | None:
    """The last word(s) when they ask for more ("at", "for", "um", "到", "然后"), else None."""
    profile = profile_for(text)
    found = profile.pattern.findall(text.lower())
    if not found:
        return None
    joined = "".join(found[-2:])
    for ending in profile.ends_asking:
        if joined.endswith(ending):
            return ending
    return found[-1] if found[-1] in profile.asks_for_more else None


def tail_after(prefix: str, text: str) -> str:
    """The words of `text` after the part that says `prefix` again, in `text`'s own spelling: what the speaker
    added after a pause, when `text` is the whole request heard again (its first words may be heard a little
    differently in context: "Book Fiji" alone, "Book Fuji on Friday" together). Aligned word by word; with nothing
    in common the whole text is new."""
    from difflib import SequenceMatcher

    profile = profile_for(prefix + text)
    before = [w for w in profile.pattern.findall(prefix.lower()) if w not in profile.fillers]
    spans = [m.span() for m in profile.pattern.finditer(text.lower())]
    now = [text.lower()[a:b] for a, b in spans]
    if not before or not now:
        return text.strip()
    blocks = [b for b in SequenceMatcher(None, before, now, autojunk=False).get_matching_blocks() if b.size]
    if not blocks:
        return text.strip()
    last = blocks[-1]
    # the prefix's words after its last match were heard differently: the same number of words is theirs
    end = min(len(now), last.b + last.size + (len(before) - last.a - last.size))
    if end >= len(now):
        return ""
    return text[spans[end][0] :].strip()
