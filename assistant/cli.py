"""`assistant` command line: the only place that parses arguments and reads config files and environment."""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import IO

from assistant.asr.models import SPEECH_MODELS
from assistant.config import Settings, load_settings
from assistant.errors import AssistantError, ConfigError
from assistant.nlu.model_folder import NLUModel
from assistant.zones import parse_reference, parse_zone
from engines.base import ShapeProfile

__all__ = ["main"]


def _settings(args: argparse.Namespace) -> Settings:
    settings = load_settings(args.config, os.environ, getattr(args, "set", None) or ())
    nlu = settings.nlu
    if getattr(args, "backend", None):
        nlu = replace(nlu, backend=args.backend)
    if getattr(args, "precision", None):
        nlu = replace(nlu, precision=args.precision)
    return replace(settings, nlu=nlu)


def _local_zone_name(env: Mapping[str, str]) -> str:
    """This machine's IANA zone: $TZ, /etc/timezone, or the /etc/localtime link; UTC when none says."""
    if env.get("TZ", "").strip(":"):
        return env["TZ"].strip(":")
    try:
        return Path("/etc/timezone").read_text().strip() or "UTC"
    except OSError:
        pass
    localtime = Path("/etc/localtime")
    if localtime.is_symlink() and "zoneinfo/" in str(localtime.resolve()):
        return str(localtime.resolve()).split("zoneinfo/", 1)[1]
    return "UTC"


def _reference_time(now: str | None, tz: str | None, settings: Settings) -> datetime:
    """--now and --tz fix the reference point for relative dates ("tomorrow"); refuse bad ones up front.

    Without --now it is the current time in the zone; a naive --now is a wall-clock time in the zone."""
    zone_name = tz or settings.timezone or _local_zone_name(os.environ)
    try:
        zone = parse_zone(zone_name)  # also refuses a folder of zones ("Europe") instead of crashing on it
    except ValueError as exc:
        source = "--tz" if tz else ("[time] timezone" if settings.timezone else "this machine's zone")
        raise ConfigError(f"{source}: {exc}") from None
    if now is None:
        return datetime.now(zone)
    try:
        return parse_reference(now, zone)
    except ValueError as exc:
        raise ConfigError(f"--now: {exc} (e.g. 2026-12-02T09:30:00+01:00)") from None


