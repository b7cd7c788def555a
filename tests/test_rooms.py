from pathlib import Path

import pytest

from assistant.booking.rooms import RoomDirectory
from assistant.config import DEFAULT_CONFIG
from assistant.errors import ConfigError


@pytest.fixture(scope="module")
def rooms() -> RoomDirectory:
    return RoomDirectory.load(DEFAULT_CONFIG.parent / "rooms.toml")


@pytest.mark.parametrize(("said", "key"), [
    ("Everest", "everest"), ("everest", "everest"), ("the Everest Room", "everest"), ("Mount Everest", "everest"),
    ("Everist", "everest"), ("Ever rest", "everest"), ("Evrest", "everest"), ("Everest's", "everest"),
    ("Kilimanjaro", "kilimanjaro"), ("Kili manjaro", "kilimanjaro"), ("Kili", "kilimanjaro"),
    ("Killamanjaro", "kilimanjaro"), ("Kilomanjaro", "kilimanjaro"), ("Mattahorn", "matterhorn"),
    ("Matter horn", "matterhorn"), ("the Matterhorn", "matterhorn"), ("Materhorn", "matterhorn"),
    ("Denali", "denali"), ("Denally", "denali"), ("De Nali", "denali"), ("McKinley", "denali"),
    ("Fuji", "fuji"), ("Mount Fuji", "fuji"), ("Fujii", "fuji"), ("Olympus", "olympus"), ("Olimpus", "olympus"),
    ("the big room", "olympus"), ("Olympics", "olympus"),
    # by sound, where the spelling is too far off
    ("Dinally", "denali"), ("Donnally", "denali"), ("Foogy", "fuji"), ("Kilo man jar oh", "kilimanjaro"),
    ("Every st", "everest"), ("Matter Horne", "matterhorn"),
])
def test_matches_what_recognizers_write(rooms: RoomDirectory, said: str, key: str) -> None:
    match = rooms.match(said)
    assert match is not None and match.room.key == key


@pytest.mark.parametrize("said", ["Aurora", "Room 101", "the kitchen", "", "the room", "Denmark", "olive",
                                  "Fuzzy", "in Ollie"])
def test_unknown_rooms_are_not_forced_onto_the_directory(rooms: RoomDirectory, said: str) -> None:
    assert rooms.match(said) is None


def test_smallest_room_with_enough_seats(rooms: RoomDirectory) -> None:
    assert rooms.smallest_fitting(3).key == "fuji"  # type: ignore[union-attr]
    assert rooms.smallest_fitting(7).key == "kilimanjaro"  # type: ignore[union-attr]
    assert rooms.smallest_fitting(7, candidates={"everest", "olympus"}).key == "everest"  # type: ignore[union-attr]
    assert rooms.smallest_fitting(21) is None


def test_bad_directory_is_explained(tmp_path: Path) -> None:
    path = tmp_path / "rooms.toml"
    path.write_text("[[room]]\nname = 'Broom closet'\n")
    with pytest.raises(ConfigError, match="needs a name and seats"):
        RoomDirectory.load(path)
    path.write_text("")
    with pytest.raises(ConfigError, match="empty"):
        RoomDirectory.load(path)


@pytest.mark.parametrize(("said", "key", "kind", "sure"), [
    ("Everest", "everest", "exact", True), ("the Everest Room", "everest", "exact", True),
    ("Fuji Rune", "fuji", "named", True), ("the Everest rum", "everest", "named", True),  # a name, then no name
    ("珠峰那间", "everest", "exact", True), ("富士那边", "fuji", "named", True),
    ("Everist", "everest", "spelled", True), ("Mattahorn", "matterhorn", "spelled", True),
    ("Denally", "denali", "spelled", False),  # a distant spelling: proposed
    ("Dinally", "denali", "sound", False), ("Foogy", "fuji", "sound", False),
    ("buck", "olympus", "sound", False),  # BK, as "big" of "the big room": never booked on its own
    ("马特红风", "matterhorn", "sound", False), ("附属", "fuji", "sound", False),  # by pinyin
])
def test_how_sure_a_match_is(rooms: RoomDirectory, said: str, key: str, kind: str, sure: bool) -> None:
    match = rooms.match(said)
    assert match is not None and (match.room.key, match.kind.value, match.sure) == (key, kind, sure)


def test_a_room_said_exactly_wins_over_one_matched_by_sound(rooms: RoomDirectory) -> None:
    # "can you buck, Denali for tomorrow at 9": the misheard word is tagged as a room beside the named one
    for saids in (["buck", "Denali"], ["Denali", "buck"], ["Denally", "Denali"], ["Aurora", "Denali"]):
        reading = rooms.resolve(saids)
        assert reading.match is not None and reading.match.room.key == "denali" and not reading.rivals, saids


@pytest.mark.parametrize("saids", [["Fuji", "Denali"], ["Fuji Denali"], ["Dinally", "Foogy"], ["Fuji", "珠峰"]])
def test_two_rooms_in_one_request_are_asked_about(rooms: RoomDirectory, saids: list[str]) -> None:
    reading = rooms.resolve(saids)
    assert reading.match is None and len(reading.rivals) == 2, reading


def test_no_room_or_an_unknown_one(rooms: RoomDirectory) -> None:
    assert rooms.resolve([]).match is None and rooms.resolve([]).unknown is None
    assert rooms.resolve(["Aurora"]).unknown == "Aurora"
