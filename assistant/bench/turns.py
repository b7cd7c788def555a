"""`assistant bench turns`: end-of-turn policies side by side on spoken turns with pauses inside, scored the way
eot-bench scores (../docs/turn-taking.md).

Every policy hears the same audio through the product's own stream (webrtcvad, the endpointer), recognizer and
text pipeline, in-process and in audio time, one turn at a time:
- fixed hangovers (300, 500, 800 ms of silence end every turn);
- Smart Turn v3.2 (acoustic: asked at each pause whether the turn sounds finished);
- reading (ours: the words so far read at each pause; complete ends soon, incomplete holds).

Per pause inside a turn: was the turn ended there (a false cutoff)? Per turn: the wait from the true end of
speech to the result, and whether the store ends up holding exactly the booking meant. Waits are audio-time
decisions plus the compute each decision waited for, measured here (decodes are cached per audio, so every
policy pays the same measured cost for the same audio): what one real-time client would see.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
import wave
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
from tqdm import tqdm

from assistant.audio.stream import PauseDue, UtteranceEnded, UtteranceStarted, VoiceStream
from assistant.bench.report import LatencyStats, format_table, machine_info, write_report
from assistant.config import Settings
from assistant.text_pipeline import TextPipeline, Turn
from assistant.turn.policy import COMPLETE, TurnSettings, TurnVerdict, acoustic_verdict, read_verdict

__all__ = ["TurnsBenchOptions", "TurnItem", "load_turn_items", "run_turns_bench", "POLICIES"]

POLICIES = ("hangover-300", "hangover-500", "hangover-800", "smart-turn", "reading")
_ZONE, _NOW = "Europe/Berlin", "2026-12-02T10:00:00"  # the corpora's reference time


@dataclass(frozen=True)
class TurnItem:
    file: Path
    segments_ms: tuple[tuple[int, int], ...]  # true speech pieces; the pauses lie between them ((): not known)
    room: str
    start: str
    end: str | None

    @property
    def pauses(self) -> list[tuple[int, int]]:
        return [(a[1], b[0]) for a, b in zip(self.segments_ms, self.segments_ms[1:], strict=False)]


def load_turn_items(pauses: Path, plain: Path | None, limit: int = 0) -> list[TurnItem]:
    """The pause corpus, and the pause-free corpus's bookings (each names its room, start and end)."""
    items = [TurnItem(pauses / i["file"], tuple(tuple(s) for s in i["segments_ms"]), i["room"], i["start"], i["end"])
             for i in json.loads((pauses / "pauses.json").read_text())]
    if plain is not None:
        items += [TurnItem(plain / i["file"], (), i["room"], i["start"], i["end"])
                  for i in json.loads((plain / "requests.json").read_text())
                  if i["intent"] == "book_meeting" and "room" in i and "end" in i]
    return items[:limit] if limit else items


@dataclass(frozen=True)
class TurnsBenchOptions:
    pauses: Path
    plain: Path | None
    policies: tuple[str, ...] = POLICIES
    limit: int = 0  # the first N turns only (a quick look; the tests)
    json: Path | None = None
    plot: Path | None = None
    config: Path | None = None  # for the report's command line


class _Timed:
    """A model call cached per input, with the time it took the first time (every policy pays that cost)."""

    def __init__(self, call: Callable[[bytes], Any]) -> None:
        self._call, self._seen = call, dict[str, tuple[Any, float]]()

    def __call__(self, audio: bytes) -> tuple[Any, float]:
        key = hashlib.sha1(audio).hexdigest()
        if key not in self._seen:
            started = time.perf_counter()
            out = self._call(audio)
            self._seen[key] = (out, (time.perf_counter() - started) * 1e3)
        return self._seen[key]


@dataclass
class _TurnRun:
    file: str
    cutoffs: list[bool] = field(default_factory=list)  # per true pause
    wait_ms: float | None = None
    decided_ms: int | None = None  # audio time from the true end of speech to the end of the turn
    right: bool = False
    utterances: int = 0
    reads: int = 0
    heard: list[str] = field(default_factory=list)  # what each utterance was acted on as

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "cutoffs": sum(self.cutoffs), "pauses": len(self.cutoffs), "right": self.right,
                "wait_ms": None if self.wait_ms is None else round(self.wait_ms, 1),
                "decided_ms": self.decided_ms, "heard": self.heard}


