"""`assistant bench voice`: voice-to-action latency of the spoken corpus, one client in real time.

For each utterance: end of speech in the audio (the server's `speech_end.audio_ms`, on the client clock the
moment that audio was sent, since frames go out at real-time pace from t=0) -> `result` received. The hangover
the endpointer waits before deciding is included, as a person experiences it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tqdm import tqdm

from assistant.bench.report import LatencyStats, machine_info, write_report
from assistant.server.spawn import spawn_server

__all__ = ["run_voice_bench"]


def _send(url: str, wav: Path) -> list[dict[str, Any]]:
    out = subprocess.run([sys.executable, "-m", "assistant", "send", str(wav), "--url", url, "--now",
                          "2026-12-02T10:00:00", "--tz", "Europe/Berlin"], capture_output=True, text=True,
                         timeout=120, check=False)
    return [json.loads(line) for line in out.stdout.splitlines()]


def run_voice_bench(args: argparse.Namespace) -> int:
    corpus = args.corpus
    items = json.loads((corpus / "requests.json").read_text())
    scratch = Path(tempfile.mkdtemp(prefix="bench-voice-"))  # a throwaway store, outside the corpus
    store = Path(args.store) if args.store else scratch / "bookings.sqlite"
    server, url = (None, args.url) if args.url else spawn_server(store)
    latencies: list[float] = []
    rows = []
    try:
        for item in tqdm(items, desc="bench voice", unit="utterance", file=sys.stderr):
            events = _send(url, corpus / item["file"])
            ends = {e["utterance"]: e["audio_ms"] / 1000 for e in events if e["type"] == "speech_end"}
            for event in (e for e in events if e["type"] == "result" and e["utterance"] in ends):
                latency = event["t"] - ends[event["utterance"]]
                latencies.append(latency)
                intent = next((e["intent"] for e in events if e["type"] == "intent"), None)
                rows.append({"file": item["file"], "voice_to_action_s": round(latency, 3),
                             "intent_right": intent == item["intent"]})
    finally:
        if server is not None:
            server.terminate()
            server.wait(30)
        shutil.rmtree(scratch, ignore_errors=True)
    stats = LatencyStats.from_seconds(latencies)
    right = sum(r["intent_right"] for r in rows)
    print(f"voice-to-action over {stats.n} utterances (real time, hangover included): "
          f"p50 {stats.p50_ms:.0f} ms, p95 {stats.p95_ms:.0f} ms, p99 {stats.p99_ms:.0f} ms; "
          f"intents right {right}/{len(rows)}")
    if args.json:
        write_report(args.json, {"benchmark": "voice-to-action, spoken corpus, one real-time client",
                                 "command": "assistant bench voice " + " ".join(sys.argv[3:]),
                                 "machine": machine_info(), "asr": "faster-whisper tiny.en, cpu int8",
                                 "latency": stats.as_dict(), "intents_right": right, "utterances": rows})
    return 0
