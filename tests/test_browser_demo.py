"""The browser demo, driven for real: Debian's Chromium through Playwright, a fake microphone that plays a spoken
request from a WAV file, the real server and models. The page must show the command card with the right room and
times, the latency waterfall and the booking in the day view. A screenshot is kept as a test artifact."""

from __future__ import annotations

import json
import os
import subprocess
import wave
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
import soxr

from assistant.nlu.model_folder import NLUModel
from assistant.server.spawn import spawn_server

if TYPE_CHECKING:
    from playwright.sync_api import Page

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS", REPO / "tests" / "artifacts"))
# A closed network: nothing may try to reach the internet (testing.md).
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream"]

if not CHROMIUM.exists():
    reason = "Debian's chromium is not installed (make test installs it)"
    if os.environ.get("CI"):
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def _looped(source: Path, tmp_path: Path) -> Path:
    """The spoken request after half a second of quiet and followed by ten seconds of it (the fake device loops)."""
    with wave.open(str(source), "rb") as wav:
        params, pcm = wav.getparams(), wav.readframes(wav.getnframes())
    rate = params.framerate
    path = tmp_path / "microphone.wav"
    with wave.open(str(path), "wb") as out:
        out.setparams(params)
        out.writeframes(b"\x00\x00" * (rate // 2) + pcm + b"\x00\x00" * (10 * rate))
    return path


@contextmanager
def _talking(server: str, microphone: Path, fragment: str = "") -> Iterator[Page]:
    """The page of `server` in Chromium, its microphone playing `microphone`, after *Start talking* was pressed
    (`fragment`: "#token=..." for a server with tokens)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM),
                                     args=[*FLAGS, f"--use-file-for-fake-audio-capture={microphone}"])
        page = browser.new_context(timezone_id="Europe/Berlin", locale="en-GB").new_page()
        page.goto(f"{server.replace('ws://', 'http://')}/?now=2026-12-02T10:00:00{fragment}")
        page.get_by_role("button", name="Start talking").click()
        yield page
        browser.close()


@pytest.fixture()
def microphone_wav(tmp_path: Path) -> Path:
    return _looped(DATA / "book_everest_tomorrow_9.wav", tmp_path)


def test_speaking_into_the_page_books_the_room_and_shows_every_stage(own_server: str, microphone_wav: Path
                                                                    ) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM),
                                     args=[*FLAGS, f"--use-file-for-fake-audio-capture={microphone_wav}"])
        context = browser.new_context(timezone_id="Europe/Berlin", locale="en-GB", viewport={"width": 1200,
                                                                                          "height": 1000})
        page = context.new_page()
        page.goto(f"{own_server.replace('ws://', 'http://')}/?now=2026-12-02T10:00:00")
        talk = page.get_by_role("button", name="Start talking")
        talk.focus()
        page.keyboard.press("Enter")  # keyboard operable
        expect(page.locator("#connection")).to_have_text("listening", timeout=20_000)

        card = page.locator("#card")
        expect(card.locator(".field-room")).to_have_text("Everest", timeout=60_000)
        expect(card.locator(".field-time")).to_have_text("09:00–10:00")
        expect(card.locator(".field-day")).to_contain_text("3 Dec")
        expect(card.locator(".card-title")).to_have_text("Book · done")
        expect(page.locator("#transcript mark[data-slot=room]")).to_contain_text("everest", ignore_case=True)
        expect(page.locator("#intent")).to_contain_text("book meeting")

        waterfall = page.locator("#waterfall")
        expect(waterfall).to_be_visible()
        expect(waterfall.locator(".wf-row")).to_have_count(5)  # the four stages, and the spoken reply's first audio
        expect(waterfall.locator(".wf-total")).to_contain_text("Voice-to-action")

        booking = page.locator(".day-row[data-room=everest] .day-booking")
        expect(booking).to_have_text("09:00–10:00")
        expect(page.locator("#error")).to_be_hidden()

        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "browser-demo.png"), full_page=True)
        page.set_viewport_size({"width": 390, "height": 844})  # phone width: one column, nothing cut off
        page.screenshot(path=str(ARTIFACTS / "browser-demo-phone.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
        page.get_by_role("button", name="Stop").click()
        browser.close()


def test_the_page_shows_the_turn_held_for_the_time_then_the_booking(own_server: str, tmp_path: Path) -> None:
    """"Book Everest tomorrow at" [600 ms] "ten a.m. for an hour.": while the speaker pauses after "at" the
    page says what the turn waits for; the booking comes once the request is complete."""
    from playwright.sync_api import expect

    with _talking(own_server, _looped(DATA / "pauses" / "p01.wav", tmp_path)) as page:
        turn = page.locator("#turn")
        expect(turn).to_have_attribute("data-verdict", "incomplete", timeout=30_000)
        expect(turn).to_have_text("waiting for the time...")
        expect(page.locator("#forming")).to_contain_text("needs start_time")  # the command forming, not booked
        card = page.locator("#card")
        expect(card.locator(".field-time")).to_have_text("10:00–11:00", timeout=60_000)
        expect(card.locator(".card-title")).to_have_text("Book · done")


def test_the_page_shows_a_reopened_request_as_its_booking_changing(own_server: str, tmp_path: Path) -> None:
    """"Book Denali on Friday at one for an hour," [500 ms] "um, ... with Tom.": the complete booking ends the
    turn at the first pause and is booked; the speech after it reopens the request, and the page changes that card
    in place ("changed") instead of adding a second one below it."""
    from playwright.sync_api import expect

    with _talking(own_server, _looped(DATA / "pauses" / "c08.wav", tmp_path)) as page:
        card = page.locator("#card")
        expect(card.locator(".card-title")).to_have_text("Book · done · changed", timeout=60_000)
        expect(card.locator(".field-room")).to_have_text("Denali")
        expect(card.locator(".field-time")).to_have_text("13:00–14:00")
        assert page.locator("#history li").count() == 0  # changed in place: the first card was not kept beside it
        expect(page.locator(".day-row[data-room=denali] .day-booking")).to_have_count(1)  # one booking


def test_a_page_opened_with_a_token_sends_it_in_the_handshake_and_a_wrong_one_is_told(
        tmp_path: Path, meeting_model: NLUModel) -> None:
    """On a server with tokens the page sends its /#token= as a websocket subprotocol (a page cannot set headers),
    so it is checked before the connection takes a place; the booking and the day view work with it. A wrong token
    is refused at the handshake, which a page cannot tell apart from a busy server: it says both."""
    from playwright.sync_api import expect

    tokens = tmp_path / "tokens"
    tokens.write_text("alice alice-token-0123456789\n")
    env = {k: v for k, v in os.environ.items() if k != "ASSISTANT_TOKEN"}
    proc, url = spawn_server(tmp_path / "b.sqlite", ["--set", 'nlu.languages=["en"]', "--set",
                                                     f"access.tokens_file={json.dumps(str(tokens))}"], env=env)
    try:
        microphone = _looped(DATA / "book_everest_tomorrow_9.wav", tmp_path)
        with _talking(url, microphone, "#token=alice-token-0123456789") as page:
            card = page.locator("#card")
            expect(card.locator(".field-room")).to_have_text("Everest", timeout=60_000)
            expect(card.locator(".card-title")).to_have_text("Book · done")
            expect(page.locator(".day-row[data-room=everest] .day-booking")).to_have_text("09:00–10:00")
        with _talking(url, microphone, "#token=not-alice-token-at-all") as page:
            expect(page.locator("#error")).to_contain_text("the token in /#token= is wrong", timeout=20_000)
            expect(page.locator("#card .field-room")).to_have_count(0)
    finally:
        proc.terminate()
        proc.wait(30)


@pytest.mark.parametrize("chosen", ["zh", "auto"])
def test_a_chinese_request_spoken_into_the_page_is_booked_and_shown_in_chinese(own_server: str, tmp_path: Path,
                                                                               chosen: str) -> None:
    """The founding example, "帮我订明天上午九点的会议室", spoken with Chinese chosen on the page (?lang=zh), or
    with the language left to the server (?lang=auto): the transcript is shown in Chinese characters with its
    slots marked, the booking in the card and the day view."""
    from playwright.sync_api import expect, sync_playwright

    microphone = _looped(DATA / "corpus_zh" / "z01.wav", tmp_path)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM),
                                     args=[*FLAGS, f"--use-file-for-fake-audio-capture={microphone}"])
        page = browser.new_context(timezone_id="Asia/Shanghai", locale="zh-CN").new_page()
        page.goto(f"{own_server.replace('ws://', 'http://')}/?now=2026-12-02T10:00:00&lang={chosen}")
        expect(page.locator("#language")).to_have_value(chosen)
        page.get_by_role("button", name="Start talking").click()
        card = page.locator("#card")
        expect(card.locator(".field-room")).to_have_text("Fuji", timeout=60_000)
        expect(card.locator(".field-time")).to_have_text("09:00–09:30")
        transcript = page.locator("#transcript")
        expect(transcript).to_have_attribute("lang", "zh-CN")
        expect(transcript.locator("mark[data-slot=date]")).to_contain_text("明天")  # and the slot's name
        expect(transcript.locator("mark[data-slot=start_time]")).to_contain_text("上午九点")
        expect(page.locator(".day-row[data-room=fuji] .day-booking")).to_have_text("09:00–09:30")
        spoken = page.locator("#spoken")  # and said aloud, in Chinese
        expect(spoken).to_have_text("好的，富士已订好，明天上午九点到九点半。", timeout=30_000)
        expect(spoken).to_have_attribute("lang", "zh-CN")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"browser-demo-{chosen}.png"), full_page=True)
        browser.close()


def test_the_page_says_plainly_when_the_calendar_server_is_down(tmp_path: Path, meeting_model: NLUModel) -> None:
    """[store] backend = "caldav" with the calendar server not answering: the spoken request books nothing, and the
    page says why in words, in the error box and in the day view."""
    from playwright.sync_api import expect

    from assistant.bench.radicale import RadicaleServer
    from tests.test_caldav_voice import caldav_env, write_config

    down = RadicaleServer(folder=tmp_path / "radicale")  # never started: its port refuses connections
    config = write_config(tmp_path / "config", down.home, "")
    proc, url = spawn_server(None, ["--config", str(config)], env=caldav_env(down), every_language=False)
    try:
        with _talking(url, _looped(DATA / "book_everest_tomorrow_9.wav", tmp_path)) as page:
            expect(page.locator("#error")).to_contain_text("calendar server is not answering", timeout=60_000)
            expect(page.locator("#error")).to_contain_text("nothing was booked")
            expect(page.locator("#day")).to_contain_text("not answering")
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "browser-demo-calendar-down.png"), full_page=True)
    finally:
        proc.terminate()
        proc.wait(30)


def test_the_page_speaks_the_reply_and_stops_when_the_speaker_cuts_in(own_server: str, tmp_path: Path) -> None:
    """The booking's confirmation plays through Web Audio (the page shows it speaking and what it says); a question
    said over it stops it at once, the server is told where, and the question is answered."""
    from playwright.sync_api import expect

    with wave.open(str(DATA / "book_everest_tomorrow_9.wav"), "rb") as wav:
        params, request = wav.getparams(), wav.readframes(wav.getnframes())
    rate = params.framerate
    ask = tmp_path / "ask.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "160", "-w", str(ask), "Is Denali free on Friday at ten?"],
                   check=True)
    with wave.open(str(ask), "rb") as wav:
        question = soxr.resample(np.frombuffer(wav.readframes(wav.getnframes()), np.int16), wav.getframerate(),
                                 rate).astype(np.int16).tobytes()
    microphone = tmp_path / "microphone.wav"
    with wave.open(str(microphone), "wb") as out:  # the question starts 1.6 s after the request ends
        out.setparams(params)
        out.writeframes(b"\x00\x00" * (rate // 2) + request + b"\x00\x00" * (rate * 16 // 10) + question
                        + b"\x00\x00" * (12 * rate))
    with _talking(own_server, microphone) as page:
        expect(page.locator("#spoken")).to_have_text("Booked Everest tomorrow, nine to ten a.m.", timeout=60_000)
        expect(page.locator(".wf-row[data-stage=reply_audio]")).to_have_count(1)
        page.wait_for_function("window.assistantReplies.stopped.length > 0", timeout=30_000)
        expect(page.locator("#speaking")).to_have_text("quiet")
        stopped = page.evaluate("window.assistantReplies.stopped[0]")
        assert stopped["reply"] == 1 and 0 < stopped["played_ms"] < 2500
        expect(page.locator("#card")).to_contain_text("Denali", timeout=60_000)  # the question, answered
