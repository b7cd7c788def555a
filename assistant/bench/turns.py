"""`assistant bench turns`: end-of-turn policies side by side on spoken turns with pauses inside, scored the way
eot-bench scores (../docs/turn-taking.md).

Every policy hears the same audio through the server's own turn taker (assistant/turn/taker.py: the voice
stream, webrtcvad, the endpointer, reads at pauses, reopening), recognizer and text pipeline, in-process and in
audio time, one turn at a time; the rules are the server's, not a copy:
- fixed hangovers (300, 500, 800 ms of silence end every turn);
- Smart Turn v3.2 (acoustic: asked at each pause whether the turn sounds finished);
- reading (ours: the words so far read at each pause; complete ends soon, incomplete holds);
- `reading:open=MS+unsure=MS`: the reading with `complete_open_ms` / `unsure_ms` set (a sweep of these gives the
  curves they are chosen from).

Per pause inside a turn: was the turn ended there (a false cutoff), and did the turn still end as meant? Per turn:
the wait from the true end of speech to the result, and whether the store ends up holding exactly the booking
meant. Waits are audio-time decisions plus the compute each decision waited for, measured here (decodes are cached
per audio, so every policy pays the same measured cost for the same audio): what one real-time client would see.
Reported per split (tune: what the policy was tuned on; untuned: phrasings and voices never tuned on; pause-free)
and per voice.
"""

from __future__ import annotations

import json
import sys
import tempfile
import wave
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
from tqdm import tqdm

from assistant.audio.stream import VoiceStream
from assistant.bench.e2e.corpus import CORPUS_NOW, CORPUS_TZ
from assistant.bench.report import LatencyStats, format_table, machine_info, write_report
from assistant.bench.turn_driver import Timed, drive
from assistant.config import Settings
from assistant.language.registry import DEFAULT, get
from assistant.text_pipeline import TextPipeline
from assistant.turn.models import turn_model
from assistant.turn.policy import TurnSettings
from assistant.turn.taker import TurnTaker

__all__ = ["TurnsBenchOptions", "TurnItem", "load_turn_items", "run_turns_bench", "POLICIES"]

POLICIES = ("hangover-300", "hangover-500", "hangover-800", "smart-turn", "reading")
SPLITS = ("tune", "untuned", "pause-free")


_OPTIONS = {"open": "complete_open_ms", "unsure": "unsure_ms", "complete": "complete_ms", "hold": "hold_ms"}


def _options(policy: str) -> dict[str, int]:
    """`reading:open=450+unsure=600` -> {"complete_open_ms": 450, "unsure_ms": 600}; raises ValueError."""
    _, _, spec = policy.partition(":")
    out = {}
    for option in filter(None, spec.split("+")):
        key, _, value = option.partition("=")
        if key not in _OPTIONS or not value.isdigit():
            raise ValueError(f"{option!r}: expected one of {', '.join(_OPTIONS)} = milliseconds")
        out[_OPTIONS[key]] = int(value)
    return out


def known_policy(policy: str) -> bool:
    """One of POLICIES, or `reading:KEY=MS[+KEY=MS]` (the reading with those [turn] settings: open =
    complete_open_ms, unsure = unsure_ms, complete = complete_ms, hold = hold_ms)."""
    name, _, spec = policy.partition(":")
    if name == "reading" and spec:
        try:
            return bool(_options(policy))
        except ValueError:
            return False
    return policy in POLICIES


@dataclass(frozen=True)
class TurnItem:
    file: Path
    segments_ms: tuple[tuple[int, int], ...]  # true speech pieces; the pauses lie between them ((): not known)
    room: str
    start: str
    end: str | None
    voice: str = "hibari"
    split: str = "pause-free"
    language: str = DEFAULT.code  # the session's spoken language: which recognizer hears it

    @property
    def pauses(self) -> list[tuple[int, int]]:
        return [(a[1], b[0]) for a, b in zip(self.segments_ms, self.segments_ms[1:], strict=False)]


