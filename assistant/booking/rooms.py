"""The room directory (configs/rooms.toml) and matching what was said against it.

Matching is tolerant of how speech recognizers write room names: case, "the ... room", possessives, split or
joined words ("Kili manjaro", "Matter horn") and near misses ("Mattahorn", "Everist") by edit similarity
(difflib, standard library: the directory is a handful of names, so no index is needed); failing that, by sound:
the Metaphone codes (jellyfish) of what was heard and of each name ("Dinally" and "Denali" are both TNL,
"Kilo man jar oh" and "Kilimanjaro" both KLMNJR); Chinese names by their toneless pinyin (pypinyin: 附属 for 富士,
马特红风 for 马特洪峰). A known name followed by a word that is no name ("Fuji Rune", "Everest rum") is that room.

How sure a match is decides what may be done with it (`RoomMatch.sure`): a name or alias said exactly, or spelled
nearly so, is booked (a near miss is listed in the command's assumptions); a room found only by sound, or by a
distant spelling, is proposed ("Did you mean Fuji?") and never booked on its own. A request that names two rooms
(`RoomDirectory.resolve`) keeps the one said exactly and never lets a match by sound override it.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from enum import StrEnum
from pathlib import Path

from assistant.errors import ConfigError
from assistant.language.patterns import every_language
from assistant.language.profile import Language
from assistant.language.registry import language_of

__all__ = ["Room", "RoomMatch", "RoomDirectory", "RoomReading", "MatchKind", "MIN_SIMILARITY", "SURE_SIMILARITY"]

MIN_SIMILARITY = 0.75
SURE_SIMILARITY = 0.8  # a spelling at least this close is booked; "Denally" (0.77) for Denali is asked about
_LONGEST_NAME = 3  # words: "mount fuji", "the big room"


class MatchKind(StrEnum):
    EXACT = "exact"  # the name or an alias, as written in the directory
    NAMED = "named"  # a name or alias among other words: "Fuji Rune", "珠峰那间"
    SPELLED = "spelled"  # a near spelling: "Everist", "Mattahorn"
    SOUND = "sound"  # only the sound matches: "Dinally", "buck" (BK, as "big" of "the big room")
# the words said around a room's name, in every language ("the Everest room", "珠峰会议室")
_NOISE = re.compile(every_language(lambda language: language.rooms.noise))


@dataclass(frozen=True)
class Room:
    name: str
    aliases: tuple[str, ...]
    seats: int
    calendar: str = ""  # the CalDAV store's calendar for this room: a URL, or a path under [store] url

    @property
    def key(self) -> str:
        """How commands name the room: lower case."""
        return self.name.lower()


@dataclass(frozen=True)
class RoomMatch:
    room: Room
    similarity: float  # 1.0: exact name or alias
    said: str
    kind: MatchKind = MatchKind.EXACT

    @property
    def named(self) -> bool:
        """The room's name or alias was said (alone or among other words)."""
        return self.kind in (MatchKind.EXACT, MatchKind.NAMED)

    @property
    def sure(self) -> bool:
        """May be booked without asking: named, or spelled nearly right."""
        return self.named or (self.kind is MatchKind.SPELLED and self.similarity >= SURE_SIMILARITY)


