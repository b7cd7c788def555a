"""`assistant bench voice`: the spoken corpus, voice by voice, through a real server at real-time pace.

For each voice of the corpus (tests/data/corpus/voices.json: the same requests said by several TTS voices, one
kept out of all tuning) a server with an empty store hears every request in order (the cancels and moves act on
what the bookings before them made), and each result is judged against what the request meant:

- `exact`: the expected intent, and a command with the expected room and times where the corpus gives them;
- `asked`: a question instead (not right, not harmful);
- `wrong_booking`: a booking made in another room or at other times than meant, or one made from a request that
  was no booking at all: the worst outcome, counted apart;
- `wrong`: anything else (another intent, a rejection).

Each session starts in the zone the entry's expected times are in (its `timezone`; else the English corpus's
Europe/Berlin) at the corpus's reference time.

Latency per utterance: end of speech in the audio (the server's `speech_end.audio_ms`, on the client clock the
moment that audio was sent, since frames go out at real-time pace from t=0) -> `result` received, the end-of-turn
wait included, as a person experiences it.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from assistant.bench.babble import TALKERS, with_babble
from assistant.bench.e2e.corpus import CORPUS_NOW, CORPUS_TZ
from assistant.bench.report import LatencyStats, format_table, machine_info, write_report
from assistant.clients.send import Received, read_wav, stream_audio
from assistant.config import load_settings
from assistant.errors import ConfigError
from assistant.events import IntentEvent, Latency, ReplyHeard, ResultEvent, SpeechEnd, Transcript
from assistant.language.registry import DEFAULT
from assistant.server.spawn import spawn_server

__all__ = ["run_voice_bench", "VoiceBenchOptions", "Voice", "corpus_voices", "judge", "judge_request", "plot_title",
           "VERDICTS", "plot_voices"]

VERDICTS = ("exact", "asked", "wrong", "wrong_booking")
_BOOKING_KEYS = ("room", "start", "end")


@dataclass(frozen=True)
class VoiceBenchOptions:
    corpus: Path  # requests.json + WAVs (+ voices.json: the voices and their folders)
    url: str | None = None  # an already running server (default: start one per voice with a throwaway store)
    store: Path | None = None  # booking file for the spawned server (one voice only)
    json: Path | None = None
    language: str = DEFAULT.code  # the sessions' "language": en, zh or auto
    voices: tuple[str, ...] = ()  # default: every voice of the corpus
    config: Path | None = None  # the spawned servers' config
    asr_model: str | None = None  # the spawned servers' speech model ([asr] model)
    plot: Path | None = None
    limit: int | None = None  # only the first N requests (a quick check of the bench itself)
    side_by_side: bool = False  # the voices at once, each with its own server (a GPU has room for them)
    babble_db: float | None = None  # each request over TALKERS others of its voice at this SNR (bench/babble.py)
    engines: tuple[str, ...] = ()  # [asr] engines compared in this run, each voice on each (default: the config's)
    overrides: tuple[str, ...] = ()  # --set SECTION.KEY=VALUE for the spawned servers
    # gives the same bench's report on the code before a change (bench/before.py), running beside this one
    before: Callable[[], dict[str, Any]] | None = None
    speech: bool = True  # replies spoken (not played): voice-to-first-audio and the time to the first sentence


@dataclass(frozen=True)
class Voice:
    name: str
    folder: Path
    split: str  # "tune": looked at while tuning; "untuned": never
    engine: str


def corpus_voices(corpus: Path) -> list[Voice]:
    """The corpus's voices (voices.json); a corpus without one is a single voice, its own folder."""
    listing = corpus / "voices.json"
    if not listing.is_file():
        return [Voice(corpus.name, corpus, "tune", "")]
    return [Voice(name, corpus / entry["folder"], entry["split"], entry.get("engine", ""))
            for name, entry in json.loads(listing.read_text()).items()]


def judge(expected: dict[str, Any], intent: str | None, result: dict[str, Any] | None) -> str:
    """One of VERDICTS: what the request left behind against what it meant (a corpus entry of requests.json)."""
    if intent is None or result is None:
        return "wrong"
    command = result.get("command") or {}
    booked = result.get("type") == "command" and command.get("action") == "book_meeting" and (
        result.get("committed") or result.get("executable"))
    if booked and (expected["intent"] != "book_meeting"
                   or any(command.get(k) != expected[k] for k in _BOOKING_KEYS if k in expected)):
        return "wrong_booking"
    if intent != expected["intent"]:
        return "asked" if result.get("type") == "clarify" else "wrong"
    if any(k in expected for k in _BOOKING_KEYS) or expected["intent"] == "book_meeting":
        if result.get("type") == "clarify":
            return "asked"
        if any(command.get(k) != expected[k] for k in _BOOKING_KEYS if k in expected) or not command:
            return "wrong"
    if expected["intent"] == "out_of_scope" and result.get("type") != "rejected":
        return "wrong"
    return "exact"


