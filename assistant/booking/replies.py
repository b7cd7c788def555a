"""What the assistant says, in the language of the request: English, or Chinese when the words hold Chinese.

Every question and answer the dispatcher and the dialogue give is here, once per language, with named fields
(`say("zh", "ask.start_time")` is "您想订几点？"). The language is the request's script (`language_of`), the
same rule that routes a text to the Chinese model, so a request answered in Chinese was also read by it.
Machine-facing text (a command's `assumptions`, error codes) stays English: programs read it, not people.
"""

from __future__ import annotations

from datetime import date, datetime

from assistant.booking.zh_time import has_chinese

__all__ = ["LANGUAGES", "language_of", "say", "clock", "room_list", "clock_words", "day_words"]

LANGUAGES = ("en", "zh")

_MESSAGES: dict[str, tuple[str, str]] = {
    # the questions asked for what a request lacks
    "ask.date": ("Which day?", "哪一天？"),
    "ask.start_time": ("At what time?", "您想订几点？"),
    "ask.room": ("Which room?", "哪个会议室？"),
    "ask.new_time": ("When should it move to?", "改到什么时候？"),
    "ask.end_time": ("Until when?", "到几点结束？"),
    "ask.duration": ("For how long?", "开多长时间？"),
    "ask.people_count": ("How many people?", "一共几个人？"),
    "ask.other": ("What {slot}?", "{slot}是什么？"),
    "out_of_scope": ("not a meeting-room request: I can book, cancel, move, check and list room bookings",
                     "这不是会议室的请求：我可以预订、取消、改期、查询和列出会议室的预订。"),
    "unknown_room": ('I don\'t know a room called "{said}". Which room: {names}?',
                     "没有叫“{said}”的会议室。请问是哪一间：{names}？"),
    "which_room": ("I heard two rooms, {names}. Which one?", "我听到了两个会议室：{names}。是哪一间？"),
    "did_you_mean_room": ('Did you mean {room} ("{said}")? Say yes to book it {when}, or say the room.',
                          "您是说{room}（“{said}”）吗？说“好”就订{when}，或者说出会议室的名字。"),
    "which_room_to_change": ('Did you mean {room} ("{said}")? Say the room.',
                             "您是说{room}（“{said}”）吗？请说出会议室的名字。"),
    "free_then": (" Free then: {names}.", "那时有空的会议室：{names}。"),
    "conflict": ("{room} is taken then.", "{room}那时已被占用。"),
    "conflict.others": (" {names} {verb} free at that time, or {room} is free from {later}.",
                        "那时{names}有空，或者{room}从{later}起有空。"),
    "conflict.later": (" It is free from {later}.", "它从{later}起有空。"),
    "conflict.which": (" Which would you like?", "您想要哪个？"),
    "no_room_fits": ("No room seats {people}. Fewer people, or two rooms?",
                     "没有能坐{people}人的会议室。人少一些，或者订两间？"),
    "none_free": ("No room for {people} is free then. {room} is free from {later}. Would that do?",
                  "那时没有能坐{people}人的空会议室。{room}从{later}起有空，可以吗？"),
    "not_yours": ("That booking was made by someone else: only they can change it.",
                  "这个预订是别人订的，只有他们能修改。"),
    "no_such_booking": ("I found no such booking.", "没有找到这个预订。"),
    "which_booking": ("Which one? I found {count} bookings that match.", "找到{count}个相符的预订，是哪一个？"),
    "day_bookings": ("{count} booking(s) on {day}{where}.", "{day}{where}有{count}个预订。"),
    "where": (" in {room}", "{room}"),
    "room_verdict": ("{room} is {verdict} {start}-{end}{fits}.", "{room}在{start}-{end}{verdict}{fits}。"),
    "verdict.free": ("free", "有空"),
    "verdict.taken": ("taken", "已被占用"),
    "fits.no": (" (it seats {seats}, fewer than {people})", "（只能坐{seats}人，少于{people}人）"),
    "free_rooms": ("Free {start}-{end}: {names}.", "{start}-{end}有空的会议室：{names}。"),
    "no_room": ("no room", "没有"),
    "bookings": ("{count} booking(s){where}.", "{where}有{count}个预订。"),
    "seats_fewer": ("{room} seats {seats}, fewer than {people}", "{room}只能坐{seats}人，少于{people}人"),
    # the guard's doubts: what is doubtful, then what to say next
    "doubt.not_a_time": ('"{said}" is not a {kind}.', "“{said}”不是{kind}。"),
    "doubt.split": ("I heard two {kind}s.", "我听到了两个{kind}。"),
    "doubt.unread": ('I could not read the {kind} "{said}".', "我没听懂{kind}“{said}”。"),
    "doubt.order": ("The end ({end}) is not after the start ({start}).",
                    "结束时间（{end}）不晚于开始时间（{start}）。"),
    "doubt.too_long": ("That is {hours} hours ({shown}{next_day}), longer than a booking may last ({most} hours).",
                       "这是{hours}个小时（{shown}{next_day}），超过了一次预订的最长时间（{most}个小时）。"),
    "doubt.midnight": ("That runs past midnight ({shown} the next day).", "这会跨过午夜（{shown}，到第二天）。"),
    "doubt.past": ("{clock} {day} has already passed.", "{day}{clock}已经过去了。"),
    "doubt.out_of_range": ("I can book from {first} to {last} only, and {day} is outside that.",
                           "我只能预订{first}到{last}之间的时间，{day}不在这个范围内。"),
    "doubt.teen": ('"{said}" sounds like {ty} too. Did you mean {ty}? Say yes, or say the length again.',
                   "“{said}”也可能是{ty}。您是说{ty}吗？说“好”就按{ty}订，或者再说一遍时长。"),
    "doubt.did_you_mean": ("Did you mean {clock}?", "您是说{clock}吗？"),
    "span": ("{start} to {end}", "{start}到{end}"),
    "next_day": (" the next day", "，到第二天"),
    "kind.date": ("date", "日期"),
    "kind.length": ("length", "时长"),
    "kind.time": ("time", "时间"),
    "kind.end time": ("end time", "结束时间"),
    "today": ("today", "今天"),
    "tomorrow": ("tomorrow", "明天"),
    # the dialogue
    "nothing_booked": ("OK, nothing booked.", "好的，没有预订。"),
    "propose": ("Did you want to book {room} {when}? Say yes to book it.", "您是想订{room}，{when}吗？说“好”就订。"),
    "nothing_to_undo": ("there is no booking of this conversation to undo", "这次对话里没有可以撤销的预订"),
}

