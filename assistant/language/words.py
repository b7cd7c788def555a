"""Words as the turn policy counts them, in the language of the text: how a text splits into words, and which
last words ask for more ("book Everest at ...", "帮我订明天下午三点到 ..."). Each language's words are in its
profile (English words are runs of Latin letters, digits and apostrophes; in Chinese each Han character is one).
"""

from __future__ import annotations

from assistant.language.profile import WordProfile
from assistant.language.registry import language_of

__all__ = ["profile_for", "words", "asks_for_more", "tail_after"]


def profile_for(text: str) -> WordProfile:
    """The word profile of the language the text is written in."""
    return language_of(text).words


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
