"""`assistant` command line: the only place that parses arguments and reads config files and environment.

One module per command group, each adding its commands to the one parser built here: text (parse), build
(train, build-onnx, build-engine), serving (serve, model-server, export-triton), clients (send, mic) and bench.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from assistant.cli import bench, build, clients, serving, text
from assistant.errors import AssistantError

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="assistant", description="Voice-to-action meeting-booking assistant")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", type=Path, help="config file (default: configs/default.toml)")
    common.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override one config key, e.g. --set limits.max_connections=512 (repeatable)")
    sub = top.add_subparsers(dest="command", required=True)
    for group in (text, build, serving, clients, bench):
        group.add_commands(sub, common)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except AssistantError as exc:
        print(f"assistant: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