class _Runner:
    def __init__(self, settings: Settings, pipeline_for: Callable[[Path], TextPipeline], recognize: _Timed,
                 smart_turn: _Timed | None) -> None:
        self.settings, self.pipeline_for, self.recognize, self.smart_turn = settings, pipeline_for, recognize, \
            smart_turn
        self.turn = settings.turn

    def stream(self, policy: str) -> VoiceStream:
        """The server's stream ([audio], [turn]) without partials; a fixed-hangover policy has no pauses read."""
        from assistant.wiring import stream_config

        config = stream_config(self.settings)
        endpointer = replace(config.endpointer, pause_ms=self.turn.read_after_ms)
        if policy.startswith("hangover-"):
            endpointer = replace(endpointer, hangover_ms=int(policy.split("-")[1]), pause_ms=0)
        return VoiceStream(16_000, config=replace(config, endpointer=endpointer, partial_interval_ms=0))

    def run(self, policy: str, item: TurnItem, store: Path) -> _TurnRun:
        pipeline = self.pipeline_for(store)
        now = datetime.fromisoformat(_NOW).replace(tzinfo=ZoneInfo(_ZONE))
        with wave.open(str(item.file), "rb") as wav:
            pcm = wav.readframes(wav.getnframes())
        stream, out = self.stream(policy), _TurnRun(item.file.name)
        out.cutoffs = [False] * len(item.pauses)
        read: tuple[PauseDue, str | None, TurnVerdict, float] | None = None  # the pause, its text, verdict, ready
        early_end: int | None = None
        amend: set[int] = set()
        heard: dict[int, str] = {}  # utterance -> the text of its last read (the policy's agreement check)
        pending = list(stream.feed(pcm)) + ([] if stream.awaiting_decision else stream.finish())
        finished = not stream.awaiting_decision
        while pending:
            event = pending.pop(0)
            if isinstance(event, UtteranceStarted):
                detected = event.start_ms + self.settings.audio.pre_roll_ms  # start_ms includes the pre-roll
                if early_end is not None and detected - early_end <= self.turn.amend_ms:
                    amend.add(event.utterance)
                early_end = None
            elif isinstance(event, PauseDue):
                read = self._read(policy, event, pipeline, now, heard.get(event.utterance))
                if read[1] is not None:
                    heard[event.utterance] = read[1]
                out.reads += 1
                pending += stream.decide(read[2].hangover_ms)
            elif isinstance(event, UtteranceEnded):
                out.utterances += 1
                for i, (gap_start, gap_end) in enumerate(item.pauses):
                    out.cutoffs[i] |= gap_start <= event.decided_ms <= gap_end + 100
                reuse = read is not None and read[0].utterance == event.utterance and \
                    read[0].speech_end_ms == event.end_ms and read[1] is not None
                ready = float(event.decided_ms)
                if read is not None and read[0].utterance == event.utterance:
                    ready = max(ready, read[3])  # the decision waited for the read at the last pause
                if reuse and read is not None and read[2].kind == COMPLETE:
                    early_end = event.decided_ms
                text, cost = (read[1], 0.0) if reuse and read is not None else self.recognize(event.audio)
                out.heard.append(str(text))
                started = time.perf_counter()
                if text:
                    pipeline.act_many([Turn(str(text), "bench", now, amend=event.utterance in amend)], commit=True)
                done = ready + cost + (time.perf_counter() - started) * 1e3
                speech_end = item.segments_ms[-1][1] if item.segments_ms else event.end_ms
                if event.end_ms >= speech_end - 300:  # the utterance that holds the turn's last words
                    out.wait_ms = done - speech_end
                    out.decided_ms = event.decided_ms - speech_end
                read = None
            if not pending and not finished:
                pending += stream.finish()
                finished = True
        bookings = pipeline.store.bookings(datetime(2000, 1, 1, tzinfo=ZoneInfo("UTC")),
                                           datetime(2100, 1, 1, tzinfo=ZoneInfo("UTC")))
        out.right = len(bookings) == 1 and bookings[0].room == item.room and \
            bookings[0].start == datetime.fromisoformat(item.start) and \
            (item.end is None or bookings[0].end == datetime.fromisoformat(item.end))
        return out

    def _read(self, policy: str, due: PauseDue, pipeline: TextPipeline, now: datetime, previous: str | None
              ) -> tuple[PauseDue, str | None, TurnVerdict, float]:
        if policy == "smart-turn":
            assert self.smart_turn is not None
            probability, cost = self.smart_turn(due.audio)
            return due, None, acoustic_verdict(float(probability), self.turn), due.at_ms + cost
        text, cost = self.recognize(due.audio)
        started = time.perf_counter()
        outcome = pipeline.act_many([Turn(str(text), "bench", now, preview=True)], commit=False)[0] \
            if str(text).strip() else None
        cost += (time.perf_counter() - started) * 1e3
        verdict = read_verdict(str(text), outcome.result if outcome else None,
                               outcome.confidence if outcome else 0.0, previous, self.turn)
        return due, str(text), verdict, due.at_ms + cost


