"""A third language touches only its own package and one registry line (issue 43), shown with a small test
language: Greek, in a copy of the source with `assistant/language/el/` added and `registry.py`'s list of
languages extended, nothing else changed. In that copy a session may start in Greek, a Greek request is routed
and answered in Greek, a Greek "yes" accepts a proposal, and the language seam's checks still pass.

(Its training data, the third thing a real language brings, is not needed here: no model is trained; the values
are read by the English readers it borrows.)"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

GREEK_PROFILE = '''
"""A test language: Greek words around values read as English reads them."""

import re

from assistant.language.en.clock import parse_clock
from assistant.language.en.dates import parse_date
from assistant.language.en.durations import parse_duration
from assistant.language.en.numbers import parse_count
from assistant.language.en.replies import REPLIES
from assistant.language.profile import DialogueWords, Language, ModelRecipe, RoomWords, WordProfile

GREEK = Language(
    code="el", name="Greek", script=re.compile("[\\u0370-\\u03ff]"),
    words=WordProfile(re.compile(r"\\w+"), frozenset({"και", "για"})),
    dialogue=DialogueWords(yes=r"^(ναι|εντάξει)\\b", no=r"^(όχι)\\b", undo=r"^(αναίρεση)\\W*$",
                           correction=r"^\\W*(?:μάλλον)", correction_inside=r"[,.;]\\s+(?=μάλλον)",
                           fragment_joins=r"\\b(και|για|στις)\\b|[\\s,.]"),
    rooms=RoomWords(noise=r"\\b(αίθουσα)\\b", any_room=r"\\bμια αίθουσα\\b", spaced=True, sound_key=str.lower,
                    sound_least=0.9, sound_min_length=3),
    replies={key: f"[el] {text}" for key, text in REPLIES.items()},
    list_separator=", ", sentence_gap=" ", units_per_second=6.0,
    read_date=parse_date, read_clock=parse_clock, read_duration=parse_duration, read_count=parse_count,
    clock_words=lambda moment: moment.strftime("%H:%M"), date_words=lambda moment: moment.strftime("%d/%m"),
    span_words=lambda start, end: f"{start:%d/%m %H:%M}-{end:%H:%M}",
    model=ModelRecipe(encoder="multilingual-e5", data="models.datagen.el_generator"),
    hotwords=lambda rooms: "",
)
'''

# run in the copy: a Greek session, a Greek request answered in Greek, a Greek "yes"
SCENARIO = '''
import json, tempfile
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from assistant.booking.dialogue import Dialogue
from assistant.booking.dispatcher import Dispatcher
from assistant.booking.results import Clarify, Command
from assistant.booking.rooms import RoomDirectory
from assistant.booking.sqlite_store import SqliteStore
from assistant.config import DEFAULT_CONFIG
from assistant.domain import Intent, Slot
from assistant.events import decode_client
from assistant.language.registry import CODES, SESSION_LANGUAGES, get, language_of

greek = get("el")
start = decode_client(json.dumps({"type": "start", "protocol": 1, "sample_rate": 16000, "language": "el"}))
assert start.heard_in() is greek and "el" in SESSION_LANGUAGES and CODES[-1] == "el"
assert language_of("κλείσε την Everest αύριο στις 9") is greek

rooms = RoomDirectory.load(DEFAULT_CONFIG.parent / "rooms.toml")
with tempfile.TemporaryDirectory() as folder:
    store = SqliteStore(Path(folder) / "b.sqlite")
    dialogue = Dialogue(Dispatcher(store, rooms), rooms)
    now = datetime(2026, 12, 2, 10, 0, tzinfo=ZoneInfo("Europe/Athens"))
    slots = [(Slot.ROOM, "everest"), (Slot.DATE, "tomorrow"), (Slot.START_TIME, "9"), (Slot.DURATION, "an hour")]
    asked = dialogue.turn("c1", "κλείσε την Everest tomorrow at 9 for an hour", Intent.BOOK_MEETING, slots, now,
                          commit=True, unsure=True)
    assert isinstance(asked, Clarify) and asked.question.startswith("[el] "), asked
    booked = dialogue.turn("c1", "ναι", Intent.OUT_OF_SCOPE, [], now, commit=True)
    assert isinstance(booked, Command) and booked.committed and booked.room == "everest", booked
    store.close()
print("ok")
'''


def _copy_with_greek(tmp: Path) -> Path:
    tree = tmp / "tree"
    ignore = shutil.ignore_patterns("__pycache__", "shipped", "*.onnx")
    for part in ("assistant", "engines", "models", "configs"):
        shutil.copytree(REPO / part, tree / part, ignore=ignore)
    (tree / "tests").mkdir()
    shutil.copy(REPO / "tests" / "test_language_seam.py", tree / "tests")
    package = tree / "assistant" / "language" / "el"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "profile.py").write_text(textwrap.dedent(GREEK_PROFILE))
    registry = tree / "assistant" / "language" / "registry.py"
    text = registry.read_text()
    line = "LANGUAGES: tuple[Language, ...] = (ENGLISH, CHINESE)"
    assert text.count(line) == 1
    # the one registry line (its import beside it)
    registry.write_text(text.replace(line, "from assistant.language.el.profile import GREEK  # noqa: E402\n"
                                           "LANGUAGES: tuple[Language, ...] = (ENGLISH, CHINESE, GREEK)"))
    return tree


def test_a_third_language_needs_only_its_package_and_the_registry_line(tmp_path: Path) -> None:
    tree = _copy_with_greek(tmp_path)
    ran = subprocess.run([sys.executable, "-c", SCENARIO], cwd=tree, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0 and ran.stdout.strip() == "ok", ran.stderr[-3000:]
    seam = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                           "tests/test_language_seam.py"], cwd=tree, capture_output=True, text=True, timeout=300)
    assert seam.returncode == 0, seam.stdout[-3000:]
