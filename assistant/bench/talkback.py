"""`assistant bench talkback`: spoken replies in a simulated room (assistant/bench/room.py), through a real server.

- **Echo**: each request of the corpus (one voice) is said, its reply plays out of the "loudspeaker" and comes back
  into the "microphone" (delayed, reverberant, at `--echo-gain` of its level); every turn after the request is one
  the assistant's own voice started. Run with the client's echo canceller (as `assistant mic` runs) and without
  it (the server's alone).
- **Barge-in**: a request, then words said over its reply (espeak-ng voices; the ones never used while the echo
  gate was tuned are reported apart) at several points of it: how long after the words began the reply stopped
  (the client stops on the server's `speech_start`), and whether it stopped at all.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from assistant.audio.pcm import PcmDecoder
from assistant.bench.e2e.corpus import CORPUS_NOW, CORPUS_TZ
from assistant.bench.report import LatencyStats, format_table, machine_info, write_report
from assistant.bench.room import Cue, Room, RoomRun, talk_in_room
from assistant.clients.send import read_wav
from assistant.events import ReplyAudio, SpeechStart
from assistant.server.spawn import spawn_server

__all__ = ["TalkbackOptions", "run_talkback_bench", "CUT_INS"]

# words said over a reply, and the espeak-ng voices saying them: "tuned" is the one the echo gate was tuned with
CUT_INS = ("No, Denali.", "Is Denali free on Friday at ten?", "Which rooms are free tomorrow?", "Cancel that.",
           "Actually, make it three.")
CUT_IN_VOICES = {"en-us": "tune", "en-gb-scotland": "untuned", "en-029": "untuned"}
AFTER_REPLY_MS = (300, 700, 1100)  # where in the reply the words begin (reply audio reaching the client = 0)


@dataclass(frozen=True)
class TalkbackOptions:
    corpus: Path
    echo_gain: float = 0.3
    requests: int = 30  # echo set: this many requests (and replies) of the corpus
    barge_ins: int = 30  # barge-in set: this many cases
    parallel: int = 3  # sessions at once (each real time)
    json: Path | None = None
    plot: Path | None = None


def _pcm16k(path: Path) -> np.ndarray:
    """A WAV as the server hears it: mono 16 kHz, through the server's own decoder."""
    pcm, rate, channels = read_wav(path)
    decoder = PcmDecoder(rate, channels)
    return np.frombuffer(b"".join(decoder.feed(pcm) + decoder.flush()), np.int16)


def _espeak(text: str, voice: str, folder: Path) -> np.ndarray:
    path = folder / f"{voice}-{abs(hash(text))}.wav"
    subprocess.run(["espeak-ng", "-v", voice, "-s", "160", "-w", str(path), text], check=True)
    return _pcm16k(path)


def _run(url: str, cues: list[Cue], room: Room, cancel_echo: bool) -> RoomRun:
    return asyncio.run(talk_in_room(url, cues, room, cancel_echo=cancel_echo, now=CORPUS_NOW, tz=CORPUS_TZ))


def _echo_case(url: str, request: np.ndarray, room: Room, cancel_echo: bool) -> dict[str, Any]:
    run = _run(url, [Cue(request, at_ms=0)], room, cancel_echo)
    starts = [r.event.utterance for r in run.received if isinstance(r.event, SpeechStart)]
    replies = [r.event.text for r in run.received if isinstance(r.event, ReplyAudio)]
    return {"replies": replies, "turns": len(starts), "echo_turns": max(0, len(starts) - 1),
            "stopped": len(run.stops_ms)}


def _barge_case(url: str, request: np.ndarray, words: np.ndarray, after_ms: int, room: Room) -> dict[str, Any]:
    run = _run(url, [Cue(request, at_ms=0), Cue(words, after_reply_ms=after_ms)], room, cancel_echo=True)
    began = run.cue_starts_ms[1] if len(run.cue_starts_ms) > 1 else None
    stops = [ms - began for ms in run.stops_ms if began is not None and ms >= began - 100]
    return {"words_at_ms": began, "reply_started_ms": run.reply_starts_ms[:1], "stopped_after_ms": stops[0] if stops
            else None, "transcripts": [getattr(r.event, "text", "") for r in run.received
                                       if r.event.type == "transcript"]}


