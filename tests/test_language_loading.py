"""Nothing waits on a language it does not need (issue 42): a command that parses loads English at once, another
language on its first text when its model is built, and refuses that language's texts with a way to build it
when it is not. The models are the real ones, found in a cache that holds only what each test puts there."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from assistant.config import Settings
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
    mine = replace(settings, cache_dir=cache, nlu=replace(settings.nlu, languages=["en", "zh"]))
    parser = build_language_parser(mine)
    assert isinstance(parser, LanguageRoutedParser) and parser.parsers["zh"] is None
    english, chinese = parser.parse_many(["book everest tomorrow at 9", "帮我订明天上午九点的会议室"])
    assert isinstance(english, Understanding) and english.intent == "book_meeting"
    assert isinstance(chinese, ParseFailure) and chinese.code == "language_unavailable"
    assert "assistant train --language zh" in chinese.message  # how to get it, never a silent wait
    assert not (cache / "nlu" / "zh-build.log").exists()  # nothing was built to parse English

    (cache / "nlu" / chinese_model.folder.name).symlink_to(chinese_model.folder)  # built meanwhile
    again = parser.parse("帮我订明天上午九点的会议室")
    assert isinstance(again, Understanding) and again.intent == "book_meeting"  # loaded on its first text
    assert parser.parsers["zh"] is not None


def test_parse_answers_english_from_the_cache_and_never_loads_the_trainer(meeting_model: NLUModel,
                                                                         tmp_path: Path) -> None:
    cache = _cache_with(tmp_path / "cache", meeting_model)
    probe = ("import json, sys; from assistant.cli import main; code = main(['parse', '--set', "
             f"'paths.cache_dir={json.dumps(str(cache))}', 'book everest tomorrow at 9']); "
             "print(json.dumps({'code': code, 'trainer': sorted(m for m in ('torch', 'transformers') if m in "
             "sys.modules)}))")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=ROOT)
    lines = run.stdout.strip().splitlines()
    assert run.returncode == 0, run.stderr
    answer, verdict = json.loads(lines[0]), json.loads(lines[-1])
    assert answer["intent"] == "book_meeting" and verdict == {"code": 0, "trainer": []}, run.stderr