def _lines(stream: IO[bytes], chunk: int, interactive: bool) -> Iterator[list[str]]:
    """Chunks of decoded lines; one line at a time when a person types them."""
    batch: list[str] = []
    for raw in stream:
        batch.append(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
        if interactive or len(batch) >= chunk:
            yield batch
            batch = []
    if batch:
        yield batch


def _cmd_parse(args: argparse.Namespace) -> int:
    settings = _settings(args)
    fixed_now = _reference_time(args.now, args.tz, settings)
    if (args.file is None) == (args.text is None):
        raise ConfigError("give either TEXT or --file PATH|- (not both)")
    from assistant.text_pipeline import Turn
    from assistant.wiring import build_text_pipeline  # after argument checks: loading may build the model

    pipeline = build_text_pipeline(settings, args.store, commit=args.commit, verbose=args.verbose)
    conversation = args.conversation or f"cli-{uuid.uuid4().hex[:12]}"

    def emit(texts: Sequence[str]) -> None:
        now = fixed_now if args.now else datetime.now(fixed_now.tzinfo)
        for outcome in pipeline.act_many([Turn(t, conversation, now) for t in texts], commit=args.commit):
            sys.stdout.write(json.dumps(outcome.to_dict(), ensure_ascii=False) + "\n")
        sys.stdout.flush()

    if args.text is not None:
        emit([args.text])
    elif args.file == "-":
        for chunk in _lines(sys.stdin.buffer, settings.nlu.batch_size, sys.stdin.isatty()):
            emit(chunk)
    else:
        path = Path(args.file)
        if not path.is_file():
            raise ConfigError(f"--file {path}: no such file")
        with path.open("rb") as handle:
            for chunk in _lines(handle, settings.nlu.batch_size, interactive=False):
                emit(chunk)
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    from assistant.server.access import Access
    from assistant.server.app import ServerOptions, run_server
    from assistant.wiring import build_voice_server, check_serving

    settings = _settings(args)
    check_serving(settings)  # refused before minutes of model loading, not after
    access = Access.configure(settings.access, args.host)  # a non-loopback bind without a token: refused now
    if args.models is not None:
        from engines.triton_client import parse_models_urls

        parse_models_urls(args.models)  # a malformed URL: refused now
    if args.workers < 1:
        raise ConfigError("--workers: at least 1")
    if args.workers > 1:
        from assistant.server.gateways import run_workers

        return run_workers(sys.argv[1:], args.workers, args.host, args.port)
    server = build_voice_server(settings, args.store, args.asr_model, args.models)
    run_server(server.workers, server.stream,
               ServerOptions(args.host, args.port, settings.limits, access, settings.serving.event_loop,
                             args.reuse_port))
    return 0


def _cmd_model_server(args: argparse.Namespace) -> int:
    from assistant.model_server.launch import run_model_servers, triton_python
    from assistant.wiring import check_serving, meeting_model, recognizer_hotwords

    settings = _settings(args)
    check_serving(settings)
    if args.servers < 1:
        raise ConfigError("--servers: at least 1")
    gpus = None
    if args.gpus is not None:
        try:
            gpus = [int(part) for part in args.gpus.split(",") if part.strip()]
        except ValueError:
            raise ConfigError(f"--gpus {args.gpus!r}: GPU indexes, e.g. 0,1") from None
        if not gpus or min(gpus) < 0:
            raise ConfigError(f"--gpus {args.gpus!r}: GPU indexes, e.g. 0,1")
    triton_python(settings)  # no pytriton anywhere: said before the model is looked for
    return run_model_servers(settings, meeting_model(settings), recognizer_hotwords(settings), args.servers, gpus)


def _cmd_export_triton(args: argparse.Namespace) -> int:
    from assistant.model_server.repository import export_repository
    from assistant.wiring import meeting_model, recognizer_hotwords

    settings = _settings(args)
    for line in export_repository(args.dir, settings, meeting_model(settings), recognizer_hotwords(settings),
                                  gpus=args.gpus, force=args.force):
        print(line)
    return 0


def _token(args: argparse.Namespace) -> str | None:
    """--token, else $ASSISTANT_TOKEN: what a server that needs a token is sent (as an Authorization header)."""
    from assistant.server.access import TOKEN_ENV

    return getattr(args, "token", None) or os.environ.get(TOKEN_ENV) or None


def _cmd_send(args: argparse.Namespace) -> int:
    from assistant.clients.send import send_wav

    if args.now is not None or args.tz is not None:
        _reference_time(args.now, args.tz, _settings(args))  # refuse a bad --now/--tz before connecting
    return send_wav(args.file, args.url, args.now, args.tz or "UTC", args.fast, token=_token(args),
                    language=args.language)


def _cmd_mic(args: argparse.Namespace) -> int:
    from assistant.clients.mic import run_mic

    zone = args.tz or _settings(args).timezone or _local_zone_name(os.environ)
    _reference_time(args.now, zone, _settings(args))  # refuse a bad --now/--tz before opening the microphone
    device = int(args.device) if args.device and args.device.isdigit() else args.device
    try:
        return run_mic(args.url, device, zone, args.now, args.seconds, args.json, _token(args), args.language)
    except OSError as exc:  # PortAudio missing, or no such device
        raise ConfigError(f"microphone: {exc} (Debian: apt-get install libportaudio2; list devices with "
                          "python -m sounddevice)") from exc


def _language_model(args: argparse.Namespace, settings: Settings, rebuild: bool = False,
                    progress: Callable[[str, float], None] | None = None) -> NLUModel:
    """--language en (MiniLM) or zh (the Chinese and mixed-language model on multilingual-e5)."""
    from assistant.wiring import chinese_model, meeting_model

    return (chinese_model if args.language == "zh" else meeting_model)(settings, rebuild, progress)


def _progress_line(stage: str, done: float) -> None:
    print(json.dumps({"stage": stage, "done": round(done, 4)}), flush=True)


def _cmd_train(args: argparse.Namespace) -> int:
    settings = _settings(args)
    languages = ["en", "zh"] if args.language == "all" else [args.language]
    for language in languages:
        model = _language_model(argparse.Namespace(language=language), settings, rebuild=args.force,
                                progress=_progress_line if args.progress_json else None)
        print(json.dumps({"language": language, "folder": str(model.folder), "dev": model.manifest["dev"],
                          "int8_kept": model.manifest["int8_kept"]}, indent=2))
    return 0


def _cmd_build_onnx(args: argparse.Namespace) -> int:
    from models.accuracy_gate import MAX_DROP_POINTS
    from models.precision_files import PRECISIONS, ensure_precision_file

    wanted = [p.strip() for p in args.precision.split(",") if p.strip()]
    unknown = [p for p in wanted if p not in PRECISIONS]
    if unknown or not wanted:
        raise ConfigError(f"--precision {args.precision!r}: precision must be one of {', '.join(PRECISIONS)}")
    model = _language_model(args, _settings(args))
    report = {}
    for precision in wanted:
        made = ensure_precision_file(model, precision, allow_rejected=True)
        report[precision] = {"onnx": str(made.onnx), **made.accuracy}
        fp32, own = made.accuracy["fp32"], made.accuracy.get(precision, made.accuracy["fp32"])
        verdict = ("accepted" if made.accuracy.get("accepted", True)
                   else f"REJECTED (a drop of more than {MAX_DROP_POINTS} points)")
        print(f"{precision}: intent accuracy {own['intent_accuracy']:.2f} (fp32 {fp32['intent_accuracy']:.2f}), "
              f"slot F1 {own['slot_f1']:.2f} (fp32 {fp32['slot_f1']:.2f}), {verdict}; {made.onnx}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"model": model.key, "split": "dev",
                                         "runtime": "onnxruntime (CPU)", "files": report}, indent=2) + "\n")
    return 0