def _summary(policy: str, runs: Sequence[_TurnRun], paused: int) -> dict[str, Any]:
    pauses = [c for r in runs[:paused] for c in r.cutoffs]
    waits = [r.wait_ms / 1e3 for r in runs if r.wait_ms is not None]
    return {
        "policy": policy, "turns": len(runs), "pauses": len(pauses), "false_cutoffs": sum(pauses),
        "false_cutoff_rate": round(sum(pauses) / max(1, len(pauses)), 4),
        "right": sum(r.right for r in runs), "right_rate": round(sum(r.right for r in runs) / max(1, len(runs)), 4),
        "right_pause_corpus": sum(r.right for r in runs[:paused]),
        "wait": LatencyStats.from_seconds(waits).as_dict() if waits else None,
        "reads_per_turn": round(sum(r.reads for r in runs) / max(1, len(runs)), 2),
        "decided_after_speech_p50_ms": float(np.percentile([r.decided_ms for r in runs if r.decided_ms is not None],
                                                           50)) if waits else None,
        "turns_detail": [r.to_dict() for r in runs],
    }


def run_turns_bench(settings: Settings, options: TurnsBenchOptions) -> int:
    from assistant.wiring import build_parser, build_recognizer, build_text_pipeline

    recognizer = build_recognizer(settings)  # first: on a GPU it may restart the process (CUDA 13 links)
    items = load_turn_items(options.pauses, options.plain, options.limit)
    paused = sum(1 for i in items if i.segments_ms)
    asr = settings.asr
    parser = build_parser(settings)
    smart_turn = None
    if "smart-turn" in options.policies:
        from assistant.turn.smart_turn import SmartTurn

        model = SmartTurn()
        smart_turn = _Timed(lambda audio: model.probabilities([audio])[0])
    runner = _Runner(settings, lambda store: build_text_pipeline(settings, store, parser=parser),
                     _Timed(lambda audio: recognizer.transcribe(audio)), smart_turn)
    points = []
    with tempfile.TemporaryDirectory() as tmp:
        for policy in options.policies:
            runs = [runner.run(policy, item, Path(tmp) / f"{policy}-{n}.sqlite")
                    for n, item in enumerate(tqdm(items, desc=policy, unit="turn"))]
            points.append(_summary(policy, runs, paused))
    rows = [[p["policy"], f"{100 * p['false_cutoff_rate']:.1f} % ({p['false_cutoffs']}/{p['pauses']})",
             f"{p['wait']['p50_ms']:.0f}" if p["wait"] else "-", f"{p['wait']['p95_ms']:.0f}" if p["wait"] else "-",
             f"{p['right']}/{p['turns']}", p["reads_per_turn"]] for p in points]
    print(format_table(["policy", "false cutoffs", "wait p50 ms", "wait p95 ms", "booked as meant",
                        "reads per turn"], rows))
    machine = machine_info()
    models = {"asr": f"{asr.model} ({asr.device}, {asr.compute_type})",
              "nlu": f"{parser.backend.info().name} ({parser.backend.info().precision})"}
    report = {
        "benchmark": "end of turn: false cutoffs at pauses inside turns, wait after the turn, right bookings",
        "command": "assistant bench turns" + (f" --config {options.config}" if options.config else "")
                   + (f" --json {options.json}" if options.json else "")
                   + (f" --plot {options.plot}" if options.plot else ""),
        "machine": machine,
        "models": models,
        "turn": {k: getattr(settings.turn, k) for k in TurnSettings.__dataclass_fields__},
        "turns": {"pause_corpus": paused, "pause_free": len(items) - paused},
        "points": points,
    }
    if options.json is not None:
        write_report(options.json, report)
    if options.plot is not None:
        from assistant.bench.plot import plot_turns

        hardware = (machine["gpus"] or [machine["cpu"]])[0]
        plot_turns(points, options.plot, f"End of turn: {models['asr']}, {models['nlu']}, {hardware}")
    return 0
