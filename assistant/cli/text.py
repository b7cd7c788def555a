"""`assistant parse`: text in, intent, slots and the resulting command out, as JSON lines."""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import IO

from assistant.cli.common import Subparsers, reference_time, settings_of
from assistant.errors import ConfigError


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
    settings = settings_of(args)
    fixed_now = reference_time(args.now, args.tz, settings)
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


def add_commands(sub: Subparsers, common: argparse.ArgumentParser) -> None:
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
