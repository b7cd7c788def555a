"""What the CalDAV store is pointed at: each room's calendar URL, and the credentials, which are read from the
environment or a file of their own, never from the config (a config gets shared, pasted into issues, committed)."""

from __future__ import annotations

import os
import stat
import urllib.parse
from collections.abc import Iterable, Mapping
from pathlib import Path

from assistant.booking.rooms import Room
from assistant.errors import ConfigError

__all__ = ["calendar_urls", "read_credentials", "USER_VARIABLE", "PASSWORD_VARIABLE"]

USER_VARIABLE = "ASSISTANT_CALDAV_USER"
PASSWORD_VARIABLE = "ASSISTANT_CALDAV_PASSWORD"


def calendar_urls(rooms: Iterable[Room], base: str) -> dict[str, str]:
    """Room key -> its calendar collection: the room's `calendar` (a URL, or a path under `base`), else its
    lower-case name under `base`."""
    if base and not base.endswith("/"):
        base += "/"
    urls = {}
    for room in rooms:
        where = room.calendar or f"{urllib.parse.quote(room.key)}/"
        url = urllib.parse.urljoin(base, where)
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"room {room.name}: its calendar {where!r} is not a URL, and [store] url is not set")
        urls[room.key] = url if url.endswith("/") else url + "/"
    return urls


def read_credentials(credentials_file: str, env: Mapping[str, str] = os.environ) -> tuple[str | None, str | None]:
    """(user, password): the environment's when set, else the file's one line `USER:PASSWORD`, else none (a
    server on loopback may need none)."""
    if env.get(USER_VARIABLE) or env.get(PASSWORD_VARIABLE):
        return env.get(USER_VARIABLE) or None, env.get(PASSWORD_VARIABLE) or None
    if not credentials_file:
        return None, None
    path = Path(credentials_file).expanduser()
    try:
        mode = path.stat().st_mode
        text = path.read_text().strip()
    except OSError as exc:
        raise ConfigError(f"[store] credentials_file {path}: {exc.strerror or exc}") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigError(f"[store] credentials_file {path}: others may read it; make it yours alone "
                          f"(chmod 600 {path})")
    user, colon, password = text.partition(":")
    if not colon or not user or "\n" in text:
        raise ConfigError(f"[store] credentials_file {path}: expected one line USER:PASSWORD")
    return user, password
