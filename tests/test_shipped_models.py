"""The built models ship with the project (issue 42): a fresh clone with an empty cache parses and serves English
and Chinese at once, training nothing; the shipped files are checked against a build by sha256; the recipe's
vocabulary trimming and word-embedding storage change nothing a request's tokens read.

Real models throughout: the shipped folders, the encoder package's own tokenizer, ONNX Runtime."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import onnx.helper
import onnx.numpy_helper
import onnxruntime as ort
import pytest

from assistant.config import Settings
from assistant.nlu.model_folder import NLUModel, load_model
from assistant.nlu.tokenizer import WordPieceTokenizer
from assistant.server.spawn import spawn_server
from assistant.wiring import needs_whole_model
from models.model_cache import SHIPPED, SHIPPED_FILES, cached_model, ship, shipped_differences
from models.quantize import quantize_word_embeddings
from models.vocabulary import kept_pieces, trim_tokenizer

ROOT = Path(__file__).resolve().parents[1]
FOUNDING = "帮我订明天上午九点的会议室"


def _fresh_env(tmp_path: Path) -> dict[str, str]:
    """A new user's machine as far as the project can tell: nothing in the cache, no bookings."""
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_DATA_HOME": str(tmp_path / "data")}


def _built_nlu_folders(cache: Path) -> list[str]:
    nlu = cache / "voice-assistant" / "nlu"
    return sorted(p.name for p in nlu.iterdir()) if nlu.exists() else []


@pytest.mark.parametrize("language", ["en", "zh"])
def test_each_language_ships_what_a_cpu_serves(language: str) -> None:
    model = load_model(SHIPPED / language)
    assert model.manifest["language"] == language and model.manifest["int8_kept"]
    for name in (*SHIPPED_FILES, "manifest.json"):
        assert (SHIPPED / language / name).is_file(), name
    assert not model.files.onnx_fp32.exists() and not model.files.torch_weights.exists()  # the cache's, not ours
    # small enough to live in the repository: the trimmed vocabulary and an int8 embedding table
    assert (SHIPPED / language / "model.int8.onnx").stat().st_size < 45_000_000


