"""One session's spoken replies: a result's reply, written for the ear, synthesized a sentence at a time by the
speech worker and streamed as it is made (`reply_audio`, binary ReplyFrames, `reply_audio_end`).

What is sent is also scheduled in the session's echo canceller, at the microphone stream position where the
client says its sound began (`playback` `started`), so the reply coming back through the microphone is taken out
before voice detection. Speech while a reply plays (barge-in) is a turn of its own: the client stops playing on
its `speech_start`, the server stops sending (`cut`), and the client's `stopped` report ends the echo there. A
newer reply replaces one still being sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import soxr

from assistant.events import Playback, ReplyAudio, ReplyAudioEnd, ReplyFrame, ServerEvent, Start
from assistant.language.profile import Language
from assistant.server.metrics import ServerMetrics
from assistant.server.speech import SpeechWorker
from assistant.server.workers import Workers
from assistant.speech.echo import EchoCanceller
from assistant.turn.taker import TurnTaker

__all__ = ["ReplySpeaker", "FRAME_MS", "spoken_replies"]

FRAME_MS = 200  # audio per binary message: small enough to start playing at once, few enough messages


@dataclass
class _Reply:
    number: int
    utterance: int
    start_ms: int | None = None  # stream position where the client starts playing it
    sent_ms: int = 0
    task: asyncio.Task[None] | None = None


class ReplySpeaker:
    def __init__(self, speech: SpeechWorker, send: Callable[[ServerEvent], Awaitable[None]],
                 send_bytes: Callable[[bytes], Awaitable[None]], position_ms: Callable[[], int],
                 echo: EchoCanceller | None, metrics: ServerMetrics) -> None:
        self._speech, self._send, self._send_bytes = speech, send, send_bytes
        self._position_ms, self._echo, self._metrics = position_ms, echo, metrics
        self._count = 0
        self._current: _Reply | None = None
        self._plays_until_ms = 0  # where the audio sent so far ends playing, in stream time
        self._starts: dict[int, int] = {}  # reply number -> where it started playing (the latest few)
        self._playing: set[int] = set()  # replies the client said it plays: only their echo is looked for

    def speaks(self, language: Language) -> bool:
        return self._speech.speaks(language)

    async def say(self, utterance: int, text: str, language: Language,
                  first_audio: Callable[[ReplyAudio], Awaitable[None]]) -> bool:
        """Speak `text`; `first_audio` is handed the `reply_audio` event as the first audio goes out. Returns False
        when nothing was said (cut before its first sentence)."""
        await self.cut()  # a newer reply: the older one stops where it is
        self._count += 1
        reply = self._current = _Reply(self._count, utterance, task=asyncio.current_task())
        resampler: soxr.ResampleStream | None = None
        try:
            async for audio, rate in self._speech.sentences(language, text):
                if reply.start_ms is None:
                    reply.start_ms = max(self._position_ms(), self._plays_until_ms)
                    self._plays_until_ms = reply.start_ms
                    self._starts = {n: ms for n, ms in self._starts.items() if n > reply.number - 8}
                    self._starts[reply.number] = reply.start_ms
                    event = ReplyAudio(utterance, reply.number, text, rate, language.code)
                    await first_audio(event)
                    resampler = soxr.ResampleStream(rate, 16_000, 1, dtype="int16")
                # the client plays sentences back to back, or as soon as one comes when it had run out
                at_ms = max(self._plays_until_ms, self._position_ms())
                self._plays_until_ms = at_ms + len(audio) * 1000 // rate
                if self._echo is not None and resampler is not None:
                    self._echo.play(resampler.resample_chunk(audio), at_ms, reply.number,
                                    playing=reply.number in self._playing)
                step = rate * FRAME_MS // 1000
                for offset in range(0, len(audio), step):
                    piece = audio[offset:offset + step]
                    await self._send_bytes(ReplyFrame(reply.number, piece.astype("<i2").tobytes()).to_wire())
                    reply.sent_ms += len(piece) * 1000 // rate
        except asyncio.CancelledError:
            if self._current is reply:  # the session closed: nothing more to tell
                self._current = None
            raise
        if self._current is reply:
            self._current = None
        if reply.start_ms is None:
            return False
        self._metrics.replies.labels("played").inc()
        await self._send(ReplyAudioEnd(utterance, reply.number, reply.sent_ms))
        return True

    def playing(self) -> bool:
        """A reply is being sent or may still be playing at the client (its sound goes on to here)."""
        return self._current is not None or self._position_ms() < self._plays_until_ms

    async def cut(self) -> None:
        """Stop sending the reply in progress (the speaker cut in, or a newer reply takes its place)."""
        reply, self._current = self._current, None
        if reply is None or reply.task is None or reply.task is asyncio.current_task():
            return
        reply.task.cancel()
        self._metrics.replies.labels("cut").inc()
        if reply.start_ms is not None:
            await self._send(ReplyAudioEnd(reply.utterance, reply.number, reply.sent_ms, cut=True))

    def played(self, report: Playback) -> None:
        """The client's report: where it began playing a reply, where it stopped one (barge-in), or that it
        finished one."""
        began = self._starts.get(report.reply)
        if began is None:
            return
        if report.state == "started" and report.at_ms is not None:
            # where the client's sound really began (network, buffers): the echo is looked for there; a report
            # of a time before the reply was sent, or far after, is no timing and is ignored
            moved = report.at_ms - began
            if 0 <= moved <= 2000:
                self._starts[report.reply] = report.at_ms
                self._playing = {n for n in self._playing if n > report.reply - 8} | {report.reply}
                if self._echo is not None:
                    self._echo.started(report.reply, moved)
                if self._current is not None and self._current.number == report.reply:
                    self._plays_until_ms += moved
            return
        if report.state != "stopped":
            return
        stopped_ms = began + report.played_ms
        self._plays_until_ms = min(self._plays_until_ms, stopped_ms)
        if self._echo is not None:
            self._echo.cut(stopped_ms)


def spoken_replies(start: Start, workers: Workers, turns: TurnTaker, send: Callable[[ServerEvent], Awaitable[None]],
                   send_bytes: Callable[[bytes], Awaitable[None]] | None, position_ms: Callable[[], int]
                   ) -> ReplySpeaker | None:
    """The session's speaker where it asked for speech (start's "speech") and the server has voices; its stream
    then also takes the replies' echo out (`[speech] echo_cancel`)."""
    if not start.speech or workers.speech is None or send_bytes is None:
        return None
    echo = None
    if workers.speech_settings.echo_cancel:
        echo = EchoCanceller(workers.speech_settings.echo_tail_ms)
        turns.stream.echo = echo
    return ReplySpeaker(workers.speech, send, send_bytes, position_ms, echo, workers.metrics)
