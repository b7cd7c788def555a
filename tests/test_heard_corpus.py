"""The heard corpus (models/heard): the stored file is what its builder makes, a small slice of the pipeline runs
for real (espeak-ng renders, the real tiny.en and Moonshine decode, the slots are aligned), no voice kept for
evaluation is ever drawn, and the model's manifest says what it was trained on. Hours of audio are not
synthesized here: the file is built once with `make corpus` and kept in the repository."""

from __future__ import annotations

import random
import shutil

import pytest

from assistant.config import Settings
from assistant.language.registry import LANGUAGES
from assistant.nlu.model_folder import NLUModel
from models.example import Example
from models.heard.acoustics import Acoustics
from models.heard.align import align
from models.heard.build import hear, product_recognizers
from models.heard.corpus import corpus_path, heard_examples, read_corpus
from models.heard.voices import HELD_OUT_ESPEAK, training_voices

EVALUATION_ONLY = ("flite", "festival")


@pytest.fixture(scope="module")
def stored() -> tuple[dict[str, object], list[object]]:
    header, rows = read_corpus(corpus_path("en"))
    return header, rows


def test_the_stored_corpus_says_what_made_it(stored: tuple[dict[str, object], list[object]]) -> None:
    header, rows = stored
    assert header["language"] == "en" and header["rows"] == len(rows) > 1000
    assert set(header["recognizers"]) == {"whisper tiny.en int8", "moonshine tiny"}  # type: ignore[arg-type]
    assert {"espeak-ng:en-gb", "piper:en_US-joe-medium", "hibari:heart"} <= set(header["voices"])  # type: ignore
    assert header["requests"] * 2 == header["decoded"] == header["rows"] + sum(header["dropped"].values())  # type: ignore


def test_no_voice_kept_for_evaluation_is_in_the_corpus(stored: tuple[dict[str, object], list[object]]) -> None:
    _, rows = stored
    for row in rows:
        engine, _, voice = row.voice.partition(":")  # type: ignore[attr-defined]
        assert engine not in EVALUATION_ONLY
        accent, _, variant = voice.partition("+")
        assert accent not in HELD_OUT_ESPEAK and variant not in HELD_OUT_ESPEAK, row


def test_no_draw_of_the_training_voices_is_a_held_out_one() -> None:
    rng = random.Random(0)
    for language in (language.code for language in LANGUAGES if language.model.voices):
        for _ in range(2000):
            voice = training_voices(language, rng)  # raises on a held-out voice
            assert voice.engine not in EVALUATION_ONLY


def test_every_stored_row_is_its_request_aligned_again(stored: tuple[dict[str, object], list[object]]) -> None:
    _, rows = stored
    for row in rows:
        heard = row.example  # type: ignore[attr-defined]
        assert align(row.said, heard.text) == heard, row  # type: ignore[attr-defined]
        for start, end, _ in heard.spans:
            assert 0 <= start < end <= len(heard.text) and heard.text[start:end].strip()


def test_training_reads_the_train_rows_and_keeps_dev_apart(stored: tuple[dict[str, object], list[object]]) -> None:
    _, rows = stored
    train, dev = heard_examples("en"), heard_examples("en", "dev")
    assert len(train) + len(dev) == len(rows) and dev
    # held-out templates stay held out (junk text, no template of a request, goes to both splits by design)
    assert not ({e.template for e in train} & {e.template for e in dev}) - {"junk"}


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng (Debian) renders the slice: make test "
                                                               "installs it")
def test_a_slice_of_the_pipeline_renders_decodes_and_aligns(settings: Settings) -> None:
    said = [("train", Example("book everest tomorrow at nine for an hour", "book_meeting",
                              ((5, 12, "room"), (13, 21, "date"), (25, 29, "start_time"), (30, 41, "duration")))),
            ("dev", Example("cancel my meeting in denali on friday", "cancel_meeting",
                            ((21, 27, "room"), (31, 37, "date"))))]
    recognizers = product_recognizers("en", settings.cache_dir, settings.rooms_file)
    seen: list[tuple[int, int]] = []
    rows, dropped = hear(said, recognizers, "en", seed=1, progress=lambda done, total: seen.append((done, total)),
                         engines=("espeak-ng",),  # piper and hibari are the corpus's own install (make corpus)
                         draw_room=lambda _: Acoustics(None, None, None, 0))  # dry: the words must be heard
    assert len(rows) + sum(dropped.values()) == 4 and seen == [(2, 2)]
    assert {row.recognizer for row in rows} <= set(recognizers) and rows
    for row in rows:
        names = [name for _, _, name in row.example.spans]
        assert names == [name for _, _, name in sorted(row.said.spans)], row  # every slot found in what was heard
        assert row.example.intent == row.said.intent and row.voice.startswith("espeak-ng:")


def test_the_model_says_what_it_was_trained_on(meeting_model: NLUModel) -> None:
    heard = meeting_model.manifest["heard"]
    assert heard is not None and heard["sha256"] and heard["recognizers"] and heard["voices"]
    assert meeting_model.manifest["heard_train_requests"] == heard["rows_by_split"]["train"]
    assert meeting_model.manifest["heard_dev"]["requests"] == heard["rows_by_split"]["dev"]


def test_the_model_reads_what_recognizers_write_of_templates_it_never_saw(meeting_model: NLUModel) -> None:
    heard_dev = meeting_model.manifest["heard_dev"]  # the served file on the 114 dev rows: held-out templates
    # The model trained on clean text alone scored slot F1 79.12 and sentence 61.40 % here; the model trained
    # with the heard corpus 85.02 and 67.54 % (docs/nlu.md#heard). The bar sits between them.
    assert heard_dev["slot_f1"] >= 82.0 and heard_dev["sentence_accuracy"] >= 64.0, heard_dev
