"""Chinese, and Chinese with English words in it ("帮我订 Everest 明天下午三点"): any text with a Han character."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import datetime
from functools import cache

from assistant.language.profile import DialogueWords, Language, ModelRecipe, NamedRoom, RoomWords, WordProfile
from assistant.language.script import HAN
from assistant.language.zh.ear import ear_clock, ear_date, ear_span
from assistant.language.zh.readers import (
    parse_zh_clock,
    parse_zh_count,
    parse_zh_date,
    parse_zh_duration,
    spoken_words,
)
from assistant.language.zh.replies import REPLIES
from assistant.language.zh.transcript import ChineseTranscriptFixer

__all__ = ["CHINESE"]

_SCRIPT = re.compile(f"[{HAN}]")

# The characters that put a slot after them (在 at, 从 from, 到 until, 和/跟 with, 给 for, 订 book, 开 hold for),
# the fillers (嗯, 呃, 那个, 就是), and the joins (然后, 还有, 再). Each Han character is a word, and a Latin run
# inside Chinese text ("帮我订 Everest") stays one word.
_WORDS = WordProfile(re.compile(f"[{HAN}]|[a-z0-9']+"), frozenset({
    "在", "从", "到", "和", "跟", "与", "给", "订", "约", "开", "嗯", "呃", "额", "哦", "那", "就",
    "再", "还", "用", "把", "帮", "请", "要", "想", "预", "的", "第",
}), ("那个", "就是", "然后", "还有", "我想", "我要", "一下", "大概", "可能", "或者", "以及"),
    frozenset({"嗯", "呃", "额", "啊", "哦"}))
# Not "点" or "个": "订富士明天下午三点" is a whole request though "三点 ...半" may go on (the turn reopens for that).

_DIALOGUE = DialogueWords(
    yes=r"^(好|好的|行|可以|是的|是|对|对的|没问题|就这个|订吧)[吧啊的呀。！!，,\s]*$",
    no=r"^(不|不用|不要|算了|不行|不了)",
    undo=r"^(撤销|撤回|取消刚才的?(那个|预订)?)[吧。！!\s]*$",
    correction=r"^\W*(?:改成|改到|换成|不是)",  # "改成三点"
    correction_inside=r"[，。；]\s*(?=改成|改到|换成|不是)",
    # the words that join a fragment's values ("明天下午三点，开一个小时吧")
    fragment_joins=r"嗯|呃|那个|就是|然后|改成|改到|换成|从|到|至|开始|开|用|在|吧|呢|啊|吗|的|请|谢谢|好|那|就|再|"
                   r"[，。？！、：]",
)


@cache
def _pinyin(text: str) -> str:
    """Toneless pinyin, syllables run together: 马特洪峰 -> matehongfeng."""
    from pypinyin import lazy_pinyin  # imported on first use: only Chinese room names need it

    return "".join(lazy_pinyin(text))


_ROOMS = RoomWords(
    noise=r"会议室|会议厅|房间|那间|这间|那个|的",  # "珠峰会议室", "那间富士" name 珠峰 and 富士
    any_room=r"会议室|会议|房间|地方",  # "的会议室"
    spaced=False,
    # toneless pinyin: 附属 fushu for 富士 fushi is 0.8
    sound_key=_pinyin, sound_least=0.8, sound_min_length=0,
)


def _clock_words(moment: datetime) -> str:
    """A time as said: "下午3:15" (上午 before noon)."""
    minutes = moment.strftime(":%M") if moment.minute else ""
    return f"{'上午' if moment.hour < 12 else '下午'}{moment.hour % 12 or 12}{minutes or '点'}"


def _chinese_names(rooms: Iterable[NamedRoom]) -> list[str]:
    return [alias for room in rooms for alias in room.aliases if _SCRIPT.search(alias)]


def _hotwords(rooms: Iterable[NamedRoom]) -> str:
    """The rooms first, in both languages, then requests as they are said, one with an English name in it: ending
    on a whole request, not on the list, keeps "会议室：" out of transcripts; the English names and the mixed
    request keep English words spoken inside Chinese (26 -> 29 of 35, docs/multilingual.md)."""
    rooms = list(rooms)
    names = "、".join(next((a for a in room.aliases if _SCRIPT.search(a)), room.name) for room in rooms)
    english = "、".join(room.name.capitalize() for room in rooms)
    return (f"会议室有{names}（{english}）。帮我订周五上午十点的会议室，开一个小时。取消预订，改到下午三点。"
            f"帮我订 {rooms[-1].name.capitalize()} 明天下午两点。")


# multilingual-e5-small is twice MiniLM's depth, so fewer requests keep its training within minutes on two cores;
# it reads Chinese a character a token, which its pretraining cut into longer pieces, so it trains longer and
# faster than MiniLM (at 2 epochs and 1e-4 it ended underfit: dev intent accuracy 85.7 %).
_MODEL = ModelRecipe(encoder="multilingual-e5", data="models.datagen.zh_generator",
                     own_sources="models/datagen/zh_*.py", characters_apart=True, sizes=(8000, 1600),
                     training=(3, 2e-4))  # no heard corpus yet (no voices): docs/nlu.md#heard


def _fixer(rooms: Iterable[NamedRoom]) -> Callable[[str], str]:
    return ChineseTranscriptFixer(_chinese_names(rooms))


CHINESE = Language(
    code="zh", name="Chinese", script=_SCRIPT, words=_WORDS, dialogue=_DIALOGUE, rooms=_ROOMS, replies=REPLIES,
    list_separator="、", sentence_gap="",
    units_per_second=10.0,  # characters; fast Mandarin is about 7 syllables (characters) a second
    read_date=parse_zh_date, read_clock=parse_zh_clock, read_duration=parse_zh_duration, read_count=parse_zh_count,
    clock_words=_clock_words, date_words=lambda moment: f"{moment.month}月{moment.day}日",
    span_words=lambda start, end: f"{start.month}月{start.day}日 {start:%H:%M}-{end:%H:%M}",
    model=_MODEL, recognizer="base", hotwords=_hotwords, rewrite=None, rewrite_for_rooms=_fixer,
    spoken_words=spoken_words, ear_clock=ear_clock, ear_span=ear_span, ear_date=ear_date, voice="espeak:cmn",
)
