"""SQLite booking store: the embedded default.

- WAL journal, one `BEGIN IMMEDIATE` transaction per command: writers are serialized by SQLite itself, so two
  conversations (threads or processes) racing for one room and time cannot both pass the overlap check.
- The booking row and its idempotency record commit together: a process killed at any point leaves either both
  or neither (no half-written booking), and a replayed key returns the first outcome without writing.
- Times are stored as UTC epoch seconds (for overlap checks) plus the ISO 8601 text with its offset as given.
- Conflicts are answers, not writes: retrying a command that conflicted checks the calendar again.
- Each booking records its owner (who made it). Files from before owners were recorded gain the column on open;
  their bookings belong to the conversation that made them.
"""

from __future__ import annotations

import json
import random
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from assistant.booking.store import Booked, Booking, Conflict, NotFound, Outcome, check_aware, once_per_key

__all__ = ["SqliteStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS bookings (
    id TEXT PRIMARY KEY,
    room TEXT NOT NULL,
    start_utc INTEGER NOT NULL,
    end_utc INTEGER NOT NULL,
    start_text TEXT NOT NULL,
    end_text TEXT NOT NULL,
    title TEXT,
    attendees TEXT NOT NULL DEFAULT '[]',
    conversation TEXT,
    created_utc INTEGER NOT NULL,
    cancelled_utc INTEGER,
    owner TEXT,
    CHECK (end_utc > start_utc)
);
CREATE INDEX IF NOT EXISTS bookings_active ON bookings (room, start_utc) WHERE cancelled_utc IS NULL;
CREATE TABLE IF NOT EXISTS commands (
    idempotency_key TEXT PRIMARY KEY,
    action TEXT NOT NULL,
    booking_id TEXT NOT NULL REFERENCES bookings (id),
    created_utc INTEGER NOT NULL
);
"""


def _epoch(moment: datetime) -> int:
    check_aware(moment)
    return int(moment.timestamp())


def _now() -> int:
    return int(datetime.now(UTC).timestamp())


def _use_wal(db: sqlite3.Connection, tries: int = 100) -> None:
    """Switch a file to WAL, which needs it to itself for a moment. When several processes open a new file at
    once (gateways starting together), SQLite answers "database is locked" at once rather than wait (waiting
    could deadlock two switchers), so the switch is tried again here; a file already in WAL needs no switch."""
    for _ in range(tries - 1):
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc):
                raise
            time.sleep(random.uniform(0.01, 0.05))
    db.execute("PRAGMA journal_mode=WAL")


class SqliteStore:
    def __init__(self, path: Path) -> None:
        if str(path) != ":memory:":
            path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        # isolation_level=None: we issue BEGIN IMMEDIATE / COMMIT ourselves, one transaction per command.
        self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=30.0)
        self._lock = threading.Lock()  # one connection, shared by the worker threads of one process
        _use_wal(self._db)
        self._db.execute("PRAGMA synchronous=NORMAL")  # with WAL: safe against process crashes (kill -9)
        self._db.execute("PRAGMA foreign_keys=ON")
        with self._transaction():  # executescript() would commit on its own; keep the schema in one transaction
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    self._db.execute(statement)
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(bookings)")}
            if "owner" not in columns:  # a file from before owners were recorded
                self._db.execute("ALTER TABLE bookings ADD COLUMN owner TEXT")

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # ---- reads -------------------------------------------------------------------------------------------
    @staticmethod
    def _row(row: sqlite3.Row | tuple[object, ...]) -> Booking:
        bid, room, start_text, end_text, title, attendees, conversation, owner = row
        return Booking(str(bid), str(room), datetime.fromisoformat(str(start_text)),
                       datetime.fromisoformat(str(end_text)), None if title is None else str(title),
                       tuple(json.loads(str(attendees))), None if conversation is None else str(conversation),
                       None if owner is None else str(owner))

    _COLUMNS = "id, room, start_text, end_text, title, attendees, conversation, " \
               "COALESCE(owner, 'conversation:' || conversation)"

    def _active(self, db: sqlite3.Connection, booking_id: str) -> tuple[object, ...] | None:
        row: tuple[object, ...] | None = db.execute(
            f"SELECT {self._COLUMNS} FROM bookings WHERE id = ? AND cancelled_utc IS NULL", (booking_id,)
        ).fetchone()
        return row

    def get(self, booking_id: str) -> Booking | None:
        with self._lock:
            row = self._active(self._db, booking_id)
        return None if row is None else self._row(row)

    def bookings(self, start: datetime, end: datetime, room: str | None = None) -> Sequence[Booking]:
        query = (f"SELECT {self._COLUMNS} FROM bookings WHERE cancelled_utc IS NULL AND start_utc < ? AND end_utc > ?"
                 + (" AND room = ?" if room is not None else "") + " ORDER BY start_utc, room")
        params: tuple[object, ...] = (_epoch(end), _epoch(start)) + ((room,) if room is not None else ())
        with self._lock:
            rows = self._db.execute(query, params).fetchall()
        return [self._row(r) for r in rows]

    # ---- writes ------------------------------------------------------------------------------------------
    def _replayed(self, db: sqlite3.Connection, key: str) -> Booked | None:
        row = db.execute("SELECT booking_id FROM commands WHERE idempotency_key = ?", (key,)).fetchone()
        if row is None:
            return None
        booking = db.execute(f"SELECT {self._COLUMNS} FROM bookings WHERE id = ?", (row[0],)).fetchone()
        return Booked(self._row(booking), replayed=True)

    def _clashes(self, db: sqlite3.Connection, room: str, start: datetime, end: datetime,
                 ignore: str | None = None) -> tuple[Booking, ...]:
        rows = db.execute(
            f"SELECT {self._COLUMNS} FROM bookings WHERE room = ? AND cancelled_utc IS NULL"
            " AND start_utc < ? AND end_utc > ? AND id != ? ORDER BY start_utc",
            (room, _epoch(end), _epoch(start), ignore or ""),
        ).fetchall()
        return tuple(self._row(r) for r in rows)

    def _record(self, db: sqlite3.Connection, key: str, action: str, booking_id: str) -> None:
        db.execute("INSERT INTO commands (idempotency_key, action, booking_id, created_utc) VALUES (?, ?, ?, ?)",
                   (key, action, booking_id, _now()))

    def book(self, booking: Booking, idempotency_key: str) -> Booked | Conflict:
        with self._transaction() as db:
            done = once_per_key(lambda: self._replayed(db, idempotency_key),
                                lambda: self._insert(db, booking, idempotency_key, "book"))
        return self._stored(done) if isinstance(done, str) else done

    def replace(self, booking_id: str, booking: Booking, idempotency_key: str) -> Outcome:
        def replace_it(db: sqlite3.Connection) -> str | Outcome:
            if self._active(db, booking_id) is None:
                return NotFound(booking_id)
            db.execute("UPDATE bookings SET cancelled_utc = ? WHERE id = ?", (_now(), booking_id))
            outcome = self._insert(db, booking, idempotency_key, "replace")
            if isinstance(outcome, Conflict):
                db.execute("UPDATE bookings SET cancelled_utc = NULL WHERE id = ?", (booking_id,))
            return outcome

        with self._transaction() as db:  # one transaction: the old one goes only if the new one is made
            done = once_per_key(lambda: self._replayed(db, idempotency_key), lambda: replace_it(db))
        return self._stored(done) if isinstance(done, str) else done

    def _insert(self, db: sqlite3.Connection, booking: Booking, key: str, action: str) -> str | Conflict:
        """Inside a transaction: the booking's row and its idempotency record, or the conflict that stops it."""
        clashes = self._clashes(db, booking.room, booking.start, booking.end)
        if clashes:
            return Conflict(booking.room, booking.start, booking.end, clashes)
        booking_id = booking.id or uuid.uuid4().hex
        db.execute(
            "INSERT INTO bookings (id, room, start_utc, end_utc, start_text, end_text, title, attendees,"
            " conversation, created_utc, owner) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (booking_id, booking.room, _epoch(booking.start), _epoch(booking.end), booking.start.isoformat(),
             booking.end.isoformat(), booking.title, json.dumps(list(booking.attendees)), booking.conversation,
             _now(), booking.owner),
        )
        self._record(db, key, action, booking_id)
        return booking_id

    def _stored(self, booking_id: str) -> Booked:
        stored = self.get(booking_id)
        assert stored is not None
        return Booked(stored)

    def cancel(self, booking_id: str, idempotency_key: str) -> Booked | NotFound:
        def cancel_it(db: sqlite3.Connection) -> Booked | NotFound:
            row = self._active(db, booking_id)
            if row is None:
                return NotFound(booking_id)
            db.execute("UPDATE bookings SET cancelled_utc = ? WHERE id = ?", (_now(), booking_id))
            self._record(db, idempotency_key, "cancel", booking_id)
            return Booked(self._row(row))

        with self._transaction() as db:
            return once_per_key(lambda: self._replayed(db, idempotency_key), lambda: cancel_it(db))

    def reschedule(self, booking_id: str, start: datetime, end: datetime, idempotency_key: str, *,
                   title: str | None = None, attendees: Sequence[str] | None = None) -> Outcome:
        def move(db: sqlite3.Connection) -> str | Outcome:
            row = self._active(db, booking_id)
            if row is None:
                return NotFound(booking_id)
            current = self._row(row)
            clashes = self._clashes(db, current.room, start, end, ignore=booking_id)
            if clashes:
                return Conflict(current.room, start, end, clashes)
            db.execute("UPDATE bookings SET start_utc = ?, end_utc = ?, start_text = ?, end_text = ?, title = ?,"
                       " attendees = ? WHERE id = ?",
                       (_epoch(start), _epoch(end), start.isoformat(), end.isoformat(),
                        current.title if title is None else title,
                        json.dumps(list(current.attendees if attendees is None else attendees)), booking_id))
            self._record(db, idempotency_key, "reschedule", booking_id)
            return booking_id

        with self._transaction() as db:
            done = once_per_key(lambda: self._replayed(db, idempotency_key), lambda: move(db))
        return self._stored(done) if isinstance(done, str) else done

    def problem(self) -> str | None:
        return None  # a local file: what could go wrong (a full disk) fails the command itself, loudly

    def close(self) -> None:
        with self._lock:
            self._db.close()
