"""Recognizer output that cannot be the speech (assistant/asr/plausible.py): the loops and prompt echoes Whisper
was seen writing are caught and cut, every request of the spoken corpora passes untouched, and the real tiny.en
decodes a caught text again without its prompt."""

from __future__ import annotations

import json
import os
import wave
from pathlib import Path

import pytest

from assistant.asr.plausible import cut, implausible, prompt_lists
from assistant.asr.whisper import WhisperRecognizer
from assistant.config import load_settings
from assistant.language.registry import get
from assistant.wiring import recognizer_hotwords
from tests.test_speech_models import _pcm16k
from tests.transcripts import normalized

DATA = Path(__file__).resolve().parent / "data"
SETTINGS = load_settings(None, os.environ)
LISTS = prompt_lists(recognizer_hotwords(SETTINGS)) + prompt_lists(recognizer_hotwords(SETTINGS, get("zh")))
# base on the founding example, prompted with the rooms in both languages (issue 29), until 170 tokens
LOOP = "帮我订明天上午九点的会议室" + "（Everest、Kilimanjaro" * 4


def _seconds(path: Path) -> float:
    with wave.open(str(path), "rb") as wav:
        return wav.getnframes() / wav.getframerate()


@pytest.mark.parametrize(("text", "seconds", "why", "kept"), [
    (LOOP, 3.0, "repeats", "帮我订明天上午九点的会议室（Everest、Kilimanjaro"),
    ("Book, reserve, cancel, move. Rooms: Everest, Kilimanjaro, Denali, Fuji", 2.0, "echoes_prompt", ""),
    ("Book Fuji at ten. Rooms: Everest, Kilimanjaro, Denali", 2.0, "echoes_prompt", "Book Fuji at ten. Rooms:"),
    ("会议室有珠穆朗玛、乞力马扎罗、德纳利、富士", 2.0, "echoes_prompt", ""),
    ("Book Everest at nine. Book Everest at nine. Book Everest at nine.", 4.0, "repeats", "Book Everest at nine."),
    ("one two three four five six seven eight nine ten eleven twelve", 1.0, "too_long",
     "one two three four five six seven eight nine"),
    ("帮我订明天上午九点的会议室帮我订明天下午三点", 0.5, "too_long", "帮我订明天上午九"),
])
def test_what_cannot_be_the_speech_is_caught_and_cut(text: str, seconds: float, why: str, kept: str) -> None:
    assert implausible(text, seconds, LISTS) == why
    assert cut(text, seconds, LISTS) == kept
    assert implausible(cut(text, seconds, LISTS), seconds, LISTS) is None


@pytest.mark.parametrize("text", ["Is Fuji, Denali or Everest free at three?", "ten ten ten", "Book Fuji. Book Fuji.",
                                  "富士、珠峰有空吗"])
def test_what_people_say_is_not_caught(text: str) -> None:
    assert implausible(text, 2.0, LISTS) is None


def test_no_request_of_the_spoken_corpora_is_caught() -> None:
    items = [(DATA / corpus / item["file"], item["text"]) for corpus in ("corpus", "corpus_zh")
             for item in json.loads((DATA / corpus / "requests.json").read_text())]
    items += [(DATA / "pauses" / item["file"], " ".join(item["pieces"]))
              for item in json.loads((DATA / "pauses" / "pauses.json").read_text())]
    caught = {path.name: implausible(text, _seconds(path), LISTS) for path, text in items}
    assert len(items) > 150 and not any(caught.values()), {k: v for k, v in caught.items() if v}


def test_a_caught_text_is_decoded_again_without_the_prompt(tmp_path: Path) -> None:
    recognizer = WhisperRecognizer(tmp_path, "tiny.en", hotwords=recognizer_hotwords(SETTINGS))
    pcm = _pcm16k(DATA / "book_everest_tomorrow_9.wav")
    echoed = "Book, reserve, cancel, move. Rooms: Everest, Kilimanjaro, Denali, Fuji, Matterhorn, Olympus."
    fine = "Book Everest tomorrow at 9 for an hour."
    texts = recognizer._plausible([pcm, pcm], [echoed, fine])  # as if the decoder had read the prompt back
    assert normalized(texts[0]) == "book everest tomorrow at 9 for an hour" and texts[1] == fine, texts
    assert recognizer.redecoded == 1
