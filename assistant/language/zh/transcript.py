"""Chinese transcripts put right for the booking domain: simplified characters, and the domain's words that the
recognizer heard by their sound but wrote with other characters.

Whisper base writes Mandarin by sound: on the spoken corpus (tests/data/corpus_zh) it wrote 上午 as 上五, 下午 as
下五 or 下5, 九点 as 就点, 改到 as 改刀, 德纳利 as 得那里, 乞力马扎罗 as 期立马扎罗, and now and then traditional
characters (德納利). Chinese recognizers correct such words against a hotword list by pinyin; so does this:

- traditional -> simplified (OpenCC's table, opencc-python-reimplemented, Apache-2.0);
- a run of characters that sounds exactly like a domain word (same toneless pinyin, via pypinyin, MIT) is that
  word: the rooms' Chinese names (any run for names of three or more syllables may differ in one syllable that
  starts with the same letter: 中穆朗玛 -> 珠穆朗玛; and rounded vowels heard one for another, zhou or zhong for
  zhu, mo for mu, where at least one syllable is exact: 周末朗马 -> 珠穆朗玛, 周风 and 中风 -> 珠峰), 改到, 取消, 预订;
- a day part (上午, 下午, 中午, 晚上, 早上) only where a number follows (上五十点 -> 上午十点; 商务会议 stays),
  and then one syllable may be off if it starts with the same letter (向五两点 -> 下午两点);
- a character that sounds like a numeral right before 点 is that numeral (就点 -> 九点);
- an echo of 午 before a clock time goes (上午五十点半 -> 上午十点半: no hour is 五十), and of 点 after one
  (十二点点 -> 十二点; 一点点, "a little", stays);
- 定 (ding, as 订) where it asks for something (帮我定, 我想定, 请定) or comes right before a room's name: 订, the
  booking word the model knows (Whisper base writes both; "帮我定明天上午九点的会议室" was read as no request).

Nothing here guesses a meaning: it only rewrites sounds into the domain's spelling of them. A wrong reading that
is left still reaches the dispatcher, which asks when in doubt.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

__all__ = ["ChineseTranscriptFixer"]

_DAY_PARTS = ("上午", "下午", "中午", "晚上", "早上")
_WORDS = ("改到", "取消", "预订")
_NUMERALS = "零一二三四五六七八九十两"
_DIGIT_SOUNDS = dict(zip("0123456789", ("ling", "yi", "er", "san", "si", "wu", "liu", "qi", "ba", "jiu"), strict=True))
_FOLLOWS_NUMBER = re.compile(rf"[{_NUMERALS}\d]")
_ECHO = re.compile(r"([上下中]午)五(十[一二]?点)")
_DOUBLE_DIAN = re.compile(r"((?:十[一二]?|[二三四五六七八九两]|\d{1,2})点)点(?!儿)")
_ASKING_DING = re.compile(r"(帮我|给我|我想|我要|想要|请|麻烦)定")
_INITIALS = set("bpmfdtnlgkhjqxrzcsyw")
# The finals Whisper base wrote one for another on the corpus's voice (zhu as zhou and zhong, mu as mo)
_ROUNDED = {"u", "ou", "o", "uo", "ong"}


@cache
def _converter():  # type: ignore[no-untyped-def]  # opencc has no type hints
    import opencc

    return opencc.OpenCC("t2s")


def _sound(ch: str) -> str | None:
    """The toneless pinyin of one character (a digit as its Chinese reading); None for anything else."""
    if ch in _DIGIT_SOUNDS:
        return _DIGIT_SOUNDS[ch]
    if not ("\u3400" <= ch <= "\u9fff"):
        return None
    from pypinyin import lazy_pinyin

    return str(lazy_pinyin(ch)[0])


def _split(syllable: str) -> tuple[str, str]:
    """(initial, final) of a toneless pinyin syllable: zhou -> (zh, ou), mo -> (m, o), ang -> ("", ang)."""
    if syllable[:2] in ("zh", "ch", "sh"):
        return syllable[:2], syllable[2:]
    if syllable[:1] in _INITIALS:
        return syllable[:1], syllable[1:]
    return "", syllable


def _rounded_alike(heard: str, meant: str) -> bool:
    """The same initial and both finals rounded back vowels: zhou, zhong for zhu; mo for mu."""
    (i1, f1), (i2, f2) = _split(heard), _split(meant)
    return i1 == i2 and f1 in _ROUNDED and f2 in _ROUNDED


def _close(heard: list[str | None], word: list[str], shortest: int = 3) -> bool:
    """Same sounds, but for rounded vowels heard one for another (周末朗马 for 珠穆朗玛, 周风 and 中风 for 珠峰: at
    least one syllable exact); or a word of `shortest` syllables or more one syllable off, if that syllable starts
    with the same letter."""
    if any(h is None for h in heard):
        return False
    misses = [(str(h), w) for h, w in zip(heard, word, strict=True) if h != w]
    if not misses:
        return True
    if len(misses) < len(word) and all(_rounded_alike(h, w) for h, w in misses):
        return True
    return len(word) >= shortest and len(misses) == 1 and misses[0][0][:1] == misses[0][1][:1]


class ChineseTranscriptFixer:
    def __init__(self, room_names: Iterable[str]) -> None:
        """`room_names`: the directory's Chinese names (aliases with Chinese characters)."""
        names = sorted({n for n in room_names if n}, key=len, reverse=True)  # longest first: 珠穆朗玛峰 before 珠峰
        self._names = [(n, [_sound(c) or c for c in n]) for n in names]
        self._words = [(w, [_sound(c) or c for c in w]) for w in _WORDS]
        self._parts = [(p, [_sound(c) or c for c in p]) for p in _DAY_PARTS]
        self._numerals = {_sound(c): c for c in "一二三四五六七八九十"}

    def __call__(self, text: str) -> str:
        text = _converter().convert(text)
        chars = list(text)
        sounds = [_sound(c) for c in chars]
        fixed = [False] * len(chars)
        for fuzzy in (False, True):  # every exact sound first: 德纳利 stays, though 迪纳利 is a name one letter off
            for word, syllables in self._names:
                self._replace(chars, sounds, fixed, word, syllables, fuzzy=fuzzy)
        for word, syllables in self._words:
            self._replace(chars, sounds, fixed, word, syllables, fuzzy=False)
        for fuzzy in (False, True):  # 向五两点: a number follows, so one syllable may be off (xiang for xia)
            for word, syllables in self._parts:
                self._replace(chars, sounds, fixed, word, syllables, fuzzy=fuzzy, before_number=True)
        for i in range(len(chars) - 1):
            if (chars[i + 1] == "点" and not fixed[i] and chars[i] not in _NUMERALS and not chars[i].isdigit()
                    and sounds[i] in self._numerals):
                chars[i] = self._numerals[sounds[i]]
        text = _DOUBLE_DIAN.sub(r"\1", _ECHO.sub(r"\1\2", "".join(chars)))
        text = _ASKING_DING.sub(r"\1订", text)
        for name, _ in self._names:  # 定 right before a room's name
            text = text.replace(f"定{name}", f"订{name}")
        return text

    @staticmethod
    def _replace(chars: list[str], sounds: list[str | None], fixed: list[bool], word: str, syllables: list[str],
                 *, fuzzy: bool, before_number: bool = False) -> None:
        n = len(word)
        i = 0
        while i + n <= len(chars):
            window = sounds[i : i + n]
            hit = "".join(chars[i : i + n]) == word or (
                not any(fixed[i : i + n]) and (window == syllables or (
                    fuzzy and _close(window, syllables, 2 if before_number else 3))))
            if hit and before_number and not (i + n < len(chars) and _FOLLOWS_NUMBER.match(chars[i + n])):
                hit = False
            if hit:
                chars[i : i + n] = list(word)
                sounds[i : i + n] = syllables
                fixed[i : i + n] = [True] * n
                i += n
            else:
                i += 1