def load_turn_items(pauses: Path, plain: Path | None, limit: int = 0) -> list[TurnItem]:
    """The pause corpus, and the pause-free corpus's bookings of a named room."""
    items = [TurnItem(pauses / i["file"], tuple(tuple(s) for s in i["segments_ms"]), i["room"], i["start"], i["end"],
                      i["voice"], i["split"], i.get("language", DEFAULT.code))
             for i in json.loads((pauses / "pauses.json").read_text())]
    if plain is not None:
        # every booking that names its room; one with no end said ("... at four p.m. with Priya") is right with
        # any end (the default length), and shows what waiting longer for an end costs
        items += [TurnItem(plain / i["file"], (), i["room"], i["start"], i.get("end"))
                  for i in json.loads((plain / "requests.json").read_text())
                  if i["intent"] == "book_meeting" and "room" in i]
    return items[:limit] if limit else items


@dataclass(frozen=True)
class TurnsBenchOptions:
    pauses: Path
    plain: Path | None
    policies: tuple[str, ...] = POLICIES
    limit: int = 0  # the first N turns only (a quick look; the tests)
    splits: tuple[str, ...] = SPLITS  # the turns of these splits only
    json: Path | None = None
    plot: Path | None = None
    config: Path | None = None  # for the report's command line
    before: Callable[[], dict[str, Any]] | None = None  # gives the same bench's report on the code before a change


@dataclass
class _TurnRun:
    file: str
    voice: str
    split: str
    cutoffs: list[bool] = field(default_factory=list)  # per true pause
    wait_ms: float | None = None
    decided_ms: int | None = None  # audio time from the true end of speech to the end of the turn
    right: bool = False
    wrong: bool = False  # the store holds a booking that is not the one meant (two bookings included)
    utterances: int = 0
    reads: int = 0
    heard: list[str] = field(default_factory=list)  # what each utterance was acted on as
    ended_by: list[str] = field(default_factory=list)  # how each utterance's turn ended (the verdict, hangover)

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "voice": self.voice, "split": self.split, "cutoffs": sum(self.cutoffs),
                "pauses": len(self.cutoffs), "right": self.right,
                "wrong": self.wrong,
                "wait_ms": None if self.wait_ms is None else round(self.wait_ms, 1),
                "decided_ms": self.decided_ms, "heard": self.heard, "ended_by": self.ended_by}


