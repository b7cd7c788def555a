"""`assistant mic`: speak into a local microphone (sounddevice / PortAudio), see partials live, get each result
with its voice-to-action latency: from the end of speech in the captured audio to the result's arrival.

Replies are spoken (unless --no-speech): the sound device runs both ways in one stream, so each 20 ms block
played and the block captured at the same moment meet in the callback. There the played block feeds the echo
canceller (WebRTC AEC3, assistant/speech/echo.py) and the captured one is cleaned of it before it is sent; the
server takes out what is left. A reply stops the moment the server says speech started (barge-in), and the server
is told how much of it was played."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import deque
from typing import Any

from assistant.clients.connection import open_websocket
from assistant.clients.playback import ReplyPlayer
from assistant.clients.send import Received, read_event
from assistant.events import (
    ErrorEvent,
    Partial,
    Playback,
    ReplyAudio,
    ReplyAudioEnd,
    ReplyFrame,
    ResultEvent,
    ServerEvent,
    SpeechEnd,
    SpeechStart,
    Start,
    Stop,
    Transcript,
)
from assistant.speech.echo import EchoCanceller

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


class _Duplex:
    """What the sound device's callback does with each block: play the reply's next block, and clean the
    captured block of it (PortAudio's thread)."""

    def __init__(self, player: ReplyPlayer | None, echo_cancel: bool) -> None:
        self.player = player
        self.echo = EchoCanceller() if player is not None and echo_cancel else None
        self.position_ms = 0
        self.reports: deque[Playback] = deque()  # "started" reports for the server, from PortAudio's thread

    def block(self, captured: bytes, out: Any | None) -> bytes:
        if self.player is not None and out is not None:
            played, started = self.player.pull(len(captured) // 2, self.position_ms)
            if started is not None:
                self.reports.append(started)
            out[:] = played.tobytes()
            if self.echo is not None:
                self.echo.play(played, self.position_ms)
                captured = b"".join(kept for _, kept in self.echo.clean([captured], self.position_ms, 20))
        self.position_ms += len(captured) * 1000 // (2 * RATE)
        return captured


async def _run(url: str, device: str | int | None, tz: str, now: str | None, seconds: float | None,
               as_json: bool, token: str | None, language: str | None, speech: bool = True,
               echo_cancel: bool = True) -> int:
    import sounddevice as sd

    loop = asyncio.get_running_loop()
    frames: asyncio.Queue[bytes] = asyncio.Queue(maxsize=500)  # 10 s; a stalled network drops audio, says so
    dropped = 0
    player = ReplyPlayer(RATE) if speech else None
    duplex = _Duplex(player, echo_cancel)

    def callback(indata: Any, *args: Any) -> None:  # PortAudio's thread: (indata[, outdata], count, time, status)
        out = args[0] if len(args) == 4 else None
        block = duplex.block(bytes(indata), out)  # a copy: PortAudio reuses its buffer once the callback returns

        def put() -> None:
            nonlocal dropped
            try:
                frames.put_nowait(block)
            except asyncio.QueueFull:
                dropped += 1

        loop.call_soon_threadsafe(put)

    start = Start(RATE, "pcm_s16le", 1, tz, now or None, language=language, speech=speech or None)
    speech_end_at: dict[int, float] = {}  # utterance -> client time its speech ended in the captured audio
    async with await open_websocket(url, token, "mic", max_size=1 << 22) as ws:
        await ws.send(start.to_wire())
        with _open_stream(sd, device, callback, duplex):
            t0 = time.monotonic()

            async def produce() -> None:
                sent_s = 0.0
                while seconds is None or time.monotonic() - t0 < seconds:
                    try:
                        block = await asyncio.wait_for(frames.get(), 1.0)
                    except TimeoutError:
                        continue
                    while duplex.reports:  # before the audio that carries the reply's echo
                        await ws.send(duplex.reports.popleft().to_wire())
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
                    if isinstance(event, ReplyFrame):
                        if player is not None:
                            player.add(event)
                        continue
                    if event is None:
                        continue
                    if player is not None:
                        await _reply_event(event, player, ws)
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


async def _reply_event(event: ServerEvent, player: ReplyPlayer, ws: Any) -> None:
    if isinstance(event, ReplyAudio):
        player.begin(event)
    elif isinstance(event, ReplyAudioEnd):
        pass  # what was sent plays out
    elif isinstance(event, SpeechStart):  # barge-in: silence now, and say how much was played
        report = player.stop()
        if report is not None:
            await ws.send(report.to_wire())


def _open_stream(sd: Any, device: str | int | None, callback: Any, duplex: _Duplex) -> Any:
    """Both ways where replies are spoken (the played and the captured block meet in one callback), else
    capture only; a device that cannot play gets replies shown, not spoken, and says so."""
    if duplex.player is not None:
        try:
            return sd.RawStream(samplerate=RATE, channels=1, dtype="int16", blocksize=FRAME_SAMPLES,
                                device=device, callback=callback)
        except Exception as exc:  # noqa: BLE001 - PortAudio says "invalid device" in many ways
            print(f"assistant mic: replies will not be spoken: this device cannot play ({exc})", file=sys.stderr,
                  flush=True)
            duplex.player = None
    return sd.RawInputStream(samplerate=RATE, channels=1, dtype="int16", blocksize=FRAME_SAMPLES,
                             device=device, callback=callback)


def run_mic(url: str, device: str | int | None, tz: str, now: str | None, seconds: float | None,
            as_json: bool, token: str | None = None, language: str | None = None, speech: bool = True,
            echo_cancel: bool = True) -> int:
    try:
        return asyncio.run(_run(url, device, tz, now, seconds, as_json, token, language, speech, echo_cancel))
    except KeyboardInterrupt:
        return 0