def judge_request(expected: dict[str, Any], readings: list[tuple[str | None, dict[str, Any]]]) -> str:
    """What a spoken request left behind, from every (intent, result) it was answered with, in order. A turn that
    ended early and reopened is answered twice: the last reading is the request's, and it replaces (`amends`)
    what the first part booked; a first booking that nothing replaced is left behind, a second booking."""
    if not readings:
        return "wrong"
    intent, result = readings[-1]
    command = result.get("command") or {}
    if command.get("action") == "reschedule_meeting" and command.get("amends"):  # the first part's booking, moved
        command = {**command, "action": "book_meeting", "start": command.get("new_start"),
                   "end": command.get("new_end")}
        result = {**result, "command": command}
    verdict = judge(expected, intent, result)
    replaced = {(r.get("command") or {}).get("amends") or r.get("amends") for _, r in readings}
    for _, earlier in readings[:-1]:
        booked = earlier.get("type") == "command" and earlier.get("committed") and \
            (earlier.get("command") or {}).get("action") == "book_meeting"
        if booked and earlier["command"].get("booking_id") not in replaced:
            return "wrong_booking"  # two bookings, or a wrong one left behind
    return verdict


def _audio(voice: Voice, entries: list[dict[str, Any]], index: int, babble_db: float | None
           ) -> tuple[bytes, int, int]:
    """The request's audio, with babble of the next TALKERS requests of the same voice underneath if asked."""
    pcm, rate, channels = read_wav(voice.folder / entries[index]["file"])
    if babble_db is None:
        return pcm, rate, channels
    others = [read_wav(voice.folder / entries[(index + k) % len(entries)]["file"]) for k in range(1, TALKERS + 1)]
    if channels != 1 or any(o[1:] != (rate, 1) for o in others):
        raise ConfigError(f"--babble needs mono WAVs of one rate in {voice.folder}")
    return with_babble(pcm, [o[0] for o in others], babble_db), rate, channels


def _hear(url: str, audio: tuple[bytes, int, int], language: str, timezone: str, speech: bool) -> list[Received]:
    """The request heard by the server, in a session started in `timezone` (the one its expected times are in)."""
    pcm, rate, channels = audio
    received: list[Received] = []
    asyncio.run(stream_audio(url, pcm, rate, channels, received.append, now=CORPUS_NOW, tz=timezone,
                             language=language, speech=speech))
    return received


def _spoken(received: list[Received]) -> tuple[list[float], list[float]]:
    """Voice-to-first-audio of each spoken reply (from the end of speech in the audio sent to its first audio's
    arrival, the client's clock) and the server's time from result to that audio (the first sentence's TTS)."""
    ends = {r.event.utterance: r.event.audio_ms / 1000 for r in received if isinstance(r.event, SpeechEnd)}
    first = [r.t - ends[r.event.utterance] for r in received
             if isinstance(r.event, ReplyHeard) and r.event.utterance in ends]
    tts = [(r.event.stages_ms["reply_audio"] - r.event.stages_ms["result"]) / 1000 for r in received
           if isinstance(r.event, Latency) and "reply_audio" in r.event.stages_ms and "result" in r.event.stages_ms]
    return first, tts


def _row(entry: dict[str, Any], received: list[Received]) -> tuple[dict[str, Any], list[float]]:
    events = [r.event for r in received]
    ends = {r.event.utterance: r.event.audio_ms / 1000 for r in received if isinstance(r.event, SpeechEnd)}
    intents = {e.utterance: e.intent for e in events if isinstance(e, IntentEvent)}
    results = [e for e in events if isinstance(e, ResultEvent)]
    latencies = [r.t - ends[r.event.utterance] for r in received
                 if isinstance(r.event, ResultEvent) and r.event.utterance in ends]
    readings = [(intents.get(r.utterance), r.result) for r in results]
    return {"file": entry["file"], "said": entry["text"], "verdict": judge_request(entry, readings),
            "heard": " | ".join(e.text for e in events if isinstance(e, Transcript)),
            "intent": [intent for intent, _ in readings], "results": [result for _, result in readings],
            "voice_to_action_s": [round(x, 3) for x in latencies],
            "voice_to_first_audio_s": [round(x, 3) for x in _spoken(received)[0]]}, latencies