_JOIN = {"en": ", ", "zh": "、"}


def language_of(text: str) -> str:
    """"zh" when the words hold a Chinese character (the Chinese model read them), else "en"."""
    return "zh" if has_chinese(text) else "en"


def say(language: str, key: str, **fields: object) -> str:
    english, chinese = _MESSAGES[key]
    return (chinese if language == "zh" else english).format(**fields)


def room_list(language: str, names: list[str]) -> str:
    return _JOIN["zh" if language == "zh" else "en"].join(names)


def clock_words(language: str, moment: datetime) -> str:
    """A time as said: "3:15 pm"; "下午3:15" (上午 before noon)."""
    hour = moment.hour % 12 or 12
    minutes = moment.strftime(":%M") if moment.minute else ""
    if language == "zh":
        return f"{'上午' if moment.hour < 12 else '下午'}{hour}{minutes or '点'}"
    return f"{hour}{minutes} {'am' if moment.hour < 12 else 'pm'}"


def day_words(language: str, moment: datetime, today: date) -> str:
    """today, tomorrow, else the date: "Fri 4 Dec"; "12月4日"."""
    days = (moment.date() - today).days
    if days in (0, 1):
        return say(language, "today" if days == 0 else "tomorrow")
    return f"{moment.month}月{moment.day}日" if language == "zh" else moment.strftime("%a %-d %b")


def clock(moment: datetime) -> str:
    """24-hour time, as both languages write it in a reply ("14:30")."""
    return moment.strftime("%H:%M")
