"""`assistant bench ...`: the benchmarks (assistant/bench), each with typed options."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assistant.asr.models import SPEECH_MODELS
from assistant.cli.common import CORPUS, Subparsers, backend_specs, counts, language_model_of, settings_of, token_of
from assistant.errors import ConfigError
from assistant.language.registry import CODES, DEFAULT, SESSION_LANGUAGES, known


def _cmd_bench_asr(args: argparse.Namespace) -> int:
    from assistant.bench.asr import ASRBenchOptions, run_asr_bench

    settings = settings_of(args)  # build_recognizer restarts the process first on a CUDA 13-only machine
    return run_asr_bench(settings, ASRBenchOptions(args.corpus, args.asr_model, args.batch, args.rounds, args.json))


def _cmd_bench_nlu(args: argparse.Namespace) -> int:
    from assistant.bench.nlu import NLUBenchOptions, run_nlu_bench

    backends = backend_specs(args.backends)
    languages = tuple(language.strip() for language in args.language.split(",") if language.strip())
    if not languages or not set(languages) <= set(CODES):
        raise ConfigError(f"--language {args.language!r}: one or more of {','.join(CODES)}")
    options = NLUBenchOptions(backends, counts("--batch-sizes", args.batch_sizes), args.seconds, args.threads,
                              args.json, args.plot, args.whole_path, languages)
    return run_nlu_bench(settings_of(args), options)


def _cmd_bench_voice(args: argparse.Namespace) -> int:
    from assistant.bench.voice import VoiceBenchOptions, run_voice_bench

    voices = tuple(v.strip() for v in args.voices.split(",") if v.strip()) if args.voices else ()
    # real time: the servers mostly wait for audio, so the code before runs beside this run, under the same load
    before = _before(args, "voice", ["--corpus", str(args.corpus.resolve())], beside=True)
    return run_voice_bench(VoiceBenchOptions(args.corpus, args.url, args.store, args.json, args.language, voices,
                                             args.config, args.asr_model, args.plot, args.limit,
                                             args.side_by_side, args.babble, _engines(args.engines),
                                             tuple(args.set), before, speech=not args.no_speech))


def _before(args: argparse.Namespace, bench: str, corpus: list[str], beside: bool = False
            ) -> Callable[[], dict[str, Any]] | None:
    """With --before CHECKOUT: the same benchmark on that code (assistant/bench/before.py); the call gives its
    report."""
    if args.before is None:
        return None
    from assistant.bench.before import forwarded_args, run_before

    return run_before(args.before.resolve(), bench, forwarded_args(sys.argv[3:]) + corpus, beside)


def _engines(listed: str | None) -> tuple[str, ...]:
    from assistant.config import ASR_ENGINES

    engines = tuple(e.strip() for e in (listed or "").split(",") if e.strip())
    unknown = set(engines) - set(ASR_ENGINES)
    if unknown:
        raise ConfigError(f"--engines: {', '.join(sorted(unknown))} is not one of {', '.join(ASR_ENGINES)}")
    return engines


def _cmd_bench_e2e(args: argparse.Namespace) -> int:
    from assistant.bench.e2e import E2EBenchOptions, run_e2e_bench
    from assistant.bench.layouts import parse_layouts

    if args.url and args.layouts != "single":
        raise ConfigError("--layouts starts its own servers: leave out --url")

    return run_e2e_bench(E2EBenchOptions(
        counts("--clients", str(args.clients)), args.corpus, args.duration, args.max_wait, args.seed, args.url,
        args.asr_model, args.store, args.config, args.aim, args.json, args.plot, token_of(args),
        parse_layouts(args.layouts), args.client_procs))


def _cmd_bench_soak(args: argparse.Namespace) -> int:
    from assistant.bench.soak import SoakOptions, run_soak_bench

    return run_soak_bench(SoakOptions(args.clients, args.minutes, args.corpus, seed=args.seed, config=args.config,
                                      json=args.json, plot=args.plot, abuse=args.abuse,
                                      flood_sessions=args.flood_sessions, tokenless=args.tokenless,
                                      guessers=args.guessers))


def _cmd_bench_talkback(args: argparse.Namespace) -> int:
    from assistant.bench.talkback import TalkbackOptions, run_talkback_bench

    return run_talkback_bench(TalkbackOptions(args.corpus, args.echo_gain, args.requests, args.barge_ins,
                                              args.parallel, args.json, args.plot))


def _cmd_bench_expressions(args: argparse.Namespace) -> int:
    from assistant.bench.expressions import ExpressionBenchOptions, run_expression_bench

    return run_expression_bench(settings_of(args), ExpressionBenchOptions(args.json, not args.no_duckling))


def _cmd_bench_zh_expressions(args: argparse.Namespace) -> int:
    from assistant.bench.zh_expressions import run_zh_expression_bench

    return run_zh_expression_bench(args.json)


def _cmd_bench_encoders(args: argparse.Namespace) -> int:
    from assistant.bench.encoders import EncoderBenchOptions, run_encoder_bench

    folders: dict[str, Path] = {}
    for item in args.folder:
        language, _, folder = item.partition("=")
        if not known(language) or not folder:
            raise ConfigError(f"--folder {item!r}: expected LANGUAGE=DIR, LANGUAGE one of {', '.join(CODES)}")
        folders[language] = Path(folder)
    if not folders:  # the trained models of this machine's cache
        settings = settings_of(args)
        folders = {language: language_model_of(argparse.Namespace(language=language), settings).folder
                   for language in CODES}
    backends = backend_specs(args.backends)
    return run_encoder_bench(EncoderBenchOptions(folders, backends, counts("--batch-sizes", args.batch_sizes),
                                                 args.seconds, args.json))


def _cmd_bench_model_files(args: argparse.Namespace) -> int:
    from assistant.bench.model_files import ModelFilesOptions, run_model_files_bench

    folders: dict[str, Path] = {}
    for item in args.folder:
        label, _, folder = item.partition("=")
        if not label or not folder or not Path(folder).is_dir():
            raise ConfigError(f"--folder {item!r}: expected LABEL=DIR, DIR a model folder")
        folders[label] = Path(folder)
    if not folders:
        from models.model_cache import SHIPPED

        folders = {f"{language} shipped": SHIPPED / language for language in CODES}
    return run_model_files_bench(ModelFilesOptions(folders, args.samples, args.requests, args.json))


def _cmd_bench_turns(args: argparse.Namespace) -> int:
    from assistant.bench.turns import POLICIES, SPLITS, TurnsBenchOptions, known_policy, run_turns_bench

    policies = tuple(p for p in args.policies.split(",") if p) if args.policies else POLICIES
    unknown = [p for p in policies if not known_policy(p)]
    if unknown:
        raise ConfigError(f"--policies: unknown {', '.join(unknown)}; choose from {', '.join(POLICIES)} or "
                          "reading:open=MS+unsure=MS")
    splits = tuple(s for s in args.splits.split(",") if s)
    if set(splits) - set(SPLITS):
        raise ConfigError(f"--splits: choose from {', '.join(SPLITS)}")
    corpus = ["--pauses", str(args.pauses.resolve())]
    corpus += [] if args.no_plain else ["--plain", str(args.plain.resolve())]
    before = _before(args, "turns", corpus)
    return run_turns_bench(settings_of(args), TurnsBenchOptions(args.pauses, None if args.no_plain else args.plain,
                                                              policies, args.limit, splits, args.json, args.plot,
                                                              args.config, before))


def _cmd_bench_store(args: argparse.Namespace) -> int:
    from assistant.bench.store import StoreBenchOptions, run_store_bench

    if args.rounds < 1:
        raise ConfigError("--rounds: at least 1")
    return run_store_bench(settings_of(args), StoreBenchOptions(args.rounds, args.json, args.plot, args.voice,
                                                                args.corpus, args.limit))


def _cmd_bench_atis(args: argparse.Namespace) -> int:
    from models.atis import AtisBenchOptions, run_atis_benchmark

    return run_atis_benchmark(AtisBenchOptions(args.epochs, args.json, args.device, args.lr, args.train_embeddings))


def add_commands(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    bench = sub.add_parser("bench", help="benchmarks").add_subparsers(dest="bench", required=True)
    nlu = bench.add_parser("nlu", parents=[common], help="NLU backends side by side (latency, throughput)")
    nlu.add_argument("--backends", default="onnxruntime:fp32,onnxruntime:int8,torch-eager:fp32",
                     help="comma-separated NAME[:PRECISION]")
    nlu.add_argument("--batch-sizes", default="1,32", help="comma-separated batch sizes")
    nlu.add_argument("--language", default=DEFAULT.code,
                     help="whose model: en (MiniLM), zh (multilingual-e5), or en,zh (both, in one run)")
    nlu.add_argument("--seconds", type=float, default=3.0, help="measuring time per backend and batch size")
    nlu.add_argument("--threads", type=int, default=0, help="CPU threads per call (0: runtime default)")
    nlu.add_argument("--json", type=Path, help="write the report here")
    nlu.add_argument("--plot", type=Path, help="write a PNG of latency per backend and batch size here")
    nlu.add_argument("--whole-path", action="store_true",
                     help="also time the whole text path (tokenize .. guard .. dispatch) against the model call "
                          "alone, one request at a time, on the first backend")
    nlu.set_defaults(func=_cmd_bench_nlu)

    voice = bench.add_parser("voice", help="the spoken corpus voice by voice, real time: exact, asked, wrong "
                                           "bookings, voice-to-action latency")
    corpus = CORPUS
    voice.add_argument("--corpus", type=Path, default=corpus,
                       help="requests.json + WAVs, voices.json naming its voices (default: the test corpus)")
    voice.add_argument("--voices", help="comma-separated voices of the corpus (default: all)")
    voice.add_argument("--config", type=Path, help="the spawned servers' config (default: configs/default.toml)")
    voice.add_argument("--asr-model", choices=sorted(SPEECH_MODELS), help="the spawned servers' speech model")
    voice.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                       help="override one config key of the spawned servers (repeatable)")
    voice.add_argument("--engines", help="comma-separated [asr] engines to compare in one run, each voice on each: "
                                         "whisper, moonshine (default: the config's)")
    voice.add_argument("--url", help="an already running server, one voice (default: one server per voice, each "
                                     "with a throwaway store)")
    voice.add_argument("--store", type=Path, help="booking file for the spawned server (one voice)")
    voice.add_argument("--json", type=Path, help="write the report here")
    voice.add_argument("--plot", type=Path, help="write a PNG of the verdicts and latency per voice here")
    voice.add_argument("--limit", type=int, help="only the first N requests of the corpus")
    voice.add_argument("--side-by-side", action="store_true",
                       help="run the voices at once, each with its own server (latency then includes the others' load)")
    voice.add_argument("--babble", type=float, metavar="SNR_DB",
                       help="mix each request with three others of its voice talking underneath, this many dB quieter")
    voice.add_argument("--language", choices=SESSION_LANGUAGES, default=DEFAULT.code,
                       help="the sessions' language (default: en; tests/data/corpus_zh is Chinese)")
    voice.add_argument("--before", type=Path, metavar="CHECKOUT",
                       help="a checkout of the code before a change (git worktree add DIR COMMIT): the same "
                                        "benchmark runs there first, on this corpus, and the report holds both")
    voice.add_argument("--no-speech", action="store_true",
                       help="replies not spoken (by default they are, not played: voice-to-first-audio is measured)")
    voice.set_defaults(func=_cmd_bench_voice)

    asr_bench = bench.add_parser("asr", parents=[common],
                                 help="speech recognition per command: the product's recognizer vs faster-whisper")
    asr_bench.add_argument("--corpus", type=Path, default=corpus, help="requests.json + WAVs")
    asr_bench.add_argument("--asr-model", choices=sorted(SPEECH_MODELS), help="default from config [asr] model")
    asr_bench.add_argument("--batch", type=int, default=16, help="commands in one batched call")
    asr_bench.add_argument("--rounds", type=int, default=5, help="passes over the corpus")
    asr_bench.add_argument("--json", type=Path, help="write the report here")
    asr_bench.set_defaults(func=_cmd_bench_asr)

    e2e = bench.add_parser("e2e", parents=[common],
                           help="voice-to-action latency under load: N concurrent real-time clients")
    where = e2e.add_mutually_exclusive_group()
    where.add_argument("--url", help="measure an already running server")
    where.add_argument("--spawn", action="store_true", help="start a server with a throwaway store (the default)")
    e2e.add_argument("--layouts", default="single",
                     help="what to start and measure, one after another: single (one process, the default) and/or "
                          "triton:N (assistant model-server + N gateways on one port), triton:NxS (and S model "
                          "servers, one per GPU), e.g. single,triton:2,triton:4x2")
    e2e.add_argument("--clients", default="1", help="concurrent clients; a comma list is a sweep, e.g. 1,2,4,8")
    e2e.add_argument("--client-procs", type=int, default=1,
                     help="processes the clients are spread over (one event loop carries a few hundred at most)")
    e2e.add_argument("--corpus", type=Path, default=corpus, help="requests.json + WAVs (default: the test corpus)")
    e2e.add_argument("--duration", type=float, default=60.0, help="seconds of load per client count")
    e2e.add_argument("--max-wait", type=float, default=10.0,
                     help="a result later than this after the end of the request's audio counts as lost")
    e2e.add_argument("--seed", type=int, default=0, help="seeds the clients' choices, offsets and pauses")
    e2e.add_argument("--asr-model", choices=sorted(SPEECH_MODELS), help="speech model of the spawned server")
    e2e.add_argument("--store", type=Path, help="booking file for the spawned server (default: a throwaway one)")
    e2e.add_argument("--aim", type=float, default=1.5, help="p95 aim in seconds, drawn on the plot")
    e2e.add_argument("--token", help="access token of the --url server (default: $ASSISTANT_TOKEN)")
    e2e.add_argument("--json", type=Path, help="write the report here")
    e2e.add_argument("--plot", type=Path, help="write a PNG here")
    e2e.set_defaults(func=_cmd_bench_e2e)
    soak = bench.add_parser("soak", parents=[common],
                            help="N real-time clients for M minutes: lost requests, errors, server memory over time")
    soak.add_argument("--clients", type=int, default=4)
    soak.add_argument("--minutes", type=float, default=5.0)
    soak.add_argument("--corpus", type=Path, default=corpus, help="requests.json + WAVs (default: the test corpus)")
    soak.add_argument("--seed", type=int, default=0)
    soak.add_argument("--abuse", action="store_true",
                      help="with tokens: each client its own identity, beside one abusive identity's flood, "
                           "handshakes that never authenticate and a token guesser (docs/reliability.md)")
    soak.add_argument("--flood-sessions", type=int, default=24, help="--abuse: the abuser's sessions (default 24)")
    soak.add_argument("--tokenless", type=int, default=8,
                      help="--abuse: handshakes at once that never send a token (default 8)")
    soak.add_argument("--guessers", type=int, default=1,
                      help="--abuse: loops sending wrong tokens, about 50 a second each (default 1)")
    soak.add_argument("--json", type=Path, help="write the report here")
    soak.add_argument("--plot", type=Path, help="write a PNG of the server's memory over time here")
    soak.set_defaults(func=_cmd_bench_soak)
    talk = bench.add_parser("talkback", parents=[common],
                            help="spoken replies in a simulated room: turns started by the assistant's own echo "
                                 "(with and without the client's canceller), and how soon barge-in stops a reply")
    talk.add_argument("--corpus", type=Path, default=corpus, help="requests.json + WAVs (default: the test corpus)")
    talk.add_argument("--echo-gain", type=float, default=0.3, help="the echo's level against the reply's (0.3)")
    talk.add_argument("--requests", type=int, default=30, help="replies in the echo set (30)")
    talk.add_argument("--barge-ins", type=int, default=30, help="cases in the barge-in set (30)")
    talk.add_argument("--parallel", type=int, default=3, help="sessions at once (3)")
    talk.add_argument("--json", type=Path, help="write the report here")
    talk.add_argument("--plot", type=Path, help="write a PNG here")
    talk.set_defaults(func=_cmd_bench_talkback)
    expr = bench.add_parser("expressions", parents=[common],
                            help="the time-expression table through the text path (exact / asked / wrong), "
                                 "Duckling beside it")
    expr.add_argument("--json", type=Path, help="write the report here")
    expr.add_argument("--no-duckling", action="store_true", help="skip the Duckling comparison")
    expr.set_defaults(func=_cmd_bench_expressions)
    zh_expr = bench.add_parser("zh-expressions", parents=[common],
                               help="the Chinese date/time/duration/head-count table, span by span: ours and "
                                    "ChineseTimeNLP")
    zh_expr.add_argument("--json", type=Path, help="write the report here")
    zh_expr.set_defaults(func=_cmd_bench_zh_expressions)
    encoders = bench.add_parser("encoders", parents=[common],
                                help="the English and the Chinese model's networks side by side (what routing costs)")
    encoders.add_argument("--folder", action="append", default=[], metavar="LANG=DIR",
                          help="a model folder (encoder_config.json, labels.json, tokenizer.json; weights if any); "
                               "default: both trained models in the cache")
    encoders.add_argument("--backends", default="onnxruntime:fp32,torch-eager:fp32",
                          help="comma-separated NAME[:PRECISION]")
    encoders.add_argument("--batch-sizes", default="1,32", help="comma-separated batch sizes")
    encoders.add_argument("--seconds", type=float, default=3.0, help="measuring time per case")
    encoders.add_argument("--json", type=Path, help="write the report here")
    encoders.set_defaults(func=_cmd_bench_encoders)
    files = bench.add_parser("model-files", parents=[common],
                             help="what a served model folder costs: file size, load time, memory, latency, dev "
                                  "scores, folders side by side")
    files.add_argument("--folder", action="append", default=[], metavar="LABEL=DIR",
                       help="a model folder (repeat to compare); default: the shipped English and Chinese models")
    files.add_argument("--samples", type=int, default=5, help="fresh processes per folder (default 5)")
    files.add_argument("--requests", type=int, default=200, help="dev requests timed in each (default 200)")
    files.add_argument("--json", type=Path, help="write the report here")
    files.set_defaults(func=_cmd_bench_model_files)
    turns = bench.add_parser("turns", parents=[common],
                             help="end-of-turn policies side by side: false cutoffs at pauses, wait, right bookings")
    turns.add_argument("--pauses", type=Path, default=corpus.parent / "pauses", help="the pause corpus")
    turns.add_argument("--plain", type=Path, default=corpus, help="the pause-free corpus (its bookings)")
    turns.add_argument("--no-plain", action="store_true", help="only the pause corpus")
    turns.add_argument("--policies", help="comma-separated, in this order (default: the fixed hangovers, smart-turn "
                                          "and reading: assistant/bench/turns.py POLICIES)")
    turns.add_argument("--limit", type=int, default=0, help="the first N turns only")
    turns.add_argument("--splits", default="tune,untuned,pause-free",
                       help="the turns of these splits: tune (what the policy was tuned on), untuned (phrasings and "
                            "voices never tuned on), pause-free")
    turns.add_argument("--json", type=Path, help="write the report here")
    turns.add_argument("--plot", type=Path, help="write a PNG of false cutoffs against wait here")
    turns.add_argument("--before", type=Path, metavar="CHECKOUT",
                       help="a checkout of the code before a change (git worktree add DIR COMMIT): the same "
                                        "benchmark runs there first, on this corpus, and the report holds both")
    turns.set_defaults(func=_cmd_bench_turns)
    store = bench.add_parser("store", parents=[common],
                             help="each booking-store operation, SQLite beside CalDAV (a Radicale on loopback): "
                                  "p50/p99 in one run")
    store.add_argument("--rounds", type=int, default=200, help="book, conflict, move, read the day, cancel: N times")
    store.add_argument("--json", type=Path, help="write the report here")
    store.add_argument("--plot", type=Path, help="write a PNG of p50/p99 per operation here")
    store.add_argument("--voice", help="also run this voice of the spoken corpus through a voice server on each "
                                       "store (voice-to-action side by side), e.g. hibari")
    store.add_argument("--corpus", type=Path, default=corpus, help="the spoken corpus (with --voice)")
    store.add_argument("--limit", type=int, help="with --voice: the first N requests only")
    store.set_defaults(func=_cmd_bench_store)
    atis = bench.add_parser("atis", help="train the same architecture on ATIS and score its test split")
    atis.add_argument("--epochs", type=int, default=20)
    atis.add_argument("--json", type=Path, help="write the scores here")
    atis.add_argument("--device", default="cpu", help="cpu | cuda (train on the GPU)")
    atis.add_argument("--lr", type=float, default=1e-4, help="learning rate")
    atis.add_argument("--train-embeddings", action="store_true", help="train the word-embedding table too")
    atis.set_defaults(func=_cmd_bench_atis)