def _profile(settings: Settings, overrides: list[str]) -> ShapeProfile:
    from assistant.wiring import shape_profile

    profile = shape_profile(settings)
    for item in overrides:
        axis, _, values = item.partition("=")
        try:
            low, opt, high = (int(v) for v in values.split(":"))
        except ValueError:
            raise ConfigError(f"--profile {item!r}: expected batch=MIN:OPT:MAX or seq=MIN:OPT:MAX") from None
        if axis not in ("batch", "seq"):
            raise ConfigError(f"--profile {item!r}: the axis is batch or seq")
        try:
            profile = replace(profile, **{axis: (low, opt, high)})
        except ValueError as exc:
            raise ConfigError(f"--profile {item!r}: {exc}") from None
    return profile


def _cmd_build_engine(args: argparse.Namespace) -> int:
    import importlib.util

    from assistant.errors import BackendUnavailable
    from models.precision_files import ensure_precision_file

    settings = _settings(args)
    shapes = _profile(settings, args.profile)
    for package, hint in (("tensorrt", "install TensorRT from NVIDIA (pip install tensorrt)"),
                          ("cuda", "pip install -e '.[gpu]' (cuda-python)")):
        if importlib.util.find_spec(package) is None:
            raise BackendUnavailable(f"building an engine needs {package}: {hint}")
    model = _language_model(args, settings)
    ensure_precision_file(model, args.precision)  # refuses a precision that failed its accuracy check
    from models.engine_build import build_engine

    path, key, built = build_engine(model.files, args.precision, shapes)
    print(json.dumps({"engine": str(path), "built_now": built, "key": key.__dict__}, indent=2, default=list))
    return 0


def _counts(flag: str, text: str) -> tuple[int, ...]:
    try:
        counts = tuple(int(c) for c in text.split(",") if c.strip())
    except ValueError:
        counts = ()
    if not counts or min(counts) < 1:
        raise ConfigError(f"{flag} {text!r}: give positive whole numbers separated by commas, like 1,2,4,8")
    return counts


def _cmd_bench_asr(args: argparse.Namespace) -> int:
    from assistant.bench.asr import ASRBenchOptions, run_asr_bench

    settings = _settings(args)  # build_recognizer restarts the process first on a CUDA 13-only machine
    return run_asr_bench(settings, ASRBenchOptions(args.corpus, args.asr_model, args.batch, args.rounds, args.json))


def _cmd_bench_nlu(args: argparse.Namespace) -> int:
    from assistant.bench.nlu import NLUBenchOptions, run_nlu_bench

    backends = tuple((name, precision or "auto") for name, _, precision in
                     (spec.strip().partition(":") for spec in args.backends.split(",") if spec.strip()))
    languages = tuple(language.strip() for language in args.language.split(",") if language.strip())
    if not languages or not set(languages) <= {"en", "zh"}:
        raise ConfigError(f"--language {args.language!r}: en, zh or en,zh")
    options = NLUBenchOptions(backends, _counts("--batch-sizes", args.batch_sizes), args.seconds, args.threads,
                              args.json, args.plot, args.whole_path, languages)
    return run_nlu_bench(_settings(args), options)