def run_talkback_bench(options: TalkbackOptions) -> int:
    listing = json.loads((options.corpus / "requests.json").read_text())
    requests = [_pcm16k(options.corpus / entry["file"]) for entry in listing[: options.requests]]
    room = Room(echo_gain=options.echo_gain, noise_rms=10.0)
    scratch = Path(tempfile.mkdtemp(prefix="bench-talkback-"))
    log: list[str] = []
    server, url = spawn_server(scratch / "bookings.sqlite", log=log)
    try:
        echo: dict[str, list[dict[str, Any]]] = {}
        with ThreadPoolExecutor(options.parallel) as pool:
            for cancel in (True, False):
                name = "client canceller and server" if cancel else "server alone"
                echo[name] = list(tqdm(pool.map(lambda r, c=cancel: _echo_case(url, r, room, c), requests),
                                       total=len(requests), desc=f"echo ({name})", file=sys.stderr))
            cases = []
            voices = list(CUT_IN_VOICES)
            for i in range(options.barge_ins):  # every voice at every point of the reply, with every text
                voice = voices[i % len(voices)]
                after_ms = AFTER_REPLY_MS[(i // len(voices)) % len(AFTER_REPLY_MS)]
                cases.append((voice, CUT_INS[i % len(CUT_INS)], after_ms, requests[i % len(requests)]))
            words = {(v, t): _espeak(t, v, scratch) for v, t, _, _ in cases}
            barge = list(tqdm(pool.map(lambda c: {"voice": c[0], "split": CUT_IN_VOICES[c[0]], "words": c[1],
                                                  "after_reply_ms": c[2],
                                                  **_barge_case(url, c[3], words[(c[0], c[1])], c[2], room)},
                                       cases), total=len(cases), desc="barge-in", file=sys.stderr))
    finally:
        server.terminate()
        server.wait(30)
        failed = [line for line in log if "Traceback" in line or "Error" in line]
        if failed:  # the server's own failures are the benchmark's first finding
            print("the server logged failures:\n" + "".join(log[-80:]), file=sys.stderr)
    report = _report(options, echo, barge)
    _print(report)
    if options.json:
        write_report(options.json, report)
    if options.plot:
        _plot(options.plot, report)
    return 0


def _report(options: TalkbackOptions, echo: dict[str, list[dict[str, Any]]], barge: list[dict[str, Any]]
            ) -> dict[str, Any]:
    splits = {}
    for split in ("tune", "untuned", *(f"{ms} ms into the reply" for ms in AFTER_REPLY_MS)):
        part = [b for b in barge if b["split"] == split or f"{b['after_reply_ms']} ms into the reply" == split]
        stopped = [b["stopped_after_ms"] for b in part if b["stopped_after_ms"] is not None]
        splits[split] = {"cases": len(part), "stopped": len(stopped),
                         "within_200_ms": sum(1 for ms in stopped if ms <= 200),
                         "stop_ms": LatencyStats.from_seconds([ms / 1000 for ms in stopped]).as_dict()
                         if stopped else None}
    return {"benchmark": "spoken replies in a simulated room: the assistant's own echo, and barge-in",
            "command": "assistant bench talkback " + " ".join(sys.argv[3:]), "machine": machine_info(),
            "room": {"echo_gain": options.echo_gain, "delay_ms": Room().delay_ms, "reverb_ms": Room().reverb_ms,
                     "noise_rms": 10.0},
            "echo": {name: {"replies": len(rows), "echo_turns": sum(r["echo_turns"] for r in rows),
                            "replies_cut_by_echo": sum(1 for r in rows if r["stopped"]), "cases": rows}
                     for name, rows in echo.items()},
            "barge_in": {"splits": splits, "cases": barge}}


def _print(report: dict[str, Any]) -> None:
    print(format_table(["echo test", "replies", "turns started by echo", "replies cut by echo"],
                       [[name, e["replies"], e["echo_turns"], e["replies_cut_by_echo"]]
                        for name, e in report["echo"].items()]))
    rows = []
    for split, s in report["barge_in"]["splits"].items():
        stop = s["stop_ms"] or {}
        rows.append([split, s["cases"], s["stopped"], s["within_200_ms"], f"{stop.get('p50_ms', 0):.0f}",
                     f"{stop.get('p95_ms', 0):.0f}"])
    print(format_table(["barge-ins", "cases", "reply stopped", "within 200 ms", "p50 ms", "p95 ms"], rows))


def _plot(path: Path, report: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    names = list(report["echo"])
    left.bar(names, [report["echo"][n]["echo_turns"] for n in names], color="tab:red")
    left.set_title(f"turns started by the assistant's own echo ({report['echo'][names[0]]['replies']} replies each)")
    left.set_ylabel("turns")
    left.tick_params(axis="x", labelsize=8)
    for split, color in (("tune", "tab:blue"), ("untuned", "tab:green")):
        stops = sorted(b["stopped_after_ms"] for b in report["barge_in"]["cases"]
                       if b["split"] == split and b["stopped_after_ms"] is not None)
        if stops:
            right.step(stops, np.arange(1, len(stops) + 1) / len(stops), where="post", color=color,
                       label=f"{split} voices ({len(stops)} stopped)")
    right.axvline(200, color="black", linestyle="--", label="200 ms aim")
    right.set_xlabel("speech start -> reply stopped, ms")
    right.set_ylabel("share of barge-ins")
    right.set_title("barge-in: how soon the reply stops")
    right.legend(fontsize=8)
    room = report["room"]
    fig.suptitle(f"simulated room: echo at {room['echo_gain']} of the reply's level, {room['delay_ms']} ms device "
                 f"delay, {room['reverb_ms']} ms reverberation; {report['machine']['cpu']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
