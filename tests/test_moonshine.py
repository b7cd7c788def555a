"""Moonshine tiny as the English recognizer on a CPU ([asr] engine = "moonshine"): its vocabulary, the hotword
lift, its spelled forms put right, the real model on real speech, and a spoken booking through a real server."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import urllib.request
import wave
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soxr

from assistant.asr.moonshine import MoonshineRecognizer, TokenText, _Hotwords, moonshine_model_dir
from assistant.asr.moonshine_text import rewrite
from assistant.config import load_settings
from assistant.errors import ConfigError
from assistant.server.spawn import spawn_server
from tests.transcripts import normalized

DATA = Path(__file__).resolve().parent / "data"
ROOMS = ["everest", "fuji", "denali", "kilimanjaro", "olympus", "matterhorn"]


def _pcm(path: Path) -> bytes:
    """The WAV as 16 kHz PCM, as the server hands it to a recognizer."""
    with wave.open(str(path)) as wav:
        rate, samples = wav.getframerate(), np.frombuffer(wav.readframes(wav.getnframes()), "<i2")
    return bytes(soxr.resample(samples, rate, 16_000).astype("<i2").tobytes())


@pytest.fixture(scope="module")
def recognizer() -> MoonshineRecognizer:
    return MoonshineRecognizer(ROOMS)


def test_the_vocabulary_is_read_whole_and_decodes_words() -> None:
    tokens = TokenText(moonshine_model_dir() / "tokenizer.bin")
    assert len(tokens.pieces) == 32768  # the decoder's logits
    assert tokens.pieces[:3] == [b"<unk>", b"<s>", b"</s>"]
    the = tokens.pieces.index("\u2581the".encode())
    assert tokens.decode([1, the, 2]) == "the"  # start and end are not text


@pytest.mark.parametrize(("written", "token", "lifted"), [
    ("Book", " Den", True),  # a word starting on its way to Denali
    ("Book Den", "ali", True),  # ... and going on
    ("Book Den", "ver", False),  # ... leaving it: Denver is no room
    ("Book", " E", False),  # one letter starts too many words
    ("Is", " ever", True),
    ("Book", " the", False),
])
def test_a_token_is_lifted_only_while_the_word_can_still_become_a_room(written: str, token: str, lifted: bool
                                                                       ) -> None:
    assert _Hotwords(ROOMS).lifts(written, token) is lifted


def test_real_speech_is_heard_with_the_room_named(recognizer: MoonshineRecognizer) -> None:
    text = recognizer.transcribe(_pcm(DATA / "book_everest_tomorrow_9.wav"))
    assert normalized(text).startswith("book everest tomorrow at 9"), text
    assert recognizer.transcribe(bytes(32000)) in ("", ".")  # a second of silence says nothing
    assert recognizer.transcribe(bytes(1000)) == ""  # under the encoder's first window


def test_audio_longer_than_the_decoder_takes_is_heard_in_pieces(recognizer: MoonshineRecognizer) -> None:
    """The decoder takes at most 384 encoder frames (about 9.2 s); a longer request (or a reopened turn heard
    again as one) once raised in ONNX Runtime. Two requests with a pause between, 12 s in all: both are heard."""
    first, second = _pcm(DATA / "book_everest_tomorrow_9.wav"), _pcm(DATA / "cancel_denali_friday.wav")
    pause = bytes(2 * 16000 * 2)
    long = first + pause + second + pause + first
    assert len(long) / 32000 > 9.5
    words = normalized(recognizer.transcribe(long))
    assert words.count("everest") == 2 and "denali" in words, words


def test_the_lift_hears_more_of_the_rooms_said_than_the_plain_search() -> None:
    """On the tuning voices' requests (hibari and joe), counted over the corpus rather than held to one transcript:
    the plain search wrote "Booked in Ali" for Book Denali and "killin' Mongero" for Kilimanjaro here."""
    entries = json.loads((DATA / "corpus" / "requests.json").read_text())
    named = [(entry["file"], room) for entry in entries for room in ROOMS if room in entry["text"].lower()]
    plain, lifted = MoonshineRecognizer(ROOMS, hotword_bonus=0), MoonshineRecognizer(ROOMS)
    heard = {name: 0 for name in ("plain", "lifted")}
    for (file, room), voice in itertools.product(named, ("", "joe")):
        pcm = _pcm(DATA / "corpus" / voice / file)
        heard["plain"] += room in plain.transcribe(pcm).lower()
        heard["lifted"] += room in lifted.transcribe(pcm).lower()
    assert heard["lifted"] > heard["plain"], heard


@pytest.mark.parametrize(("heard", "meant"), [
    ("Book a room for eight people to-morrow at eleven.", "Book a room for eight people tomorrow at eleven."),
    ("Is Everest free to morrow at three.", "Is Everest free tomorrow at three."),
    ("To-morrow at nine", "Tomorrow at nine"),
    ("on Thursday at half-past three", "on Thursday at half past three"),
    ("at nine a. M for ninety minutes", "at nine am for ninety minutes"),
    ("Move my two p M, meeting on Friday to four p M..", "Move my two pm, meeting on Friday to four pm."),
    ("at 4:00 p.m. with Priya", "at 4:00 pm with Priya"),
])
def test_spelled_forms_are_put_right(heard: str, meant: str) -> None:
    assert rewrite(heard) == meant


@pytest.mark.parametrize("heard", ["book a meeting at nine", "I am free", "a map of Fuji", "Sam at 2pm"])
def test_other_words_are_left_as_heard(heard: str) -> None:
    assert rewrite(heard) == heard


def test_the_engine_is_checked_when_settings_are_read() -> None:
    with pytest.raises(ConfigError, match="engine"):
        load_settings(None, {}, ["asr.engine=vosk"])
    with pytest.raises(ConfigError, match="CPU"):
        load_settings(None, {}, ["asr.engine=moonshine", "asr.device=cuda"])
    assert load_settings(None, {}, ["asr.engine=moonshine"]).asr.engine == "moonshine"


def test_a_spoken_booking_through_a_server_on_moonshine(tmp_path: Path, meeting_model: Any) -> None:
    store = tmp_path / "bookings.sqlite"
    log: list[str] = []
    proc, url = spawn_server(store, ["--set", "asr.engine=moonshine", "--set", 'nlu.languages=["en"]'], log=log)
    try:
        sent = subprocess.run([sys.executable, "-m", "assistant", "send", str(DATA / "book_everest_tomorrow_9.wav"),
                               "--url", url, "--now", "2026-12-02T10:00:00", "--tz", "Europe/Berlin", "--fast"],
                              capture_output=True, text=True, timeout=120, check=True)
        events = [json.loads(line) for line in sent.stdout.splitlines()]
        with urllib.request.urlopen(url.replace("ws://", "http://") + "/metrics", timeout=10) as response:
            metrics = response.read().decode()
    finally:
        proc.terminate()
        proc.wait(30)
    command = [e for e in events if e["type"] == "result"][0]["result"]["command"]
    assert (command["action"], command["room"], command["start"], command["end"]) == (
        "book_meeting", "everest", "2026-12-03T09:00:00+01:00", "2026-12-03T10:00:00+01:00")
    assert 'asr_model="moonshine-tiny"' in metrics
    assert not any("Traceback" in line for line in log)
