"""Long silences inside a request, shortened before it is decoded.

Whisper ends its text at a long silence: "book Matterhorn next Monday [800 ms] at half past two [600 ms] for
forty five minutes" came back from tiny.en as "Book Matterhorn next Monday." and nothing more. The turn keeps its
pauses for timing (the endpointer's decisions are taken on the audio as spoken), but what the recognizer hears is
the same speech with every inner silence longer than `keep_ms` cut down to `keep_ms`: a pause a person makes
between phrases, which whisper reads through. The edges (the pre-roll before the first word, the hangover after
the last) are left as they are.
"""

from __future__ import annotations

from assistant.audio.pcm import TARGET_RATE
from assistant.audio.vad import WebRtcVad

__all__ = ["shorten_silences", "KEEP_MS"]

KEEP_MS = 300  # a silence inside the speech is kept at most this long
_FRAME_MS = 20


def shorten_silences(pcm: bytes, keep_ms: int = KEEP_MS, aggressiveness: int = 2,
                     quiet_below_peak_db: float = 40.0) -> bytes:
    """16 kHz mono PCM with each unvoiced run between voiced frames longer than `keep_ms` cut to `keep_ms`
    (half of it from each side of the run, so the sounds on both sides keep their fade). A trailing part frame
    stays as it is."""
    frame_bytes = 2 * TARGET_RATE * _FRAME_MS // 1000
    whole = len(pcm) - len(pcm) % frame_bytes
    frames = [pcm[i : i + frame_bytes] for i in range(0, whole, frame_bytes)]
    vad = WebRtcVad(aggressiveness, TARGET_RATE, _FRAME_MS, quiet_below_peak_db)
    voiced = [vad.is_voiced(frame) for frame in frames]
    keep = max(2, keep_ms // _FRAME_MS)
    out: list[bytes] = []
    i = 0
    while i < len(frames):
        if voiced[i]:
            out.append(frames[i])
            i += 1
            continue
        j = i
        while j < len(frames) and not voiced[j]:
            j += 1
        inner = i > 0 and j < len(frames)  # between voiced frames: the edges stay whole
        if inner and j - i > keep:
            out += frames[i : i + keep // 2] + frames[j - (keep - keep // 2) : j]
        else:
            out += frames[i:j]
        i = j
    return b"".join(out) + pcm[whole:]
