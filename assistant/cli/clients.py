"""The clients: a WAV file sent to the server, and the microphone."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from assistant.cli.common import Subparsers, local_zone_name, reference_time, settings_of, token_of
from assistant.errors import ConfigError
from assistant.language.registry import SESSION_LANGUAGES


def _cmd_send(args: argparse.Namespace) -> int:
    from assistant.clients.send import send_wav

    if args.now is not None or args.tz is not None:
        reference_time(args.now, args.tz, settings_of(args))  # refuse a bad --now/--tz before connecting
    return send_wav(args.file, args.url, args.now, args.tz or "UTC", args.fast, token=token_of(args),
                    language=args.language, speech=args.speech)


def _cmd_mic(args: argparse.Namespace) -> int:
    from assistant.clients.mic import run_mic

    zone = args.tz or settings_of(args).timezone or local_zone_name(os.environ)
    reference_time(args.now, zone, settings_of(args))  # refuse a bad --now/--tz before opening the microphone
    device = int(args.device) if args.device and args.device.isdigit() else args.device
    try:
        return run_mic(args.url, device, zone, args.now, args.seconds, args.json, token_of(args), args.language,
                       speech=not args.no_speech, echo_cancel=not args.no_echo_cancel)
    except OSError as exc:  # PortAudio missing, or no such device
        raise ConfigError(f"microphone: {exc} (Debian: apt-get install libportaudio2; list devices with "
                          "python -m sounddevice)") from exc


def add_commands(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    send = sub.add_parser("send", parents=[common], help="stream a WAV file to the server, print its events")
    send.add_argument("file", type=Path, metavar="FILE.wav")
    send.add_argument("--url", default="ws://127.0.0.1:8765")
    send.add_argument("--now", help="reference date-time for the server, ISO 8601")
    send.add_argument("--tz", help="IANA time zone sent in start (default UTC)")
    send.add_argument("--fast", action="store_true", help="send as fast as possible instead of in real time "
                      "(the server admits the first [limits] audio_burst_s = 30 s of audio at once)")
    send.add_argument("--token", help="the server's access token (default: $ASSISTANT_TOKEN)")
    send.add_argument("--language", choices=SESSION_LANGUAGES,
                      help="what the recording speaks (default: en; auto: told apart in each utterance)")
    send.add_argument("--speech", action="store_true",
                      help="ask for spoken replies: their audio comes (not played) and each reply gets one "
                           "reply_audio_received line, \"t\" when its first audio came")
    send.set_defaults(func=_cmd_send)

    mic = sub.add_parser("mic", parents=[common], help="talk into the microphone; see partials and results")
    mic.add_argument("--url", default="ws://127.0.0.1:8765")
    mic.add_argument("--device", help="input device name or number (default: the system's)")
    mic.add_argument("--tz", help="IANA time zone (default: config, else this machine's)")
    mic.add_argument("--now", help="reference date-time, ISO 8601 (for demos and tests)")
    mic.add_argument("--seconds", type=float, help="stop after this long (default: until Ctrl-C)")
    mic.add_argument("--json", action="store_true", help="print every server event as a JSON line")
    mic.add_argument("--token", help="the server's access token (default: $ASSISTANT_TOKEN)")
    mic.add_argument("--language", choices=SESSION_LANGUAGES,
                     help="what you speak (default: en; auto: told apart in each utterance)")
    mic.add_argument("--no-speech", action="store_true", help="replies shown, not spoken")
    mic.add_argument("--no-echo-cancel", action="store_true",
                     help="send the microphone as it is (the server still takes its own replies' echo out)")
    mic.set_defaults(func=_cmd_mic)
