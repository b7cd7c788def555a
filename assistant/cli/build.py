"""Commands that make the models: train, the precision files for TensorRT, the TensorRT engine."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from assistant.cli.common import Subparsers, language_model_of, settings_of
from assistant.config import Settings
from assistant.errors import ConfigError
from assistant.language.registry import CODES, DEFAULT
from engines.base import ShapeProfile


def _progress_line(stage: str, done: float) -> None:
    print(json.dumps({"stage": stage, "done": round(done, 4)}), flush=True)


def _cmd_train(args: argparse.Namespace) -> int:
    # the build side: this command is where models are made, held to one numeric setting (models/reproducible.py)
    from models.reproducible import run_pinned

    run_pinned()
    from models.model_cache import ensure_language_model, ship, shipped_differences

    settings = settings_of(args)
    languages = list(CODES) if args.language == "all" else [args.language]
    differing: list[str] = []
    for language in languages:
        model = ensure_language_model(settings.cache_dir, language, rebuild=args.force or args.check,
                                      progress=_progress_line if args.progress_json else None)
        report = {"language": language, "folder": str(model.folder), "dev": model.manifest["dev"],
                  "int8_kept": model.manifest["int8_kept"]}
        if args.check:
            differing += shipped_differences(model, language)
        elif not args.no_ship:
            report["shipped"] = "updated" if ship(model, language) else "unchanged"
        print(json.dumps(report, indent=2), flush=True)
    if differing:
        print("the shipped models are not what the recipe builds (`assistant train` ships the new files; "
              "commit them with the recipe change):\n  " + "\n  ".join(differing), file=sys.stderr)
        return 1
    if args.check:
        print(f"the shipped models of {', '.join(languages)} are what the recipe builds (sha256 of "
              "every shipped file)", file=sys.stderr)
    return 0


def _cmd_build_onnx(args: argparse.Namespace) -> int:
    from models.accuracy_gate import MAX_DROP_POINTS
    from models.precision_files import PRECISIONS, ensure_precision_file

    wanted = [p.strip() for p in args.precision.split(",") if p.strip()]
    unknown = [p for p in wanted if p not in PRECISIONS]
    if unknown or not wanted:
        raise ConfigError(f"--precision {args.precision!r}: precision must be one of {', '.join(PRECISIONS)}")
    model = language_model_of(args, settings_of(args))
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
    profile = settings.nlu.shapes
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

    settings = settings_of(args)
    shapes = _profile(settings, args.profile)
    for package, hint in (("tensorrt", "install TensorRT from NVIDIA (pip install tensorrt)"),
                          ("cuda", "pip install -e '.[gpu]' (cuda-python)")):
        if importlib.util.find_spec(package) is None:
            raise BackendUnavailable(f"building an engine needs {package}: {hint}")
    model = language_model_of(args, settings)
    ensure_precision_file(model, args.precision)  # refuses a precision that failed its accuracy check
    from models.engine_build import build_engine

    path, key, built = build_engine(model.files, args.precision, shapes)
    print(json.dumps({"engine": str(path), "built_now": built, "key": key.__dict__}, indent=2, default=list))
    return 0


def _cmd_build_corpus(args: argparse.Namespace) -> int:
    from models.heard.build import CorpusPlan, build_heard_corpus, realign_corpus
    from models.heard.corpus import corpus_path

    if args.realign:
        path = realign_corpus(args.out or corpus_path(args.language))
        print(json.dumps({"language": args.language, "corpus": str(path), "realigned": True}))
        return 0
    settings = settings_of(args)
    sizes = {"train_requests": args.requests, "dev_requests": args.dev_requests}
    plan = CorpusPlan(args.language, **{k: v for k, v in sizes.items() if v is not None})
    path = build_heard_corpus(plan, settings.cache_dir, settings.rooms_file, args.out)
    print(json.dumps({"language": args.language, "corpus": str(path)}))
    return 0


def add_commands(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    train = sub.add_parser("train", parents=[common],
                           help="build the NLU models into the cache (the whole build) and copy what a CPU "
                                "serves into models/shipped where it changed")
    train.add_argument("--force", action="store_true", help="rebuild even if a cached model exists")
    train.add_argument("--check", action="store_true",
                       help="rebuild from nothing and fail, naming each file, where the shipped model differs (CI)")
    train.add_argument("--no-ship", action="store_true",
                       help="leave models/shipped as it is (a server's build of a missing model)")
    train.add_argument("--progress-json", action="store_true",
                       help='print {"stage": ..., "done": 0-1} lines while building (a server reads them)')
    train.add_argument("--language", choices=["all", *CODES], default="all",
                       help="which model: en (MiniLM), zh (Chinese and mixed, multilingual-e5), all (both)")
    train.set_defaults(func=_cmd_train)

    corpus = sub.add_parser("build-corpus", parents=[common],
                            help="render requests through many voices and rooms, decode them with every recognizer "
                                 "of the language, align the slots: the heard corpus training reads (models/heard)")
    corpus.add_argument("--language", choices=CODES, default=DEFAULT.code)
    corpus.add_argument("--requests", type=int, help="of the training templates (default: the plan's)")
    corpus.add_argument("--dev-requests", type=int, help="of the held-out templates (default: the plan's)")
    corpus.add_argument("--out", type=Path, help="default: models/heard/data/<language>.jsonl.gz")
    corpus.add_argument("--realign", action="store_true",
                        help="align the stored decodes again with today's aligner (no audio, seconds)")
    corpus.set_defaults(func=_cmd_build_corpus)

    onnx = sub.add_parser("build-onnx", parents=[common],
                          help="make the FP16 / INT8 Q/DQ ONNX files for TensorRT and check them against FP32")
    onnx.add_argument("--precision", default="fp16,int8", help="comma-separated: fp16, int8 (default both)")
    onnx.add_argument("--language", choices=CODES, default=DEFAULT.code, help="whose model (default: English)")
    onnx.add_argument("--json", type=Path, help="write the accuracy report here")
    onnx.set_defaults(func=_cmd_build_onnx)

    engine = sub.add_parser("build-engine", parents=[common],
                            help="build the TensorRT engine for this GPU (never done at server start)")
    engine.add_argument("--precision", choices=["fp32", "fp16", "int8"], default="fp16")
    engine.add_argument("--language", choices=CODES, default=DEFAULT.code, help="whose model (default: English)")
    engine.add_argument("--profile", action="append", default=[], metavar="AXIS=MIN:OPT:MAX",
                        help="batch=1:8:64 or seq=8:32:128 (default from config [nlu] profile_batch/profile_seq)")
    engine.set_defaults(func=_cmd_build_engine)
