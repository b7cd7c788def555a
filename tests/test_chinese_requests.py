"""Chinese and mixed requests, typed, end to end with the real models: routed to the Chinese model by their
script, read by the Chinese value readers, answered and asked about in Chinese."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from assistant.booking.results import Clarify, Command
from assistant.config import Settings
from assistant.language.registry import get
from assistant.nlu.model_folder import NLUModel
from assistant.nlu.parser import IntentSlotParser, Understanding
from assistant.nlu.routing import LanguageRoutedParser
from assistant.text_pipeline import TextPipeline, Turn
from tests.test_cli import json_lines, run_cli

SHANGHAI = ZoneInfo("Asia/Shanghai")
NOW = datetime(2026, 12, 2, 10, 0, tzinfo=SHANGHAI)  # a Wednesday


@pytest.fixture(scope="module")
def routed(settings: Settings, parser: IntentSlotParser, chinese_model: NLUModel) -> LanguageRoutedParser:
    from assistant.wiring import build_parser

    return LanguageRoutedParser(parser, {get("zh"): build_parser(settings, chinese_model)})


@pytest.fixture()
def pipeline(settings: Settings, routed: LanguageRoutedParser, tmp_path: Path) -> TextPipeline:
    from assistant.wiring import build_text_pipeline

    return build_text_pipeline(settings, tmp_path / "bookings.sqlite", parser=routed)


def _say(pipeline: TextPipeline, *texts: str, conversation: str = "c1") -> list[object]:
    return [pipeline.act_many([Turn(text, conversation, NOW)], commit=True)[0].result for text in texts]


def test_the_founding_example_books_the_smallest_free_room_for_the_default_time(meeting_model: NLUModel,
                                                                               tmp_path: Path) -> None:
    """Issue 17's "done when", as a person types it (into an empty store: the user's own may have Fuji booked)."""
    (out,) = json_lines(run_cli("parse", "--now", "2026-12-02T10:00:00", "--tz", "Asia/Shanghai",
                                "--store", str(tmp_path / "bookings.sqlite"), "帮我订明天上午九点的会议室"))
    assert out["intent"] == "book_meeting"
    assert {(s["name"], s["text"]) for s in out["slots"]} == {("date", "明天"), ("start_time", "上午九点")}
    command = out["result"]["command"]
    assert (command["room"], command["start"], command["end"]) == (
        "fuji", "2026-12-03T09:00:00+08:00", "2026-12-03T09:30:00+08:00")
    assert "no end or duration said: 30 minutes" in command["assumptions"]
    assert any("smallest free room" in a for a in command["assumptions"])


def test_text_goes_to_the_model_of_its_script_and_keeps_its_place(parser: IntentSlotParser,
                                                                  routed: LanguageRoutedParser) -> None:
    texts = ["book everest tomorrow at 9", "取消明天下午三点珠穆朗玛的预订", "what's the weather",
             "帮我订 Everest 后天下午两点"]
    results = routed.parse_many(texts)
    assert [r.text for r in results] == texts
    english = parser.parse_many([texts[0], texts[2]])
    assert [results[0], results[2]] == english  # English is read exactly as without routing
    cancel, mixed = results[1], results[3]
    assert isinstance(cancel, Understanding) and isinstance(mixed, Understanding)
    assert cancel.intent == "cancel_meeting"
    assert {(s.name, s.text) for s in mixed.slots} == {("room", "Everest"), ("date", "后天"),
                                                       ("start_time", "下午两点")}


@pytest.mark.parametrize(("text", "room", "start", "end"), [
    ("订珠穆朗玛明天下午三点到四点", "everest", "15:00", "16:00"),  # a range
    ("预订富士山后天上午十点，开一个小时", "fuji", "10:00", "11:00"),  # a duration
    ("帮我订 Denali 下周一下午两点半，半小时", "denali", "14:30", "15:00"),  # mixed, 两点半, 半小时
    ("乞力马扎罗12月8日9:30到11点", "kilimanjaro", "09:30", "11:00"),  # digits as Whisper writes them
    ("订马特洪峰这周五下午三点一刻，两个钟头", "matterhorn", "15:15", "17:15"),  # 一刻, 钟头
])
def test_chinese_bookings_become_their_commands(pipeline: TextPipeline, text: str, room: str, start: str,
                                                end: str) -> None:
    (result,) = _say(pipeline, text)
    assert isinstance(result, Command), result
    assert (result.room, f"{result.start:%H:%M}", f"{result.end:%H:%M}") == (room, start, end)


def test_questions_are_asked_in_chinese_and_answered_in_chinese(pipeline: TextPipeline) -> None:
    asked, booked = _say(pipeline, "帮我订珠峰", "明天下午三点")
    assert isinstance(asked, Clarify) and asked.question == "哪一天？您想订几点？"
    assert isinstance(booked, Command) and booked.committed and (booked.room, booked.start.hour) == ("everest", 15)
    (taken,) = _say(pipeline, "订珠峰明天下午三点")
    assert isinstance(taken, Clarify) and taken.question.startswith("Everest那时已被占用。")
    english = _say(pipeline, "book everest", conversation="c2")[0]  # the same store, asked in English
    assert isinstance(english, Clarify) and english.question == "Which day? At what time?"


def test_a_doubtful_chinese_time_is_a_chinese_question_never_a_booking(pipeline: TextPipeline) -> None:
    (result,) = _say(pipeline, "订富士今天上午八点")  # 08:00 today has passed at 10:00
    assert isinstance(result, Clarify) and result.doubt is not None and result.doubt.check == "past"
    assert result.question == "今天上午8点已经过去了。您想订几点？"