class _Runner:
    """One policy on one turn: the server's turn taker fed the turn's audio in audio time, its decisions run by
    the server's utterance runner on timed ports (turn_driver.py)."""

    def __init__(self, settings: Settings, pipeline_for: Callable[[Path], TextPipeline],
                 recognizers: dict[str, Timed], smart_turn: Timed | None) -> None:
        self.settings, self.pipeline_for, self.recognizers, self.smart_turn = settings, pipeline_for, recognizers, \
            smart_turn

    def taker(self, policy: str) -> TurnTaker:
        """The server's stream ([audio], [turn]) without partials; a fixed-hangover policy reads no pauses."""
        from assistant.wiring import stream_config

        name = policy.partition(":")[0]
        turn = TurnSettings(**{**asdict(self.settings.turn), **_options(policy)})  # reading:open=MS+...
        if name.startswith("hangover-"):
            turn = replace(turn, model="hangover")
        elif name == "smart-turn":
            turn = replace(turn, model="smart-turn")
        else:
            turn = replace(turn, model="reading")
        config = stream_config(replace(self.settings, turn=turn))
        if name.startswith("hangover-"):
            config = replace(config, endpointer=replace(config.endpointer, hangover_ms=int(name.split("-")[1])))
        stream = VoiceStream(16_000, config=replace(config, partial_interval_ms=0))
        return TurnTaker(stream, turn_model(turn), turn)

    def run(self, policy: str, item: TurnItem, store: Path) -> _TurnRun:
        pipeline = self.pipeline_for(store)
        now = datetime.fromisoformat(CORPUS_NOW).replace(tzinfo=ZoneInfo(CORPUS_TZ))
        with wave.open(str(item.file), "rb") as wav:
            pcm = wav.readframes(wav.getnframes())
        timed = drive(self.taker(policy), pcm, self.recognizers[item.language], self.smart_turn, pipeline,
                      get(item.language), now)
        out = _TurnRun(item.file.name, item.voice, item.split, reads=timed.reads, heard=timed.heard,
                       utterances=len(timed.ended), ended_by=[e.ended_by for e in timed.ended])
        out.cutoffs = [any(start <= e.decided_ms <= end + 100 for e in timed.ended) for start, end in item.pauses]
        speech_end = item.segments_ms[-1][1] if item.segments_ms else None
        for ended, done in zip(timed.ended, timed.done_ms, strict=True):
            last_words = ended.end_ms if speech_end is None else speech_end
            if ended.end_ms >= last_words - 300:  # the utterance that holds the turn's last words
                out.wait_ms = done - last_words
                out.decided_ms = ended.decided_ms - last_words
        bookings = pipeline.store.bookings(datetime(2000, 1, 1, tzinfo=ZoneInfo("UTC")),
                                           datetime(2100, 1, 1, tzinfo=ZoneInfo("UTC")))
        meant = [b for b in bookings if b.room == item.room and b.start == datetime.fromisoformat(item.start) and
                 (item.end is None or b.end == datetime.fromisoformat(item.end))]
        out.right = len(bookings) == len(meant) == 1
        out.wrong = len(bookings) > len(meant)
        return out


def _scores(runs: Sequence[_TurnRun]) -> dict[str, Any]:
    """False cutoffs per pause (and those in turns that did not end as meant), right and wrong turns, waits."""
    paused = [r for r in runs if r.cutoffs]
    pauses = [c for r in paused for c in r.cutoffs]
    changed = [c for r in paused if not r.right for c in r.cutoffs]
    waits = [r.wait_ms / 1e3 for r in runs if r.wait_ms is not None]
    return {
        "turns": len(runs), "pauses": len(pauses), "false_cutoffs": sum(pauses),
        "false_cutoff_rate": round(sum(pauses) / max(1, len(pauses)), 4),
        "false_cutoffs_changing_the_result": sum(changed),
        "right": sum(r.right for r in runs), "right_rate": round(sum(r.right for r in runs) / max(1, len(runs)), 4),
        "wrong": sum(r.wrong for r in runs),
        "wait": LatencyStats.from_seconds(waits).as_dict() if waits else None,
        "reads_per_turn": round(sum(r.reads for r in runs) / max(1, len(runs)), 2),
        "decided_after_speech_p50_ms": float(np.percentile([r.decided_ms for r in runs if r.decided_ms is not None],
                                                           50)) if waits else None,
    }


def _summary(policy: str, runs: Sequence[_TurnRun]) -> dict[str, Any]:
    """The policy's scores over every turn, per split and per voice."""
    splits = {split: _scores([r for r in runs if r.split == split]) for split in SPLITS
              if any(r.split == split for r in runs)}
    voices = {f"{split}/{voice}": _scores([r for r in runs if (r.split, r.voice) == (split, voice)])
              for split, voice in dict.fromkeys((r.split, r.voice) for r in runs)}
    return {"policy": policy, **_scores(runs), "by_split": splits, "by_voice": voices,
            "turns_detail": [r.to_dict() for r in runs]}


def _row(name: str, scores: dict[str, Any]) -> list[object]:
    wait = scores["wait"]
    return [name, f"{100 * scores['false_cutoff_rate']:.1f} % ({scores['false_cutoffs']}/{scores['pauses']})",
            scores["false_cutoffs_changing_the_result"], f"{wait['p50_ms']:.0f}" if wait else "-",
            f"{wait['p95_ms']:.0f}" if wait else "-", f"{scores['right']}/{scores['turns']}", scores["wrong"],
            scores["reads_per_turn"]]


