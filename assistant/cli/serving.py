"""Commands that serve: the voice server, the Triton model server and its model repository."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from assistant.asr.models import SPEECH_MODELS
from assistant.cli.common import Subparsers, settings_of
from assistant.errors import ConfigError


def _cmd_serve(args: argparse.Namespace) -> int:
    from assistant.event_loop import loop_factory
    from assistant.server.access import Access
    from assistant.server.app import ServerOptions, run_server
    from assistant.wiring import build_voice_server

    settings = settings_of(args)
    try:
        loop_factory(settings.serving.event_loop)  # "uvloop" where it is not installed: refused before loading
    except ImportError as exc:
        raise ConfigError(f"[serving] event_loop: {exc}") from None
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
    from assistant.wiring import meeting_model, recognizer_hotwords

    settings = settings_of(args)
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

    settings = settings_of(args)
    for line in export_repository(args.dir, settings, meeting_model(settings), recognizer_hotwords(settings),
                                  gpus=args.gpus, force=args.force):
        print(line)
    return 0


def add_commands(sub: Subparsers, common: argparse.ArgumentParser) -> None:
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
