"""The time-expression table (assistant/bench/expression_table.py) through the normalizer, the guard and the
dispatcher, with the slots a perfect tagger gives: every row is the exact command or a question, never a
command for another time. (The same table through the model is `assistant bench expressions`; its test is in
test_parse_results.py.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.bench.expression_table import Expression, expressions
from assistant.booking.dispatcher import Dispatcher
from assistant.booking.request import normalize_request
from assistant.booking.results import Clarify, Command
from assistant.booking.rooms import RoomDirectory
from assistant.booking.sqlite_store import SqliteStore
from assistant.config import DEFAULT_CONFIG
from tests.schema import assert_valid_result

ROWS = expressions(mistagged=True)


@pytest.fixture(scope="module")
def dispatcher(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dispatcher]:
    rooms = RoomDirectory.load(DEFAULT_CONFIG.parent / "rooms.toml")
    store = SqliteStore(Path(tmp_path_factory.mktemp("store")) / "bookings.sqlite")
    yield Dispatcher(store, rooms)
    store.close()


def test_the_table_is_large_and_has_both_kinds() -> None:
    assert len(ROWS) >= 300
    assert sum(r.start is None for r in ROWS) >= 25  # rows that must be asked


@pytest.mark.parametrize("row", ROWS, ids=[f"{i}:{r.said}" for i, r in enumerate(ROWS)])
def test_expression(dispatcher: Dispatcher, row: Expression) -> None:
    request = normalize_request("book_meeting", [("room", "Everest"), *row.slots], row.now, dispatcher.rooms,
                                text=row.request, any_room=True)
    result = dispatcher.handle(request, row.now, commit=False, key="k")
    assert_valid_result(result.to_dict())
    if row.start is None:
        assert isinstance(result, Clarify), result
    else:
        assert isinstance(result, Command) and result.executable, result
        assert (result.start.isoformat(), result.end.isoformat()) == (row.start, row.end)
