"""Nothing waits on a language it does not need (issue 42): a command that parses loads English at once, another
language on its first text when its model is built, and refuses that language's texts with a way to build it
when it is not. The models are the real ones, found in a cache that holds only what each test puts there."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

from assistant.cache import locked
from assistant.config import Settings
from assistant.language.registry import get
from assistant.nlu.model_folder import NLUModel
from assistant.nlu.parser import ParseFailure, Understanding
from assistant.nlu.routing import LanguageRoutedParser
from assistant.wiring import build_language_parser

ROOT = Path(__file__).resolve().parents[1]


def _cache_with(tmp_path: Path, *models: NLUModel) -> Path:
    (tmp_path / "nlu").mkdir(parents=True)
    for model in models:  # the cached folder under its key, as a build leaves it
        (tmp_path / "nlu" / model.folder.name).symlink_to(model.folder)
    return tmp_path


def test_english_text_is_parsed_while_chinese_is_not_built(settings: Settings, meeting_model: NLUModel,
                                                           chinese_model: NLUModel, tmp_path: Path) -> None:
    cache = _cache_with(tmp_path / "cache", meeting_model)
    mine = replace(settings, cache_dir=cache, models_dir=tmp_path / "nothing shipped",
                   nlu=replace(settings.nlu, languages=["en", "zh"]))
    parser = build_language_parser(mine)
    assert isinstance(parser, LanguageRoutedParser) and parser.parsers[get("zh")] is None
    english, chinese = parser.parse_many(["book everest tomorrow at 9", "帮我订明天上午九点的会议室"])
    assert isinstance(english, Understanding) and english.intent == "book_meeting"
    assert isinstance(chinese, ParseFailure) and chinese.code == "language_unavailable"
    assert "assistant train --language zh" in chinese.message  # how to get it, never a silent wait
    assert not (cache / "nlu" / "zh-build.log").exists()  # nothing was built to parse English

    (cache / "nlu" / chinese_model.folder.name).symlink_to(chinese_model.folder)  # built meanwhile
    again = parser.parse("帮我订明天上午九点的会议室")
    assert isinstance(again, Understanding) and again.intent == "book_meeting"  # loaded on its first text
    assert parser.parsers[get("zh")] is not None


def test_parse_answers_english_from_the_cache_and_never_loads_the_trainer(meeting_model: NLUModel,
                                                                         tmp_path: Path) -> None:
    cache = _cache_with(tmp_path / "cache", meeting_model)
    probe = ("import json, sys; from assistant.cli import main; code = main(['parse', '--set', "
             f"'paths.cache_dir={json.dumps(str(cache))}', '--set', 'paths.models={json.dumps(str(tmp_path))}', "
             "'book everest tomorrow at 9']); "
             "print(json.dumps({'code': code, 'trainer': sorted(m for m in ('torch', 'transformers') if m in "
             "sys.modules)}))")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=ROOT)
    lines = run.stdout.strip().splitlines()
    assert run.returncode == 0, run.stderr
    answer, verdict = json.loads(lines[0]), json.loads(lines[-1])
    assert answer["intent"] == "book_meeting" and verdict == {"code": 0, "trainer": []}, run.stderr


def test_a_build_that_waits_on_another_says_so_and_takes_what_that_one_built(meeting_model: NLUModel,
                                                                            tmp_path: Path) -> None:
    from models.model_cache import ensure_language_model

    cache = _cache_with(tmp_path / "cache")
    key = meeting_model.folder.name
    holding, release = threading.Event(), threading.Event()

    def other_build() -> None:  # another process building the same model: it holds the lock, then leaves it
        with locked(cache / "nlu" / f"{key}.lock"):
            holding.set()
            release.wait(10)
            (cache / "nlu" / key).symlink_to(meeting_model.folder)

    other = threading.Thread(target=other_build)
    other.start()
    holding.wait(5)
    told: list[str] = []
    found: list[NLUModel] = []
    waiter = threading.Thread(target=lambda: found.append(
        ensure_language_model(cache, "en", progress=lambda stage, done: told.append(stage))))
    waiter.start()
    while not told:  # said before it waits, while the other build still holds the lock
        threading.Event().wait(0.01)
    assert told == ["waiting for another process that is building it"] and not found
    release.set()
    other.join()
    waiter.join(30)
    assert [model.folder.name for model in found] == [key]  # the other build's model, not a second training