@dataclass(frozen=True)
class RoomReading:
    """What the room spans of one request say: the room meant, or a room said that is not in the directory, or
    two rooms that the request names (asked which, never guessed)."""

    match: RoomMatch | None = None
    unknown: str | None = None
    rivals: tuple[Room, ...] = ()


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
        # per language, the sound key of each name written in it: made on first use (pinyin loads only then), once
        self._sounds: dict[str, list[tuple[str, Room]]] = {}

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
                                  int(entry["seats"]), str(entry.get("calendar", ""))))
            except (KeyError, TypeError, ValueError) as exc:
                raise ConfigError(f"room directory {path}: room #{i + 1} needs a name and seats ({exc})") from exc
        return cls(rooms)

    def spoken_name(self, language: Language) -> Callable[[str], str]:
        """A room's key -> its name as `language` says it: an alias in the language's script ("珠峰"), else its
        name."""
        names = {room.key: next((a for a in room.aliases if language.written_in(a)), room.name)
                 for room in self.rooms}
        return lambda key: names.get(key, key)

    def match(self, said: str) -> RoomMatch | None:
        """The room meant by what was said, or None when nothing is close enough."""
        squashed = _squash(said)
        if not squashed:
            return None
        best: RoomMatch | None = None
        for form, room in self._forms:
            if form == squashed:
                return RoomMatch(room, 1.0, said)
            similarity = SequenceMatcher(None, squashed, form).ratio()
            if best is None or similarity > best.similarity:
                best = RoomMatch(room, similarity, said, MatchKind.SPELLED)
        named = self._named_among(said, squashed)
        if len(named) == 1:
            return RoomMatch(named[0], 1.0, said, MatchKind.NAMED)
        if named:
            return None  # "Fuji Denali": two rooms, not a near spelling of either
        if best is not None and best.similarity >= MIN_SIMILARITY:
            return best
        return self._by_sound(squashed, said, best.similarity if best else 0.0)

    def resolve(self, saids: Sequence[str]) -> RoomReading:
        """The room meant by every room span of one request. A room named exactly wins over any match by spelling
        or sound ("can you buck, Denali": "buck" sounds like Olympus's "big room", Denali was said); two spans
        that name different rooms the same way are two rooms, asked about."""
        matches = [m for m in (self.match(said) for said in saids) if m is not None]
        together = [room for said in saids for room in self._named_among(said, _squash(said))]
        named = [m for m in matches if m.named]
        chosen = named or matches
        rooms = tuple(dict.fromkeys([*(m.room for m in chosen), *together]))
        if not rooms:
            return RoomReading(unknown=saids[0]) if saids else RoomReading()
        if len(rooms) > 1:
            return RoomReading(rivals=rooms)
        return RoomReading(match=chosen[0])

    def _named_among(self, said: str, squashed: str) -> list[Room]:
        """The rooms whose name or alias is said among other words ("Fuji Rune", "the Everest rum", "珠峰那边"),
        in directory order."""
        language = language_of(squashed)
        if not language.rooms.spaced:  # a name is a run of characters of its own script
            found = {room.key for form, room in self._forms if language.written_in(form) and form in squashed}
        else:
            words = _NOISE.sub(" ", said.lower()).split()
            runs = {"".join(words[i:j]) for i in range(len(words))
                    for j in range(i + 1, min(i + _LONGEST_NAME, len(words)) + 1)}
            found = {room.key for form, room in self._forms if form in runs}
        return [room for room in self.rooms if room.key in found]

    def _by_sound(self, squashed: str, said: str, spelled: float) -> RoomMatch | None:
        """By the sound of the names written in the language of what was heard (Metaphone codes, pinyin)."""
        language = language_of(squashed)
        sounds = language.rooms
        heard = sounds.sound_key(squashed)
        if len(heard) < sounds.sound_min_length:
            return None
        if language.code not in self._sounds:
            self._sounds[language.code] = [(sounds.sound_key(form), room) for form, room in self._forms
                                           if language_of(form) is language]
        scored = [(SequenceMatcher(None, heard, key).ratio(), room) for key, room in self._sounds[language.code]]
        return self._unrivalled(scored, sounds.sound_least, said, spelled) if scored else None

    @staticmethod
    def _unrivalled(scored: list[tuple[float, Room]], least: float, said: str, spelled: float) -> RoomMatch | None:
        sound, room = max(scored, key=lambda pair: pair[0])
        rivals = {r.key for s, r in scored if s == sound}
        if sound < least or len(rivals) > 1:
            return None  # not close enough, or two rooms sound alike: asked, not guessed
        return RoomMatch(room, min(spelled, 0.99), said, MatchKind.SOUND)

    def smallest_fitting(self, people: int, candidates: Iterable[str] | None = None) -> Room | None:
        """The smallest room (by seats) with room for `people`, among candidate keys (default: all)."""
        allowed = None if candidates is None else set(candidates)
        fitting = [r for r in self.rooms if r.seats >= people and (allowed is None or r.key in allowed)]
        return min(fitting, key=lambda r: (r.seats, r.name)) if fitting else None