def test_a_fresh_clone_parses_both_languages_at_once_and_builds_nothing(tmp_path: Path) -> None:
    env = _fresh_env(tmp_path)
    run = subprocess.run([sys.executable, "-m", "assistant", "parse", "--file", "-", "--now", "2026-12-02T10:00:00",
                          "--tz", "Asia/Shanghai"], input=f"book everest tomorrow at 9 for an hour\n{FOUNDING}\n",
                         capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    assert run.returncode == 0, run.stderr
    english, chinese = (json.loads(line) for line in run.stdout.strip().splitlines())
    assert english["intent"] == "book_meeting", english
    assert {slot["name"]: slot["text"] for slot in english["slots"]}["room"].lower() == "everest", english
    assert chinese["intent"] == "book_meeting" and "result" in chinese, chinese  # read by the Chinese model
    assert {slot["name"] for slot in chinese["slots"]} >= {"date", "start_time"}, chinese
    assert _built_nlu_folders(tmp_path / "cache") == []  # no model built, no build started
    assert "building" not in run.stderr


def test_a_fresh_clone_serves_english_and_chinese_without_training(tmp_path: Path) -> None:
    proc, url = spawn_server(tmp_path / "bookings.sqlite", env=_fresh_env(tmp_path), timeout_s=120)
    try:
        with urllib.request.urlopen(url.replace("ws://", "http://").rstrip("/") + "/healthz", timeout=10) as reply:
            assert reply.read().decode() == "ok\n"  # every language served (spawn_server waited for it)
    finally:
        proc.terminate()
        proc.wait(30)
    built = _built_nlu_folders(tmp_path / "cache")
    assert not any(name.startswith("meeting-") or name.endswith("-build.log") for name in built), built


def test_the_backend_that_reads_more_than_the_int8_file_asks_for_the_whole_build(settings: Settings,
                                                                                  tmp_path: Path) -> None:
    assert not needs_whole_model(settings)  # the default: ONNX Runtime, INT8 when it passed the gate
    for nlu in (replace(settings.nlu, backend="torch-eager"), replace(settings.nlu, precision="fp32")):
        assert needs_whole_model(replace(settings, nlu=nlu))
    empty = tmp_path / "cache"
    found = cached_model(empty, "en")
    assert found is not None and found.folder == SHIPPED / "en"
    assert cached_model(empty, "en", whole=True) is None  # to be built (by `assistant train`), never half-served


def test_the_check_names_each_shipped_file_a_build_differs_in(meeting_model: NLUModel, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = tmp_path / "shipped"
    monkeypatch.setattr("models.model_cache.SHIPPED", shipped)
    assert ship(meeting_model, "en")  # nothing there yet: copied
    assert shipped_differences(meeting_model, "en") == []
    stamp = (shipped / "en" / "model.int8.onnx").stat().st_mtime_ns
    assert not ship(meeting_model, "en")  # the same build again leaves the files untouched
    assert (shipped / "en" / "model.int8.onnx").stat().st_mtime_ns == stamp

    build = tmp_path / "build"
    shutil.copytree(meeting_model.folder, build, symlinks=True)
    labels = json.loads((build / "labels.json").read_text())
    (build / "labels.json").write_text(json.dumps(labels, indent=3))  # another byte, the same meaning
    differing = shipped_differences(load_model(build), "en")
    assert len(differing) == 1 and differing[0].startswith("en/labels.json: built sha256 "), differing


def test_the_current_build_is_what_ships(meeting_model: NLUModel, chinese_model: NLUModel) -> None:
    """The whole builds in the cache (what `assistant train --check` made in CI) carry the shipped files."""
    assert shipped_differences(meeting_model, "en") == []
    assert shipped_differences(chinese_model, "zh") == []


def _encoder_tokenizer() -> dict[str, object]:
    from models.encoder import encoder_dir

    return json.loads((encoder_dir() / "tokenizer.json").read_text())  # type: ignore[no-any-return]


def test_a_trimmed_vocabulary_cuts_the_texts_it_was_trimmed_on_exactly_as_before(tmp_path: Path) -> None:
    full = _encoder_tokenizer()
    texts = ["book everest tomorrow at 9 for an hour", "Cancel my 3.45pm with Kilimanjaro, please!"]
    keep, trim = kept_pieces(full, texts)
    assert trim.before == 30522 and 20000 < trim.kept < trim.before
    (tmp_path / "cut.json").write_text(json.dumps(trim_tokenizer(full, keep)))
    before, after = WordPieceTokenizer.from_json(full), WordPieceTokenizer(tmp_path / "cut.json")
    for was, now in zip(before.tokenize(texts), after.tokenize(texts), strict=True):
        assert [keep[i] for i in now.ids] == was.ids and now.word_spans == was.word_spans
    pieces = {piece for piece, _ in json.loads((tmp_path / "cut.json").read_text())["model"]["vocab"].items()}
    assert "[unused7]" not in pieces and "[UNK]" in pieces and "##q" in pieces
    # a word none of the texts held is still read in pieces the model knows, never as [UNK]
    unknown = json.loads((tmp_path / "cut.json").read_text())["model"]["vocab"]["[UNK]"]
    assert unknown not in after.tokenize(["quarterly zyzzyva review"])[0].ids


def test_the_chinese_model_reads_mixed_text_without_unknown_pieces() -> None:
    tokenizer = WordPieceTokenizer(SHIPPED / "zh" / "tokenizer.json")
    vocabulary = json.loads((SHIPPED / "zh" / "tokenizer.json").read_text())["model"]["vocab"]
    unknown = [piece for piece, _ in vocabulary].index("<unk>")
    for text in (FOUNDING, "明天下午三点 book Everest 开 quarterly review 会议"):
        assert unknown not in tokenizer.tokenize([text])[0].ids, text


def _lookup_model(table: np.ndarray) -> onnx.ModelProto:
    ids = onnx.helper.make_tensor_value_info("input_ids", onnx.TensorProto.INT64, ["b", "s"])
    out = onnx.helper.make_tensor_value_info("vectors", onnx.TensorProto.FLOAT, ["b", "s", table.shape[1]])
    node = onnx.helper.make_node("Gather", ["encoder.embeddings.word_embeddings.weight", "input_ids"], ["vectors"],
                                 name="/encoder/embeddings/word_embeddings/Gather")
    graph = onnx.helper.make_graph([node], "lookup", [ids], [out],
                                   [onnx.numpy_helper.from_array(table, "encoder.embeddings.word_embeddings.weight")])
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])


@pytest.mark.parametrize("table_format", ["int8", "float16"])
def test_the_embedding_table_stored_smaller_gives_each_token_its_vector(table_format: str, tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    table = (rng.standard_normal((500, 32)) * rng.uniform(0.01, 1.0, (500, 1))).astype(np.float32)  # rows apart
    path = tmp_path / "lookup.onnx"
    onnx.save(_lookup_model(table), str(path))
    quantize_word_embeddings(path, table_format)
    stored = onnx.load(str(path))
    assert {init.data_type for init in stored.graph.initializer if init.name.endswith(table_format)} == {
        onnx.TensorProto.INT8 if table_format == "int8" else onnx.TensorProto.FLOAT16}
    ids = np.array([[0, 7, 499, 7]], dtype=np.int64)
    got = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"input_ids": ids})[0]
    want = table[ids]
    row_scale = np.abs(want).max(axis=-1, keepdims=True)
    bound = 0.5 / 127 if table_format == "int8" else 2.0 ** -11
    assert np.all(np.abs(got - want) <= row_scale * bound + 1e-7)  # each row to its own scale, small rows too
    assert path.stat().st_size < table.nbytes * (0.3 if table_format == "int8" else 0.55)


def test_the_model_files_bench_reports_what_a_served_folder_costs(tmp_path: Path) -> None:
    from assistant.bench.model_files import ModelFilesOptions, run_model_files_bench

    out = tmp_path / "files.json"
    assert run_model_files_bench(ModelFilesOptions({"en": SHIPPED / "en"}, samples=1, requests=3, json=out)) == 0
    entry = json.loads(out.read_text())["folders"]["en"]
    assert entry["served_file"] == "model.int8.onnx" and 0 < entry["served_mb"] < 45
    assert entry["vocabulary"] == load_model(SHIPPED / "en").manifest["vocabulary"]["kept"]
    assert entry["load_s_median"] > 0 and entry["rss_added_mb_median"] > 0 and entry["latency_ms_p50"] > 0