def _memory_mb(pid: int) -> dict[str, float]:
    """The process's resident memory now (VmRSS) and at its highest (VmHWM), in MB (Linux)."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = round(int(value.split()[0]) / 1024, 1)
    return fields


def _run_voice(voice: Voice, entries: list[dict[str, Any]], options: VoiceBenchOptions, scratch: Path,
               engine: str | None = None) -> dict[str, Any]:
    config_args = [*(["--config", str(options.config)] if options.config else []),
                   *(["--set", f"asr.model={json.dumps(options.asr_model)}"] if options.asr_model else []),
                   *(["--set", f"asr.engine={engine}"] if engine else []),
                   *(arg for override in options.overrides for arg in ("--set", override))]
    store: Path | None = options.store or scratch / f"bookings-{voice.name}-{engine or 'asr'}.sqlite"
    if load_settings(options.config, os.environ, options.overrides).store.backend != "sqlite":
        store = None  # the config's store (a CalDAV server's calendars): the server takes no --store file
    server, url = (None, options.url) if options.url else spawn_server(store, config_args)
    idle = _memory_mb(server.pid) if server is not None else {}
    rows, latencies, first_audio, tts = [], [], [], []
    try:
        for index, entry in enumerate(tqdm(entries, desc=f"bench voice {voice.name}"
                                                          + (f" ({engine})" if engine else ""), unit="request",
                                           file=sys.stderr)):
            audio = _audio(voice, entries, index, options.babble_db)
            received = _hear(url, audio, options.language, entry.get("timezone", CORPUS_TZ), options.speech)
            row, took = _row(entry, received)
            rows.append(row)
            latencies += took
            first, made = _spoken(received)
            first_audio += first
            tts += made
        served = _memory_mb(server.pid) if server is not None else {}
    finally:
        if server is not None:
            server.terminate()
            server.wait(30)
    counts = Counter(row["verdict"] for row in rows)
    memory = {"idle_rss_mb": idle.get("VmRSS"), "peak_rss_mb": served.get("VmHWM")} if idle else {}
    return {"voice": voice.name, "split": voice.split, "engine": voice.engine, "asr": engine or "",
            "requests": len(rows),
            **{verdict: counts[verdict] for verdict in VERDICTS},
            "latency": LatencyStats.from_seconds(latencies).as_dict(),
            "first_audio": LatencyStats.from_seconds(first_audio).as_dict() if first_audio else None,
            "first_sentence_tts": LatencyStats.from_seconds(tts).as_dict() if tts else None,
            "server_memory": memory, "utterances": rows}


def _by_split(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tuned voices first, then the untuned ones (reported apart); within each, before the change and now."""
    return sorted(results, key=lambda r: (r["split"] != "tune", r["asr"], r["voice"], r.get("code") != "before"))


