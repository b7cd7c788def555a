"""Chinese transcripts put right by sound: the misreadings are Whisper base's own, on the spoken Chinese corpus."""

import pytest

from assistant.language.zh.transcript import ChineseTranscriptFixer

ROOMS = ["珠穆朗玛", "珠穆朗玛峰", "珠峰", "乞力马扎罗", "乞力马扎罗山", "德纳利", "德纳利山", "迪纳利", "富士",
         "富士山", "马特洪峰", "马特洪", "奥林匹斯", "奥林匹斯山"]


@pytest.fixture(scope="module")
def fix() -> ChineseTranscriptFixer:
    return ChineseTranscriptFixer(ROOMS)


@pytest.mark.parametrize(("heard", "meant"), [
    ("帮我定明天上午就点了会议室。", "帮我订明天上午九点了会议室。"),  # 就 (jiu) before 点 is 九; 帮我定: 订
    ("预订富士山后天上五十点,开一个小时。", "预订富士山后天上午十点,开一个小时。"),  # 上五 + a number: 上午
    ("帮我定一张明天下5三点去上海的火车票。", "帮我订一张明天下午三点去上海的火车票。"),  # 5 said wu
    ("我想定期立马扎罗,明天上午10点半。", "我想订乞力马扎罗,明天上午10点半。"),  # a name by its sound
    ("变中穆朗马明天下午三点到四点。", "变珠穆朗玛明天下午三点到四点。"),  # a long name one syllable off
    ("变周末朗马明天下午三点到四点。", "变珠穆朗玛明天下午三点到四点。"),  # zhou mo for zhu mu: rounded vowels
    ("帮我约周风下周三上午十一点", "帮我约珠峰下周三上午十一点"),  # zhou feng for zhu feng
    ("定中风下周三下午三点到五点。", "订珠峰下周三下午三点到五点。"),  # zhong feng for zhu feng; 定 + a room
    ("定得那里后天下午一点到两点半", "订德纳利后天下午一点到两点半"),
    ("包括定德納利下周一下五两点半", "包括订德纳利下周一下午两点半"),  # traditional characters: simplified
    ("帮我订马特洪峰明天中午十二点点到下午一点", "帮我订马特洪峰明天中午十二点到下午一点"),  # 点 echoed
    ("把奥林匹斯这周五下五四点的会议改刀下周二", "把奥林匹斯这周五下午四点的会议改到下周二"),
])
def test_domain_words_heard_by_sound_are_spelled_right(fix: ChineseTranscriptFixer, heard: str, meant: str) -> None:
    assert fix(heard) == meant


@pytest.mark.parametrize("text", [
    "商务会议明天十点",  # shang wu: 上午 only where a number follows
    "德纳利明天上午11点有没有空",  # a right name stays (迪纳利 is another, one letter off), digits stay digits
    "明天方式怎么定",  # fang shi is not fu shi: a rounded vowel only for a rounded vowel; 定 asks for nothing here
    "定一个早上七点的闹钟",  # 定 before no room and after no asking word: left as heard
    "稍等一点点",  # 一点点: "a little", no clock time
    "周五中午开会",  # zhou wu, zhong wu: no name has them
    "帮我订个周末",  # zhou mo: no syllable of a name exact
    "有点累，早点回家",  # 有点 and 早点 are no clock times
    "book everest tomorrow at 9",
])
def test_what_is_not_a_misreading_is_left_alone(fix: ChineseTranscriptFixer, text: str) -> None:
    assert fix(text) == text


@pytest.mark.parametrize(("heard", "meant"), [
    ("把德纳利下周一向五两点半的会改到向五四点", "把德纳利下周一下午两点半的会改到下午四点"),  # xiang wu + a number
    ("我想订乞力马扎罗。明天上午五十点半。", "我想订乞力马扎罗。明天上午十点半。"),  # 午 heard twice: no hour is 五十
])
def test_day_parts_are_put_right_where_a_clock_time_follows(fix: ChineseTranscriptFixer, heard: str, meant: str
                                                             ) -> None:
    assert fix(heard) == meant


def test_a_word_like_a_day_part_without_a_number_after_it_stays(fix: ChineseTranscriptFixer) -> None:
    assert fix("我想五点开会") == "我想五点开会"  # 想五 is no 下午: 点 is no number
