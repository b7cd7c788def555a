"""The room directory (configs/rooms.toml) and matching what was said against it.

Matching is tolerant of how speech recognizers write room names: case, "the ... room", possessives, split or
joined words ("Kili manjaro", "Matter horn") and near misses ("Mattahorn", "Everist") by edit similarity
(difflib, standard library: the directory is a handful of names, so no index is needed); failing that, by sound:
the Metaphone codes (jellyfish) of what was heard and of each name ("Dinally" and "Denali" are both TNL,
"Kilo man jar oh" and "Kilimanjaro" both KLMNJR). A match that is not exact is listed in the command's
assumptions.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path

import jellyfish

from assistant.errors import ConfigError

__all__ = ["Room", "RoomMatch", "RoomDirectory", "MIN_SIMILARITY"]

MIN_SIMILARITY = 0.75
MIN_SOUND_SIMILARITY = 0.9  # of Metaphone codes; codes are short, so this is nearly the same code
_NOISE = re.compile(r"\b(the|room|conference|meeting|mount|mt)\b|'s\b|[^\w\s]|"
                    r"会议室|会议厅|房间|那间|这间|那个|的")  # "珠峰会议室", "那间富士" name 珠峰 and 富士


@dataclass(frozen=True)
class Room:
    name: str
    aliases: tuple[str, ...]
    seats: int

    @property
    def key(self) -> str:
        """How commands name the room: lower case."""
        return self.name.lower()


@dataclass(frozen=True)
class RoomMatch:
    room: Room
    similarity: float  # 1.0: exact name or alias
    said: str


def _squash(text: str) -> str:
    """'The Kili manjaro Room' -> 'kilimanjaro'."""
    return re.sub(r"\s+", "", _NOISE.sub(" ", text.lower()))


class RoomDirectory:
    def __init__(self, rooms: Iterable[Room]) -> None:
        self.rooms = tuple(rooms)
        if not self.rooms:
            raise ConfigError("the room directory is empty")
        self._forms: list[tuple[str, Room]] = []
        for room in self.rooms:
            for form in (room.name, *room.aliases):
                squashed = _squash(form) or form.lower()
                self._forms.append((squashed, room))
        self._sounds = [(jellyfish.metaphone(form), room) for form, room in self._forms]

    @classmethod
    def load(cls, path: Path) -> RoomDirectory:
        try:
            data = tomllib.loads(path.read_text())
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"room directory {path}: {exc}") from exc
        rooms = []
        for i, entry in enumerate(data.get("room", [])):
            try:
                rooms.append(Room(str(entry["name"]), tuple(str(a) for a in entry.get("aliases", [])),
                                  int(entry["seats"])))
            except (KeyError, TypeError, ValueError) as exc:
                raise ConfigError(f"room directory {path}: room #{i + 1} needs a name and seats ({exc})") from exc
        return cls(rooms)

    def match(self, said: str) -> RoomMatch | None:
        """The room meant by what was said, or None when nothing is close enough."""
        squashed = _squash(said)
        if not squashed:
            return None
        best: RoomMatch | None = None
        for form, room in self._forms:
            similarity = 1.0 if form == squashed else SequenceMatcher(None, squashed, form).ratio()
            if best is None or similarity > best.similarity:
                best = RoomMatch(room, similarity, said)
        if best is not None and best.similarity >= MIN_SIMILARITY:
            return best
        return self._by_sound(squashed, said, best.similarity if best else 0.0)

    def _by_sound(self, squashed: str, said: str, spelled: float) -> RoomMatch | None:
        heard = jellyfish.metaphone(squashed)
        if len(heard) < 2:
            return None
        scored = [(SequenceMatcher(None, heard, code).ratio(), room) for code, room in self._sounds]
        sound, room = max(scored, key=lambda pair: pair[0])
        rivals = {r.key for s, r in scored if s == sound}
        if sound < MIN_SOUND_SIMILARITY or len(rivals) > 1:
            return None  # not close enough, or two rooms sound alike: asked, not guessed
        return RoomMatch(room, min(spelled, 0.99), said)

    def smallest_fitting(self, people: int, candidates: Iterable[str] | None = None) -> Room | None:
        """The smallest room (by seats) with room for `people`, among candidate keys (default: all)."""
        allowed = None if candidates is None else set(candidates)
        fitting = [r for r in self.rooms if r.seats >= people and (allowed is None or r.key in allowed)]
        return min(fitting, key=lambda r: (r.seats, r.name)) if fitting else None
