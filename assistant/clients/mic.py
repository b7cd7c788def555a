"""`assistant mic`: speak into a local microphone (sounddevice / PortAudio), see partials live, get each result
with its voice-to-action latency: from the end of speech in the captured audio to the result's arrival."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

from assistant.clients.connection import open_websocket
from assistant.clients.send import Received, read_event
from assistant.events import (
    ErrorEvent,
    Partial,
    ReplyFrame,
    ResultEvent,
    ServerEvent,
    SpeechEnd,
    Start,
    Stop,
    Transcript,
)

__all__ = ["run_mic"]

RATE = 16_000
FRAME_SAMPLES = 320  # 20 ms


def _show(event: ServerEvent, t0: float, as_json: bool) -> None:
    if as_json:
        print(Received(event, round(time.monotonic() - t0, 4)).to_line(), flush=True)
    elif isinstance(event, Partial):
        print(f"\r… {event.text}", end="", file=sys.stderr, flush=True)
    elif isinstance(event, Transcript):
        print(f"\r» {event.text}", file=sys.stderr, flush=True)
    elif isinstance(event, ResultEvent):
        print(json.dumps(event.result, ensure_ascii=False), flush=True)
    elif isinstance(event, ErrorEvent):
        print(f"error {event.code}: {event.message}", file=sys.stderr, flush=True)


async def _run(url: str, device: str | int | None, tz: str, now: str | None, seconds: float | None,
               as_json: bool, token: str | None, language: str | None) -> int:
    import sounddevice as sd

    loop = asyncio.get_running_loop()
    frames: asyncio.Queue[bytes] = asyncio.Queue(maxsize=500)  # 10 s; a stalled network drops audio, says so
    dropped = 0

    def callback(indata: Any, count: int, time_info: Any, status: Any) -> None:  # PortAudio's thread
        block = bytes(indata)  # copy now: PortAudio reuses its buffer as soon as the callback returns

        def put() -> None:
            nonlocal dropped
            try:
                frames.put_nowait(block)
            except asyncio.QueueFull:
                dropped += 1

        loop.call_soon_threadsafe(put)

    start = Start(RATE, "pcm_s16le", 1, tz, now or None, language=language)
    speech_end_at: dict[int, float] = {}  # utterance -> client time its speech ended in the captured audio
    async with await open_websocket(url, token, "mic") as ws:
        await ws.send(start.to_wire())
        with sd.RawInputStream(samplerate=RATE, channels=1, dtype="int16", blocksize=FRAME_SAMPLES,
                               device=device, callback=callback):
            t0 = time.monotonic()

            async def produce() -> None:
                sent_s = 0.0
                while seconds is None or time.monotonic() - t0 < seconds:
                    try:
                        block = await asyncio.wait_for(frames.get(), 1.0)
                    except TimeoutError:
                        continue
                    await ws.send(block)
                    # A live microphone never runs ahead of the clock; a device that does (a file played as a
                    # microphone) is held to real time, which is what the server admits ([limits] audio_speed).
                    sent_s += len(block) / (2 * RATE)
                    ahead = t0 + sent_s - time.monotonic()
                    if ahead > 0.1:
                        await asyncio.sleep(ahead)
                await ws.send(Stop().to_wire())

            producer = asyncio.create_task(produce())
            try:
                async for message in ws:
                    event = read_event(message, "mic")
                    if event is None or isinstance(event, ReplyFrame):  # replies are not asked for here yet
                        continue
                    if isinstance(event, SpeechEnd):
                        speech_end_at[event.utterance] = t0 + event.audio_ms / 1000
                    _show(event, t0, as_json)
                    if isinstance(event, ResultEvent) and event.utterance in speech_end_at:
                        latency = (time.monotonic() - speech_end_at[event.utterance]) * 1000
                        print(f"voice-to-action: {latency:.0f} ms", file=sys.stderr, flush=True)
            finally:
                producer.cancel()
    if dropped:
        print(f"warning: {dropped} audio blocks dropped (the connection could not keep up)", file=sys.stderr)
    return 0


def run_mic(url: str, device: str | int | None, tz: str, now: str | None, seconds: float | None,
            as_json: bool, token: str | None = None, language: str | None = None) -> int:
    try:
        return asyncio.run(_run(url, device, tz, now, seconds, as_json, token, language))
    except KeyboardInterrupt:
        return 0
