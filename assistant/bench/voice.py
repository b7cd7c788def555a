"""`assistant bench voice`: voice-to-action latency of the spoken corpus, one client in real time.

For each utterance: end of speech in the audio (the server's `speech_end.audio_ms`, on the client clock the
moment that audio was sent, since frames go out at real-time pace from t=0) -> `result` received. The hangover
the endpointer waits before deciding is included, as a person experiences it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from assistant.bench.e2e import CORPUS_NOW, CORPUS_TZ, load_corpus
from assistant.bench.report import LatencyStats, machine_info, write_report
from assistant.clients.send import Received
from assistant.events import IntentEvent, ResultEvent, SpeechEnd
from assistant.server.spawn import spawn_server

__all__ = ["run_voice_bench", "VoiceBenchOptions"]


@dataclass(frozen=True)
class VoiceBenchOptions:
    corpus: Path  # requests.json + WAVs
    url: str | None = None  # an already running server (default: start one with a throwaway store)
    store: Path | None = None  # booking file for the spawned server (default: a throwaway one)
    json: Path | None = None
    language: str = "en"  # the sessions' "language": en, zh or auto


def _send(url: str, wav: Path, language: str) -> list[Received]:
    out = subprocess.run([sys.executable, "-m", "assistant", "send", str(wav), "--url", url, "--now", CORPUS_NOW,
                          "--tz", CORPUS_TZ, "--language", language],
                         capture_output=True, text=True, timeout=120, check=False)
    return [Received.from_line(line) for line in out.stdout.splitlines()]


def run_voice_bench(options: VoiceBenchOptions) -> int:
    items = load_corpus(options.corpus)
    scratch = Path(tempfile.mkdtemp(prefix="bench-voice-"))  # a throwaway store, outside the corpus
    store = options.store or scratch / "bookings.sqlite"
    server, url = (None, options.url) if options.url else spawn_server(store)
    latencies: list[float] = []
    rows = []
    try:
        for item in tqdm(items, desc="bench voice", unit="utterance", file=sys.stderr):
            received = _send(url, options.corpus / item.file, options.language)
            ends = {r.event.utterance: r.event.audio_ms / 1000 for r in received if isinstance(r.event, SpeechEnd)}
            intent = next((r.event.intent for r in received if isinstance(r.event, IntentEvent)), None)
            for r in received:
                if isinstance(r.event, ResultEvent) and r.event.utterance in ends:
                    latency = r.t - ends[r.event.utterance]
                    latencies.append(latency)
                    rows.append({"file": item.file, "voice_to_action_s": round(latency, 3),
                                 "intent_right": intent == item.intent})
    finally:
        if server is not None:
            server.terminate()
            server.wait(30)
        shutil.rmtree(scratch, ignore_errors=True)
    stats = LatencyStats.from_seconds(latencies)
    right = sum(r["intent_right"] for r in rows)
    print(f"voice-to-action over {stats.n} utterances in {options.language!r} sessions (real time, hangover "
          f"included): "
          f"p50 {stats.p50_ms:.0f} ms, p95 {stats.p95_ms:.0f} ms, p99 {stats.p99_ms:.0f} ms; "
          f"intents right {right}/{len(rows)}")
    if options.json:
        write_report(options.json, {"benchmark": "voice-to-action, spoken corpus, one real-time client",
                                    "command": "assistant bench voice " + " ".join(sys.argv[3:]),
                                    "machine": machine_info(), "language": options.language,
                                    "asr": "faster-whisper: tiny.en (English), base (Chinese; telling them apart "
                                           "in auto sessions), cpu int8",
                                    "latency": stats.as_dict(), "intents_right": right, "utterances": rows})
    return 0
