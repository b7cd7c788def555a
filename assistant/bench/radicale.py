"""A throwaway Radicale (a real CalDAV server, from PyPI) on a free loopback port: the CalDAV store's tests and
`assistant bench store` run against it. Its own process, so that it can be stopped like a server going down and
so that several of our processes can share it; a folder of its own, deleted with it; one user with a password
(htpasswd), so the credentials path is exercised too."""

from __future__ import annotations

import base64
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from assistant.server.spawn import free_ports

__all__ = ["RadicaleServer"]


@dataclass
class RadicaleServer:
    """`start()` runs it; `calendar_url(room)` is where a room's calendar lives (made by `make_calendars`)."""

    username: str = "assistant"
    password: str = "radicale-test-secret"
    port: int = field(default_factory=lambda: free_ports(1)[0])
    folder: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="radicale-")))
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    @property
    def home(self) -> str:
        """The user's collection: Radicale's calendars live at /USER/CALENDAR/."""
        return f"{self.url}{self.username}/"

    def calendar_url(self, room: str, space: str = "") -> str:
        """`space`: a prefix of the calendars' names ("run1-") that keeps one test's (or run's) calendars apart
        from another's on one server (Radicale keeps calendars directly under a user's collection)."""
        return f"{self.home}{space}{room}/"

    def start(self, timeout_s: float = 30.0) -> RadicaleServer:
        self.folder.mkdir(parents=True, exist_ok=True)
        users = self.folder / "users"
        users.write_text(f"{self.username}:{self.password}\n")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "radicale", "--server-hosts", f"127.0.0.1:{self.port}",
             "--storage-filesystem-folder", str(self.folder / "collections"),
             "--auth-type", "htpasswd", "--auth-htpasswd-filename", str(users),
             "--auth-htpasswd-encryption", "plain", "--auth-delay", "0", "--rights-type", "owner_only",
             "--logging-level", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"radicale exited with code {self.process.returncode} at start")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"radicale did not listen on port {self.port} within {timeout_s:.0f} s")

    def _request(self, method: str, url: str, body: bytes = b"") -> int:
        request = urllib.request.Request(url, data=body or None, method=method)
        token = f"{self.username}:{self.password}".encode()
        request.add_header("Authorization", "Basic " + base64.b64encode(token).decode())
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return int(response.status)
        except urllib.error.HTTPError as exc:
            return exc.code

    def make_calendars(self, rooms: Iterable[str], space: str = "") -> dict[str, str]:
        """What an administrator does once: one calendar per room (MKCALENDAR; one already there is kept). The
        rooms' calendar URLs."""
        self._request("MKCOL", self.home)
        urls = {}
        for room in rooms:
            url = urls[room] = self.calendar_url(room, space)
            status = self._request("MKCALENDAR", url)
            if status not in (201, 405, 409):
                raise RuntimeError(f"MKCALENDAR {url}: HTTP {status}")
        return urls

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.process = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> RadicaleServer:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.close()
