"""A simulated room for spoken replies: a client that plays each reply out of a "loudspeaker" whose sound comes
back into its "microphone" (delayed, attenuated, with a room's reverberation and a noise floor) on top of what the
user says, streamed to the real server in real time. The echo test and the barge-in test of `assistant bench
talkback` and tests/test_talkback.py run through it.

The client stops a reply when the server says speech started while it plays (barge-in), and reports where it
stopped; with `cancel_echo` it also takes its own playback out of the microphone first, as `assistant mic` does.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import numpy as np

from assistant.clients.connection import open_websocket
from assistant.clients.playback import ReplyPlayer
from assistant.clients.send import Received, read_event
from assistant.events import ReplyAudio, ReplyFrame, SpeechStart, Start, Stop
from assistant.speech.echo import EchoCanceller

__all__ = ["Room", "Cue", "RoomRun", "talk_in_room", "speech_onset_ms"]

RATE = 16_000
FRAME = 320  # 20 ms


@dataclass(frozen=True)
class Room:
    echo_gain: float = 0.3  # the loudspeaker's sound at the microphone, against the reply's own level
    delay_ms: int = 60  # the sound device's output and input latency together
    reverb_ms: int = 200  # how long the room rings
    noise_rms: float = 10.0  # the microphone's noise floor, in 16-bit units (about -70 dBFS)
    seed: int = 0

    def impulse(self) -> np.ndarray:
        rng = np.random.default_rng(self.seed)
        length = max(1, RATE * self.reverb_ms // 1000)
        tail = rng.normal(0.0, 1.0, length) * np.exp(-np.arange(length) / (length / 5)) * 0.08
        tail[0] = 1.0
        return tail


@dataclass(frozen=True)
class Cue:
    """Something the user says: at a stream position, or this long after the first reply starts playing."""

    audio: np.ndarray  # int16 at 16 kHz
    at_ms: int | None = None
    after_reply_ms: int | None = None


@dataclass
class RoomRun:
    received: list[Received] = field(default_factory=list)
    cue_starts_ms: list[int] = field(default_factory=list)  # where each cue began in the stream
    stops_ms: list[int] = field(default_factory=list)  # where the client stopped a reply (barge-in)
    reply_starts_ms: list[int] = field(default_factory=list)  # where each reply's audio began to play


def speech_onset_ms(audio: np.ndarray) -> int:
    """Where speech begins in a recording: the first 10 ms at least 1/20 of its loudest."""
    blocks = audio[: len(audio) // 160 * 160].astype(np.float64).reshape(-1, 160)
    levels = np.sqrt((blocks ** 2).mean(axis=1))
    loud = np.nonzero(levels >= levels.max() / 20)[0]
    return int(loud[0]) * 10 if len(loud) else 0


async def talk_in_room(url: str, cues: list[Cue], room: Room, *, cancel_echo: bool, now: str, tz: str,
                       language: str | None = None, tail_ms: int = 1500, limit_ms: int = 30_000) -> RoomRun:
    """Stream the cues (and the room's echo of every reply) to the server in real time; stop `tail_ms` after the
    last cue ended and nothing plays any more."""
    run = RoomRun()
    player = ReplyPlayer(RATE)
    impulse = room.impulse()
    spoken = np.zeros(0, np.int16)  # everything the loudspeaker played, by stream position
    canceller = EchoCanceller(tail_ms=room.delay_ms + room.reverb_ms + 300) if cancel_echo else None
    noise = np.random.default_rng(room.seed + 1)
    scheduled = [(cue, cue.at_ms) for cue in cues]
    position_ms = 0
    async with await open_websocket(url, None, "room", max_size=1 << 22) as ws:
        await ws.send(Start(RATE, timezone=tz, now=now, language=language, speech=True).to_wire())

        async def listen() -> None:
            async for message in ws:
                event = read_event(message, "room")
                if isinstance(event, ReplyFrame):
                    player.add(event)
                    continue
                if event is None:
                    continue
                run.received.append(Received(event, position_ms / 1000))
                if isinstance(event, ReplyAudio):
                    player.begin(event)
                    run.reply_starts_ms.append(position_ms)
                    for i, (cue, at) in enumerate(scheduled):
                        if at is None and cue.after_reply_ms is not None:
                            scheduled[i] = (cue, position_ms + cue.after_reply_ms)
                elif isinstance(event, SpeechStart):
                    report = player.stop()
                    if report is not None:
                        run.stops_ms.append(position_ms)
                        await ws.send(report.to_wire())

        listener = asyncio.create_task(listen())
        t0 = time.monotonic()
        quiet_since = 0
        try:
            while position_ms < limit_ms:
                out, started = player.pull(FRAME, position_ms)
                if started is not None:  # where the reply's sound began, before the audio that carries its echo
                    await ws.send(started.to_wire())
                spoken = np.concatenate([spoken, out])
                mic = noise.normal(0.0, room.noise_rms, FRAME)
                mic += _echo(spoken, impulse, len(spoken) - FRAME - room.delay_ms * RATE // 1000) * room.echo_gain
                busy = False
                for cue, at in scheduled:
                    if at is None:
                        busy = True  # waits for a reply to start
                        continue
                    offset = (position_ms - at) * RATE // 1000
                    if offset == 0:
                        run.cue_starts_ms.append(at + speech_onset_ms(cue.audio))
                    if 0 <= offset < len(cue.audio):
                        piece = cue.audio[offset:offset + FRAME].astype(np.float64)
                        mic[: len(piece)] += piece
                        busy = True
                    elif offset < 0:
                        busy = True
                pcm = np.clip(mic, -32768, 32767).astype(np.int16).tobytes()
                if canceller is not None:
                    canceller.play(out, position_ms)
                    pcm = canceller.clean([pcm], position_ms, 20)[0][1]  # what it keeps of the microphone
                await ws.send(pcm)
                position_ms += 20
                quiet_since = position_ms if busy or player.playing else quiet_since
                if position_ms - quiet_since >= tail_ms:
                    break
                await asyncio.sleep(max(0.0, t0 + position_ms / 1000 - time.monotonic()))
            await ws.send(Stop().to_wire())
            await asyncio.wait_for(listener, 60)
        finally:
            listener.cancel()
    return run


def _echo(spoken: np.ndarray, impulse: np.ndarray, start: int) -> np.ndarray:
    """The room's sound of the loudspeaker for the 20 ms frame whose direct path starts at `start`."""
    lo = start - len(impulse) + 1
    window = np.zeros(FRAME + len(impulse) - 1)
    have_lo, have_hi = max(lo, 0), max(min(start + FRAME, len(spoken)), 0)
    if have_hi > have_lo:
        window[have_lo - lo:have_hi - lo] = spoken[have_lo:have_hi]
    return np.convolve(window, impulse, mode="valid")[:FRAME]