def _cmd_bench_voice(args: argparse.Namespace) -> int:
    from assistant.bench.voice import VoiceBenchOptions, run_voice_bench

    voices = tuple(v.strip() for v in args.voices.split(",") if v.strip()) if args.voices else ()
    return run_voice_bench(VoiceBenchOptions(args.corpus, args.url, args.store, args.json, args.language, voices,
                                             args.config, args.asr_model, args.plot, args.limit,
                                             args.side_by_side, args.babble, _engines(args.engines),
                                             tuple(args.set)))


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
        _counts("--clients", str(args.clients)), args.corpus, args.duration, args.max_wait, args.seed, args.url,
        args.asr_model, args.store, args.config, args.aim, args.json, args.plot, _token(args),
        parse_layouts(args.layouts), args.client_procs))


def _cmd_bench_soak(args: argparse.Namespace) -> int:
    from assistant.bench.soak import SoakOptions, run_soak_bench

    return run_soak_bench(SoakOptions(args.clients, args.minutes, args.corpus, seed=args.seed, config=args.config,
                                      json=args.json, plot=args.plot, abuse=args.abuse,
                                      flood_sessions=args.flood_sessions, tokenless=args.tokenless,
                                      guessers=args.guessers))


def _cmd_bench_expressions(args: argparse.Namespace) -> int:
    from assistant.bench.expressions import ExpressionBenchOptions, run_expression_bench

    return run_expression_bench(_settings(args), ExpressionBenchOptions(args.json, not args.no_duckling))


def _cmd_bench_zh_expressions(args: argparse.Namespace) -> int:
    from assistant.bench.zh_expressions import run_zh_expression_bench

    return run_zh_expression_bench(args.json)


def _cmd_bench_encoders(args: argparse.Namespace) -> int:
    from assistant.bench.encoders import EncoderBenchOptions, run_encoder_bench

    folders: dict[str, Path] = {}
    for item in args.folder:
        language, _, folder = item.partition("=")
        if language not in ("en", "zh") or not folder:
            raise ConfigError(f"--folder {item!r}: expected en=DIR or zh=DIR")
        folders[language] = Path(folder)
    if not folders:  # the trained models of this machine's cache
        settings = _settings(args)
        folders = {language: _language_model(argparse.Namespace(language=language), settings).folder
                   for language in ("en", "zh")}
    backends = tuple((name, precision or "auto") for name, _, precision in
                     (spec.strip().partition(":") for spec in args.backends.split(",") if spec.strip()))
    return run_encoder_bench(EncoderBenchOptions(folders, backends, _counts("--batch-sizes", args.batch_sizes),
                                                 args.seconds, args.json))


def _cmd_bench_turns(args: argparse.Namespace) -> int:
    from assistant.bench.turns import POLICIES, SPLITS, TurnsBenchOptions, known_policy, run_turns_bench

    policies = tuple(p for p in args.policies.split(",") if p)
    unknown = [p for p in policies if not known_policy(p)]
    if unknown:
        raise ConfigError(f"--policies: unknown {', '.join(unknown)}; choose from {', '.join(POLICIES)} or "
                          "reading:open=MS+unsure=MS")
    splits = tuple(s for s in args.splits.split(",") if s)
    if set(splits) - set(SPLITS):
        raise ConfigError(f"--splits: choose from {', '.join(SPLITS)}")
    return run_turns_bench(_settings(args), TurnsBenchOptions(args.pauses, None if args.no_plain else args.plain,
                                                              policies, args.limit, splits, args.json, args.plot,
                                                              args.config))


def _cmd_bench_atis(args: argparse.Namespace) -> int:
    from models.atis import AtisBenchOptions, run_atis_benchmark

    return run_atis_benchmark(AtisBenchOptions(args.epochs, args.json, args.device, args.lr, args.train_embeddings))


