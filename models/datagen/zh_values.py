"""Renderers for Chinese slot values: dates, day parts and clock times, ranges, durations, rooms, people, titles.

The same renderer interface as values.py ((rng, kind) -> pieces). Numbers are written both ways a speech
recognizer writes them: in characters (九点半, 两个小时) and in digits (9点半, 2个小时, 9:30), since Whisper
writes either. Rooms come in Chinese (珠穆朗玛) and in English inside Chinese ("订 Everest"), and a wider
vocabulary than the directory, so the tagger learns a room by its place in the sentence.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from models.datagen.lexicon import DIRECTORY_ROOMS, EXTRA_ROOMS, FIRST_NAMES
from models.datagen.template import Piece, Renderer

__all__ = ["ZhValueRenderers", "ZH_ROOMS", "zh_numeral"]

# The default directory's rooms in Chinese (configs/rooms.toml lists them as aliases), then invented names.
ZH_ROOMS: dict[str, list[str]] = {
    "Everest": ["珠穆朗玛", "珠穆朗玛峰", "珠峰"],
    "Kilimanjaro": ["乞力马扎罗", "乞力马扎罗山"],
    "Denali": ["德纳利", "德纳利山"],
    "Fuji": ["富士", "富士山"],
    "Matterhorn": ["马特洪峰", "马特洪"],
    "Olympus": ["奥林匹斯", "奥林匹斯山"],
}
_ZH_EXTRA_ROOMS = ["长城", "泰山", "黄山", "华山", "峨眉", "昆仑", "天山", "庐山", "衡山", "嵩山", "阿尔卑斯",
                   "喜马拉雅", "玉龙", "梅里", "雅典娜", "星辰", "海港", "灯塔", "红杉", "松柏", "一号", "三号",
                   "A101", "B2"]
_ZH_NAMES = ["张伟", "王芳", "李娜", "刘洋", "陈静", "杨磊", "赵敏", "黄涛", "周杰", "吴刚", "徐丽", "孙强",
             "马超", "朱琳", "胡斌", "郭晶", "林峰", "何平", "高翔", "罗敏", "老王", "小李", "小张", "王总",
             "李经理", "张老师", "陈总", "刘工"]
_ZH_TEAMS = ["设计组", "市场部", "研发团队", "销售团队", "产品组", "财务部", "人事部", "法务", "全组", "客户"]
_ZH_TITLES = ["周会", "例会", "站会", "晨会", "项目评审", "设计评审", "代码评审", "面试", "一对一", "客户会议",
              "培训", "复盘会", "产品讨论", "预算会议", "季度总结", "年度规划", "需求评审", "启动会", "头脑风暴",
              "部门会议", "技术分享", "周报会", "版本发布会", "团建讨论", "sprint planning", "standup", "demo"]
_DIGITS = "零一二三四五六七八九"


def zh_numeral(n: int, two: bool = True) -> str:
    """0-99 in characters, as said before a measure word (两 for 2 when `two`): 二十三, 十二, 两."""
    if n == 2 and two:
        return "两"
    if n < 10:
        return _DIGITS[n]
    tens, ones = divmod(n, 10)
    return ("" if tens == 1 else _DIGITS[tens]) + "十" + ("" if ones == 0 else _DIGITS[ones])


def _pick(rng: random.Random, weighted: list[tuple[float, str]]) -> str:
    return rng.choices([v for _, v in weighted], weights=[w for w, _ in weighted])[0]


@dataclass
class ZhValueRenderers:
    digits: bool  # this request writes numbers in digits (9点) rather than characters (九点)
    part_said: bool = False  # the date said the day part (明天下午): its clock times say none

    def table(self) -> dict[str, Renderer]:
        return {
            "room": self.room,
            "date": lambda rng, kind: [(self.date_text(rng), "date")],
            "new_date": lambda rng, kind: [(self.date_text(rng), "new_date")],
            "start_time": lambda rng, kind: [(self.clock(rng), "start_time")],
            "end_time": lambda rng, kind: [(self.clock(rng), "end_time")],
            "new_time": lambda rng, kind: [(self.clock(rng), "new_time")],
            "range": self.range,
            "duration": lambda rng, kind: [(self.duration_text(rng), "duration")],
            "title": lambda rng, kind: [(rng.choice(_ZH_TITLES), "title")],
            "attendees": self.attendees,
            "people_count": lambda rng, kind: [(self.people_text(rng), "people_count")],
        }

    def number(self, rng: random.Random, n: int, two: bool = True) -> str:
        return str(n) if self.digits else zh_numeral(n, two)

    # ---- dates -------------------------------------------------------------------------------------------
    def date_text(self, rng: random.Random) -> str:
        weekday = rng.choice("一二三四五六日天")
        kind = _pick(rng, [(5, "relative"), (4, "weekday"), (2, "calendar"), (0.5, "day_only")])
        if kind == "relative":
            text = _pick(rng, [(3, "今天"), (6, "明天"), (3, "后天"), (0.7, "大后天"), (0.5, "明日")])
        elif kind == "weekday":
            prefix = _pick(rng, [(3, "下"), (2, "这"), (1, "本"), (3, ""), (0.3, "下下")])
            text = prefix + _pick(rng, [(4, "周"), (3, "星期"), (1, "礼拜")]) + weekday
        else:
            day = rng.randint(1, 28)
            month = rng.randint(1, 12)
            unit = _pick(rng, [(1, "日"), (1, "号")])
            text = f"{self.number(rng, day, two=False)}{unit}"
            if kind == "calendar":
                text = f"{self.number(rng, month, two=False)}月" + text
        if rng.random() < 0.35:  # the day part said with the day: 明天上午 (the clock then carries none)
            text += _pick(rng, [(3, "上午"), (3, "下午"), (1, "晚上"), (1, "早上")])
            self.part_said = True
        return text

    # ---- clock times -------------------------------------------------------------------------------------
    def clock(self, rng: random.Random, hour24: int | None = None, part: bool | None = None) -> str:
        if hour24 is None:
            hour24 = rng.choice([8, 9, 9, 10, 10, 11, 12, 13, 14, 14, 15, 15, 16, 16, 17, 18, 19, 20])
        minute_word = _pick(rng, [(10, ""), (4, "半"), (1.5, "一刻"), (0.5, "三刻"), (1, "10"), (1, "20"),
                                  (0.7, "05"), (0.5, "40"), (0.5, "50"), (0.3, "整")])
        hour12 = hour24 % 12 or 12
        if part is None:
            part = not self.part_said and rng.random() < 0.6
        prefix = ""
        if part:
            prefix = ("早上" if rng.random() < 0.3 else "上午") if hour24 < 12 else \
                "中午" if hour24 == 12 else "下午" if hour24 < 18 else "晚上"
        if self.digits and minute_word and minute_word[0].isdigit() and rng.random() < 0.6:
            return f"{prefix}{hour12}:{minute_word.rjust(2, '0')}"
        if minute_word and minute_word[0].isdigit():
            minute = int(minute_word)
            minute_word = f"{minute:02d}" if self.digits else ("零" if minute < 10 else "") + zh_numeral(minute, False)
            minute_word += "分" if rng.random() < 0.3 else ""
        hour = self.number(rng, hour12)
        if rng.random() < 0.1 and not minute_word:
            minute_word = "钟"
        return f"{prefix}{hour}点{minute_word}"

    def range(self, rng: random.Random, kind: str) -> list[Piece]:
        hour = rng.choice([8, 9, 10, 11, 13, 14, 15, 16, 17])
        end = hour + rng.choice([1, 1, 1, 2, 2, 3])
        joiner = _pick(rng, [(5, "到"), (1, "至"), (1, "-"), (1, "一直到")])
        start_piece = self.clock(rng, hour)
        part = any(word in start_piece for word in ("上午", "下午", "早上", "中午", "晚上"))
        # the end repeats the start's day part or drops it as people do ("下午三点到四点")
        end_piece = self.clock(rng, end, part=part and rng.random() < 0.3)
        before = _pick(rng, [(3, ""), (2, "从")])
        return [(before, None), (start_piece, "start_time"), (joiner, None), (end_piece, "end_time")]

    # ---- durations, people -------------------------------------------------------------------------------
    def duration_text(self, rng: random.Random) -> str:
        kind = _pick(rng, [(4, "hours"), (2, "half"), (1, "hour_half"), (2, "minutes"), (0.5, "quarter")])
        if kind == "half":
            return _pick(rng, [(3, "半小时"), (2, "半个小时"), (1, "半个钟头")])
        if kind == "quarter":
            return _pick(rng, [(2, "一刻钟"), (1, "三刻钟")])
        if kind == "hour_half":
            return _pick(rng, [(3, "一个半小时"), (1, "一个半钟头"), (1, "1个半小时")])
        if kind == "minutes":
            return f"{self.number(rng, rng.choice([15, 20, 30, 40, 45, 90]), two=False)}分钟"
        hours = rng.choice([1, 1, 1, 2, 2, 3, 4])
        unit = _pick(rng, [(4, "个小时"), (2, "小时"), (1, "个钟头")])
        return f"{self.number(rng, hours)}{unit}"

    def people_text(self, rng: random.Random) -> str:
        n = rng.choice([2, 3, 4, 5, 6, 6, 8, 8, 10, 12, 15, 20])
        return self.number(rng, n) + _pick(rng, [(4, "个人"), (2, "人"), (1, "位")])

    def attendees(self, rng: random.Random, kind: str) -> list[Piece]:
        if rng.random() < 0.15:
            return [(rng.choice(_ZH_TEAMS), "attendees")]
        count = int(_pick(rng, [(5, "1"), (4, "2"), (2, "3")]))
        pool = _ZH_NAMES if rng.random() < 0.8 else [f" {name} " for name in FIRST_NAMES]
        names = rng.sample(pool, count)
        pieces: list[Piece] = []
        for i, name in enumerate(names):
            if i > 0:
                pieces.append(("和" if i == len(names) - 1 else _pick(rng, [(3, "、"), (1, "，"), (1, "和")]), None))
            pieces.append((name, "attendees"))
        return pieces

    # ---- rooms -------------------------------------------------------------------------------------------
    def room(self, rng: random.Random, kind: str) -> list[Piece]:
        source = _pick(rng, [(6, "chinese"), (3, "english"), (1.5, "chinese_extra"), (1, "english_extra")])
        if source == "chinese":
            name = rng.choice([n for names in ZH_ROOMS.values() for n in names])
        elif source == "chinese_extra":
            name = rng.choice(_ZH_EXTRA_ROOMS)
        else:
            name = rng.choice(list(DIRECTORY_ROOMS) if source == "english" else EXTRA_ROOMS)
            if rng.random() < 0.3:
                name = name.lower()
            if rng.random() < 0.7:  # a recognizer sets English words apart in Chinese: "订 Everest 明天"
                return [(" ", None), (name, "room"), (" ", None)]
        if kind == "bare":
            return [(name, "room")]
        suffix = _pick(rng, [(5, ""), (3, "会议室"), (1, "那间"), (1, "房间"), (0.5, "厅")])
        if suffix == "那间":
            return [("那间", None), (name, "room")] if rng.random() < 0.5 else [(name, "room"), ("那间", None)]
        return [(name, "room"), (suffix, None)]
