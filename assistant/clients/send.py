"""`assistant send FILE.wav`: stream a WAV to the server in 20 ms frames (real time, or --fast), print every
server event as one JSON line with "t": seconds on the client clock since the first audio frame was sent."""

from __future__ import annotations

import asyncio
import json
import sys
import time
import wave
from pathlib import Path

from websockets.asyncio.client import connect

from assistant.errors import InputError

__all__ = ["send_wav"]


def _read_wav(path: Path) -> tuple[bytes, int, int]:
    try:
        with wave.open(str(path), "rb") as wav:
            if wav.getsampwidth() != 2:
                raise InputError("unsupported_audio", f"{path}: only 16-bit PCM WAV files are supported")
            return wav.readframes(wav.getnframes()), wav.getframerate(), wav.getnchannels()
    except (wave.Error, EOFError, OSError) as exc:
        raise InputError("unsupported_audio", f"{path}: not a readable WAV file ({exc})") from exc


async def _send(path: Path, url: str, now: str | None, tz: str, fast: bool, tail_ms: int) -> int:
    pcm, rate, channels = _read_wav(path)
    frame = 2 * channels * rate // 50  # 20 ms
    pcm += b"\x00" * (2 * channels * rate * tail_ms // 1000)  # trailing silence lets the endpointer decide
    start = {"type": "start", "sample_rate": rate, "format": "pcm_s16le", "channels": channels, "timezone": tz}
    if now:
        start["now"] = now
    async with connect(url, max_size=1 << 22) as ws:
        await ws.send(json.dumps(start))
        t0: float | None = None

        async def produce() -> None:
            nonlocal t0
            t0 = time.monotonic()
            for i, offset in enumerate(range(0, len(pcm), frame)):
                await ws.send(pcm[offset : offset + frame])
                if not fast:
                    await asyncio.sleep(max(0.0, t0 + (i + 1) * 0.02 - time.monotonic()))
            await ws.send(json.dumps({"type": "stop"}))

        producer = asyncio.create_task(produce())
        try:
            async for message in ws:
                event = json.loads(message)
                event["t"] = round(time.monotonic() - t0, 4) if t0 is not None else 0.0
                print(json.dumps(event, ensure_ascii=False), flush=True)
                if event["type"] == "error" and event["code"] in ("bad_start", "unsupported_audio"):
                    return 1
        finally:  # the server closes the connection once every result after our stop is sent
            producer.cancel()
    return 0


def send_wav(path: Path, url: str, now: str | None, tz: str, fast: bool, tail_ms: int = 800,
             timeout_s: float = 120.0) -> int:
    try:
        return asyncio.run(asyncio.wait_for(_send(path, url, now, tz, fast, tail_ms), timeout_s))
    except TimeoutError:
        print(json.dumps({"type": "client_timeout", "seconds": timeout_s}), file=sys.stderr)
        return 1