def _parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="assistant", description="Voice-to-action meeting-booking assistant")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", type=Path, help="config file (default: configs/default.toml)")
    common.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override one config key, e.g. --set limits.max_connections=512 (repeatable)")
    sub = top.add_subparsers(dest="command", required=True)

    parse = sub.add_parser("parse", parents=[common],
                           help="understand text: intent, slots and the resulting command, as JSON lines")
    parse.add_argument("text", nargs="?", metavar="TEXT")
    parse.add_argument("--file", metavar="PATH|-", help="one text per line; '-' reads standard input")
    parse.add_argument("--now", help="reference date-time, ISO 8601 (default: now)")
    parse.add_argument("--tz", help="IANA time zone (default: config, else this machine's)")
    parse.add_argument("--commit", action="store_true",
                       help="run the commands against the store (default: a dry run that writes nothing)")
    parse.add_argument("--store", type=Path, help="SQLite booking file (default from config: the user's data dir)")
    parse.add_argument("--conversation", help="conversation id; lines of one --file are turns of one conversation")
    parse.add_argument("--backend", help="NLU backend (default from config: onnxruntime)")
    parse.add_argument("--precision", choices=["auto", "fp32", "fp16", "int8"])
    parse.add_argument("-v", "--verbose", action="store_true", help="say which backend runs")
    parse.set_defaults(func=_cmd_parse)

    train = sub.add_parser("train", parents=[common], help="build the NLU model now (normally on first use)")
    train.add_argument("--force", action="store_true", help="rebuild even if a cached model exists")
    train.add_argument("--progress-json", action="store_true",
                       help='print {"stage": ..., "done": 0-1} lines while building (a server reads them)')
    train.add_argument("--language", choices=["all", "en", "zh"], default="all",
                       help="which model: en (MiniLM), zh (Chinese and mixed, multilingual-e5), all (both)")
    train.set_defaults(func=_cmd_train)

    onnx = sub.add_parser("build-onnx", parents=[common],
                          help="make the FP16 / INT8 Q/DQ ONNX files for TensorRT and check them against FP32")
    onnx.add_argument("--precision", default="fp16,int8", help="comma-separated: fp16, int8 (default both)")
    onnx.add_argument("--language", choices=["en", "zh"], default="en", help="whose model (default: English)")
    onnx.add_argument("--json", type=Path, help="write the accuracy report here")
    onnx.set_defaults(func=_cmd_build_onnx)

    engine = sub.add_parser("build-engine", parents=[common],
                            help="build the TensorRT engine for this GPU (never done at server start)")
    engine.add_argument("--precision", choices=["fp32", "fp16", "int8"], default="fp16")
    engine.add_argument("--language", choices=["en", "zh"], default="en", help="whose model (default: English)")
    engine.add_argument("--profile", action="append", default=[], metavar="AXIS=MIN:OPT:MAX",
                        help="batch=1:8:64 or seq=8:32:128 (default from config [nlu] profile_batch/profile_seq)")
    engine.set_defaults(func=_cmd_build_engine)

    serve = sub.add_parser("serve", parents=[common], help="the websocket voice server")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8765, help="0 picks a free port (printed on start)")
    serve.add_argument("--store", type=Path, help="SQLite booking file (default from config: the user's data dir)")
    serve.add_argument("--asr-model", choices=sorted(SPEECH_MODELS),
                       help="faster-whisper model (default from config [asr] model: tiny.en)")
    serve.add_argument("--models", metavar="triton://HOST:PORT[,...]",
                       help="run no model here: call the model server's (assistant model-server) at its gRPC port; "
                            "several, comma-separated (one per GPU): each call goes to the least busy")
    serve.add_argument("--workers", type=int, default=1,
                       help="server processes sharing the port (SO_REUSEPORT); best with --models")
    serve.add_argument("--reuse-port", action="store_true", help=argparse.SUPPRESS)  # set by --workers
    serve.set_defaults(func=_cmd_serve)

    model_server = sub.add_parser("model-server", parents=[common],
                                  help="serve the recognizer and the NLU model on Triton for gateways "
                                       "(assistant serve --models triton://HOST:PORT); ports in [model_server]")
    model_server.add_argument("--servers", type=int, default=1,
                              help="Triton processes, one per GPU: server i on GPU i and on each port + i * "
                                   "[model_server] port_stride (gateways: --models triton://H:8001,triton://H:8011)")
    model_server.add_argument("--gpus", metavar="0,1,...",
                              help="the GPUs to put them on, in turn (default: every GPU visible; none on a CPU)")
    model_server.set_defaults(func=_cmd_model_server)

    export = sub.add_parser("export-triton", parents=[common],
                            help="write the models as a Triton model repository (NVIDIA's Triton container)")
    export.add_argument("dir", type=Path, metavar="DIR")
    export.add_argument("--gpus", type=int, default=1, help="instance groups: one per GPU (0: CPU instances)")
    export.add_argument("--force", action="store_true", help="replace DIR if it exists")
    export.set_defaults(func=_cmd_export_triton)

    send = sub.add_parser("send", parents=[common], help="stream a WAV file to the server, print its events")
    send.add_argument("file", type=Path, metavar="FILE.wav")
    send.add_argument("--url", default="ws://127.0.0.1:8765")
    send.add_argument("--now", help="reference date-time for the server, ISO 8601")
    send.add_argument("--tz", help="IANA time zone sent in start (default UTC)")
    send.add_argument("--fast", action="store_true", help="send as fast as possible instead of in real time "
                      "(the server admits the first [limits] audio_burst_s = 30 s of audio at once)")
    send.add_argument("--token", help="the server's access token (default: $ASSISTANT_TOKEN)")
    send.add_argument("--language", choices=["en", "zh", "auto"],
                      help="what the recording speaks (default: en; auto: told apart in each utterance)")
    send.set_defaults(func=_cmd_send)

    mic = sub.add_parser("mic", parents=[common], help="talk into the microphone; see partials and results")
    mic.add_argument("--url", default="ws://127.0.0.1:8765")
    mic.add_argument("--device", help="input device name or number (default: the system's)")
    mic.add_argument("--tz", help="IANA time zone (default: config, else this machine's)")
    mic.add_argument("--now", help="reference date-time, ISO 8601 (for demos and tests)")
    mic.add_argument("--seconds", type=float, help="stop after this long (default: until Ctrl-C)")
    mic.add_argument("--json", action="store_true", help="print every server event as a JSON line")
    mic.add_argument("--token", help="the server's access token (default: $ASSISTANT_TOKEN)")
    mic.add_argument("--language", choices=["en", "zh", "auto"],
                     help="what you speak (default: en; auto: told apart in each utterance)")
    mic.set_defaults(func=_cmd_mic)

    bench = sub.add_parser("bench", help="benchmarks").add_subparsers(dest="bench", required=True)
    nlu = bench.add_parser("nlu", parents=[common], help="NLU backends side by side (latency, throughput)")
    nlu.add_argument("--backends", default="onnxruntime:fp32,onnxruntime:int8,torch-eager:fp32",
                     help="comma-separated NAME[:PRECISION]")
    nlu.add_argument("--batch-sizes", default="1,32", help="comma-separated batch sizes")
    nlu.add_argument("--language", default="en",
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
    corpus = Path(__file__).resolve().parent.parent / "tests" / "data" / "corpus"
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
    voice.add_argument("--language", choices=["en", "zh", "auto"], default="en",
                       help="the sessions' language (default: en; tests/data/corpus_zh is Chinese)")
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
    turns = bench.add_parser("turns", parents=[common],
                             help="end-of-turn policies side by side: false cutoffs at pauses, wait, right bookings")
    turns.add_argument("--pauses", type=Path, default=corpus.parent / "pauses", help="the pause corpus")
    turns.add_argument("--plain", type=Path, default=corpus, help="the pause-free corpus (its bookings)")
    turns.add_argument("--no-plain", action="store_true", help="only the pause corpus")
    turns.add_argument("--policies", default=",".join(("hangover-300", "hangover-500", "hangover-800", "smart-turn",
                                                        "reading")), help="comma-separated, in this order")
    turns.add_argument("--limit", type=int, default=0, help="the first N turns only")
    turns.add_argument("--splits", default="tune,untuned,pause-free",
                       help="the turns of these splits: tune (what the policy was tuned on), untuned (phrasings and "
                            "voices never tuned on), pause-free")
    turns.add_argument("--json", type=Path, help="write the report here")
    turns.add_argument("--plot", type=Path, help="write a PNG of false cutoffs against wait here")
    turns.set_defaults(func=_cmd_bench_turns)
    atis = bench.add_parser("atis", help="train the same architecture on ATIS and score its test split")
    atis.add_argument("--epochs", type=int, default=20)
    atis.add_argument("--json", type=Path, help="write the scores here")
    atis.add_argument("--device", default="cpu", help="cpu | cuda (train on the GPU)")
    atis.add_argument("--lr", type=float, default=1e-4, help="learning rate")
    atis.add_argument("--train-embeddings", action="store_true", help="train the word-embedding table too")
    atis.set_defaults(func=_cmd_bench_atis)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return int(args.func(args))
    except AssistantError as exc:
        print(f"assistant: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