def plot_voices(path: Path, voices: list[dict[str, Any]], title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {"exact": "tab:green", "asked": "tab:orange", "wrong": "tab:gray", "wrong_booking": "tab:red"}
    many = len(voices) > 8  # voices x engines x code before and now: one panel above the other, labels turned
    fig, (share, wait) = plt.subplots(2 if many else 1, 1 if many else 2,
                                      figsize=(max(11.0, 0.6 * len(voices)), 9.0 if many else 4.0))
    names = [f"{v['voice']} ({v['split']})" + (f", {v['asr']}" if v.get("asr") else "")
             + (f", {v['code']}" if v.get("code") else "") if many else
             f"{v['voice']}\n({v['split']})" + (f"\n{v['asr']}" if v.get("asr") else "") for v in voices]
    bottom = [0.0] * len(voices)
    for verdict in VERDICTS:
        part = [100 * v[verdict] / v["requests"] for v in voices]
        share.bar(names, part, bottom=bottom, color=colors[verdict], label=verdict.replace("_", " "))
        bottom = [b + p for b, p in zip(bottom, part, strict=True)]
    share.set_ylabel("% of spoken requests")
    share.set_title("what each request left behind")
    share.legend(loc="lower right", fontsize=8)
    wait.bar(names, [v["latency"]["p50_ms"] for v in voices], color="tab:blue", label="p50 to the result")
    wait.scatter(names, [v["latency"]["p95_ms"] for v in voices], color="black", marker="_", s=400, label="p95")
    spoken = [(name, v["first_audio"]) for name, v in zip(names, voices, strict=True) if v.get("first_audio")]
    if spoken:
        wait.scatter([n for n, _ in spoken], [s["p50_ms"] for _, s in spoken], color="tab:green", marker="o",
                     label="p50 to the first reply audio")
        wait.scatter([n for n, _ in spoken], [s["p95_ms"] for _, s in spoken], color="tab:green", marker="_",
                     s=400, label="p95 to the first reply audio")
    wait.set_ylabel("voice-to-action, ms")
    wait.set_title("end of speech -> result, and -> first reply audio")
    wait.legend(fontsize=8, loc="lower right")
    if many:
        for axis in (share, wait):
            axis.tick_params(axis="x", labelrotation=90, labelsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_title(heard: str, machine: dict[str, Any]) -> str:
    """`heard`: the recognizer(s), as said ("faster-whisper tiny.en", "whisper vs moonshine")."""
    where = ", ".join(machine["gpus"]) if machine.get("gpus") else f"{machine['cpu']}, {machine['cores']} cores"
    return f"spoken corpus per voice ({heard}; {where})"


def _spoken_cells(result: dict[str, Any]) -> list[str]:
    first, tts = result.get("first_audio"), result.get("first_sentence_tts")
    if not first:
        return ["-", "-", "-"]
    return [f"{first['p50_ms']:.0f}", f"{first['p95_ms']:.0f}", f"{tts['p50_ms']:.0f}" if tts else "-"]


def run_voice_bench(options: VoiceBenchOptions) -> int:
    listing = options.corpus / "requests.json"
    if not listing.is_file():
        raise ConfigError(f"--corpus {options.corpus}: no requests.json there")
    entries = json.loads(listing.read_text())[: options.limit]
    voices = corpus_voices(options.corpus)
    if options.voices:
        unknown = set(options.voices) - {v.name for v in voices}
        if unknown:
            raise ConfigError(f"--voices: {', '.join(sorted(unknown))} not in {options.corpus} "
                              f"(it has {', '.join(v.name for v in voices)})")
        voices = [v for v in voices if v.name in options.voices]
    if (options.url or options.store) and len(voices) > 1:
        raise ConfigError("--url and --store serve one voice at a time (each voice books into an empty store): "
                          "name one with --voices")
    if options.engines and options.url:
        raise ConfigError("--engines starts a server per engine: leave out --url")
    scratch = Path(tempfile.mkdtemp(prefix="bench-voice-"))  # throwaway stores, outside the corpus
    runs = [(voice, engine) for engine in (options.engines or (None,)) for voice in voices]
    try:
        if options.side_by_side:
            with ThreadPoolExecutor(len(voices)) as pool:
                results = list(pool.map(lambda run: _run_voice(run[0], entries, options, scratch, run[1]), runs))
        else:
            results = [_run_voice(voice, entries, options, scratch, engine) for voice, engine in runs]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    before = options.before() if options.before is not None else None
    earlier = [{**r, "code": "before"} for r in before["voices"]] if before else []
    if earlier:
        results = [{**r, "code": "now"} for r in results]
    shown = earlier + results
    print(format_table(
        ["code", "asr", "voice", "split", "exact", "asked", "wrong", "wrong bookings", "p50 ms", "p95 ms",
         "1st audio p50", "p95", "TTS p50 ms", "idle RSS MB"],
        [[r.get("code", "now"), r["asr"] or "-", r["voice"], r["split"], f"{r['exact']}/{r['requests']}", r["asked"],
          r["wrong"], r["wrong_booking"], f"{r['latency']['p50_ms']:.0f}", f"{r['latency']['p95_ms']:.0f}",
          *_spoken_cells(r), r["server_memory"].get("idle_rss_mb", "-")] for r in _by_split(shown)]))
    for split in ("tune", "untuned"):
        for code in dict.fromkeys(r.get("code", "now") for r in shown):
            part = [r for r in shown if r["split"] == split and r.get("code", "now") == code]
            if part:
                asked = sum(r["exact"] for r in part)
                print(f"{code}, {split} voices ({', '.join(dict.fromkeys(r['voice'] for r in part))}): "
                      f"{asked}/{sum(r['requests'] for r in part)} exact, "
                      f"{sum(r['wrong_booking'] for r in part)} wrong bookings")
    whisper = load_settings(options.config, os.environ, options.overrides).asr
    model = " vs ".join(options.engines) if options.engines else \
        (options.asr_model or whisper.model) if whisper.engine == "whisper" else "moonshine tiny"
    heard = f"faster-whisper {model}" if whisper.engine == "whisper" and not options.engines else model
    if options.babble_db is not None:
        babble = f", babble of {TALKERS} talkers at {options.babble_db:g} dB SNR"
        model, heard = model + babble, heard + babble
    if options.json:
        write_report(options.json, {"benchmark": "the spoken corpus per voice, one real-time client per request"
                                                 + (", replies spoken" if options.speech else ""),
                                    "command": "assistant bench voice " + " ".join(sys.argv[3:]),
                                    "machine": machine_info(), "language": options.language,
                                    "config": str(options.config or "configs/default.toml"), "asr_model": model,
                                    "voices_side_by_side": options.side_by_side,
                                    "engines": list(options.engines), "overrides": list(options.overrides),
                                    "babble_snr_db": options.babble_db,
                                    "voices": results, "before": before})
    if options.plot:
        plot_voices(options.plot, _by_split(shown), plot_title(heard, machine_info()))
    return 0