def run_turns_bench(settings: Settings, options: TurnsBenchOptions) -> int:
    from assistant.wiring import build_language_parser, build_language_recognizer, build_recognizer, build_text_pipeline

    recognizer = build_recognizer(settings)  # first: on a GPU it may restart the process (CUDA 13 links)
    items = [i for i in load_turn_items(options.pauses, options.plain) if i.split in options.splits]
    items = items[: options.limit] if options.limit else items
    asr = settings.asr
    parser = build_language_parser(settings)
    smart_turn = None
    if any(p.startswith("smart-turn") for p in options.policies):
        from assistant.turn.smart_turn import SmartTurn

        model = SmartTurn()
        smart_turn = Timed(lambda audio: model.probabilities([audio])[0])
    recognizers = {DEFAULT.code: Timed(recognizer.transcribe)}
    for language in dict.fromkeys(i.language for i in items if i.language != DEFAULT.code):
        other = build_language_recognizer(settings, get(language))
        if other is not None:
            recognizers[language] = Timed(other.transcribe)
        else:  # [nlu] languages without it: its turns are not heard here
            print(f"[bench] {sum(i.language == language for i in items)} {get(language).name} turns left out: this "
                  "configuration does not hear it ([nlu] languages)", file=sys.stderr)
    items = [i for i in items if i.language in recognizers]
    runner = _Runner(settings, lambda store: build_text_pipeline(settings, store, parser=parser), recognizers,
                     smart_turn)
    points = []
    with tempfile.TemporaryDirectory() as tmp:
        for policy in options.policies:
            runs = [runner.run(policy, item, Path(tmp) / f"{policy}-{n}.sqlite")
                    for n, item in enumerate(tqdm(items, desc=policy, unit="turn"))]
            points.append(_summary(policy, runs))
    before = options.before() if options.before is not None else None
    earlier = [{**point, "policy": f"before: {point['policy']}"} for point in before["points"]] if before else []
    rows = []
    for point in earlier + points:
        rows.append(_row(f"**{point['policy']}**", point))
        rows += [_row(f"{point['policy']} · {split}", scores) for split, scores in point["by_split"].items()]
        rows += [_row(f"{point['policy']} · {voice}", scores) for voice, scores in point["by_voice"].items()]
    print(format_table(["policy · split/voice", "false cutoffs", "changing the result", "wait p50 ms",
                        "wait p95 ms", "booked as meant", "wrong bookings", "reads per turn"], rows))
    machine = machine_info()
    models = {"asr": f"{asr.model} ({asr.device}, {asr.compute_type})",
              "nlu": f"{parser.backend.info().name} ({parser.backend.info().precision})"}
    report = {
        "benchmark": "end of turn: false cutoffs at pauses inside turns, wait after the turn, right bookings",
        "command": "assistant bench turns" + (f" --config {options.config}" if options.config else "")
                   + f" --policies {','.join(options.policies)}"
                   + (f" --json {options.json}" if options.json else "")
                   + (f" --plot {options.plot}" if options.plot else ""),
        "machine": machine,
        "models": models,
        "turn": {k: getattr(settings.turn, k) for k in TurnSettings.__dataclass_fields__},
        "turns": {split: sum(1 for i in items if i.split == split) for split in SPLITS},
        "voices": sorted({i.voice for i in items}),
        "points": points,
        "before": before,
    }
    if options.json is not None:
        write_report(options.json, report)
    if options.plot is not None:
        from assistant.bench.plot import plot_turns

        hardware = (machine["gpus"] or [machine["cpu"]])[0]
        plot_turns(earlier + points, options.plot, f"End of turn: {models['asr']}, {models['nlu']}, {hardware}")
    return 0
