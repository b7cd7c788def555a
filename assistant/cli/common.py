"""What the command groups share: settings from the config and `--set`, the reference time, the token, and the
parsing of lists that several commands take."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.config import Settings, load_settings
from assistant.errors import ConfigError
from assistant.language.registry import get
from assistant.zones import parse_reference, parse_zone

if TYPE_CHECKING:
    from assistant.nlu.model_folder import NLUModel

__all__ = ["Subparsers", "CORPUS", "settings_of", "local_zone_name", "reference_time", "token_of", "counts",
           "backend_specs", "language_model_of"]

Subparsers = Any  # argparse's _SubParsersAction, which it does not export
CORPUS = Path(__file__).resolve().parents[2] / "tests" / "data" / "corpus"  # the spoken test corpus


def settings_of(args: argparse.Namespace) -> Settings:
    settings = load_settings(args.config, os.environ, getattr(args, "set", None) or ())
    nlu = settings.nlu
    if getattr(args, "backend", None):
        nlu = replace(nlu, backend=args.backend)
    if getattr(args, "precision", None):
        nlu = replace(nlu, precision=args.precision)
    return replace(settings, nlu=nlu)


def local_zone_name(env: Mapping[str, str]) -> str:
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


def reference_time(now: str | None, tz: str | None, settings: Settings) -> datetime:
    """--now and --tz fix the reference point for relative dates ("tomorrow"); refuse bad ones up front.

    Without --now it is the current time in the zone; a naive --now is a wall-clock time in the zone."""
    zone_name = tz or settings.timezone or local_zone_name(os.environ)
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


def token_of(args: argparse.Namespace) -> str | None:
    """--token, else $ASSISTANT_TOKEN: what a server that needs a token is sent (as an Authorization header)."""
    from assistant.server.access import TOKEN_ENV

    return getattr(args, "token", None) or os.environ.get(TOKEN_ENV) or None


def counts(flag: str, text: str) -> tuple[int, ...]:
    try:
        counts = tuple(int(c) for c in text.split(",") if c.strip())
    except ValueError:
        counts = ()
    if not counts or min(counts) < 1:
        raise ConfigError(f"{flag} {text!r}: give positive whole numbers separated by commas, like 1,2,4,8")
    return counts


def backend_specs(text: str) -> tuple[tuple[str, str], ...]:
    """--backends NAME[:PRECISION],...: (name, precision) pairs, the precision "auto" where none is given."""
    return tuple((name, precision or "auto") for name, _, precision in
                 (spec.strip().partition(":") for spec in text.split(",") if spec.strip()))


def language_model_of(args: argparse.Namespace, settings: Settings) -> NLUModel:
    """--language CODE: that language's model (en: MiniLM; zh: Chinese and mixed, on multilingual-e5), built in a
    process of its own first when the cache has none."""
    from assistant.wiring import language_model

    return language_model(settings, get(args.language))
