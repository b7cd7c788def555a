"""Every installed backend gives the same answers as PyTorch on the dev utterances (contract test)."""

import numpy as np
import pytest

from assistant.nlu.decode import decode_in_batches
from assistant.nlu.model_folder import NLUModel
from assistant.nlu.tokenizer import WordPieceTokenizer
from engines.base import BackendOptions
from engines.registry import create_backend
from models.datagen.splits import GeneratorConfig, generate_splits


@pytest.fixture(scope="module")
def dev_texts() -> list[str]:
    _, dev = generate_splits(GeneratorConfig(train_size=0, dev_size=200))
    return [e.text for e in dev]


def test_onnx_fp32_matches_torch_logits(meeting_model: NLUModel, dev_texts: list[str]) -> None:
    tokenizer = WordPieceTokenizer(meeting_model.tokenizer_file)
    batch = tokenizer.batch(tokenizer.tokenize(dev_texts[:32]))
    onnx = create_backend("onnxruntime", meeting_model.files, BackendOptions("fp32"))
    torch_backend = create_backend("torch-eager", meeting_model.files, BackendOptions("fp32"))
    o_intent, o_slots = onnx.run(batch.input_ids, batch.attention_mask)
    t_intent, t_slots = torch_backend.run(batch.input_ids, batch.attention_mask)
    real = batch.attention_mask.astype(bool)
    assert np.abs(o_intent - t_intent).max() < 1e-3
    assert np.abs(o_slots[real] - t_slots[real]).max() < 1e-3
    assert meeting_model.manifest["onnx_vs_torch_max_abs_diff"] < 1e-3


@pytest.mark.parametrize("spec", ["onnxruntime:fp32", "onnxruntime:auto"])
def test_same_intents_and_slots_as_torch(meeting_model: NLUModel, dev_texts: list[str], spec: str) -> None:
    name, precision = spec.split(":")
    tokenizer = WordPieceTokenizer(meeting_model.tokenizer_file)
    items = tokenizer.tokenize(dev_texts)
    reference = decode_in_batches(create_backend("torch-eager", meeting_model.files, BackendOptions()).run,
                                  items, tokenizer, meeting_model.labels)
    backend = create_backend(name, meeting_model.files, BackendOptions(precision))
    got = decode_in_batches(backend.run, items, tokenizer, meeting_model.labels)
    same = sum(a.intent == b.intent and a.word_tags == b.word_tags for a, b in zip(reference, got, strict=True))
    # FP32 must agree everywhere; INT8 (when kept by the accuracy gate, which holds its dev scores within 0.5
    # points of FP32's) may flip a rare borderline word: 8 of these 210 on the model of 2026-12-07.
    needed = len(items) if backend.info().precision == "fp32" else int(0.95 * len(items))
    assert same >= needed, f"{backend.info().describe()}: {same}/{len(items)} identical"


def test_manifest_records_dev_scores_above_the_bar(meeting_model: NLUModel) -> None:
    dev = meeting_model.manifest["dev"]["onnx_fp32"]
    # The dev split holds out whole templates, so its difficulty moves with the template list. On the split of
    # 2026-12-03 (held out: "are the gym open {date} at {time}", "what's on tv {date}", fragments), the model
    # before that day's data scored 96.24 / 95.54 and the model trained on it 97.33 / 97.85 (README).
    # Trained with the heard corpus too (issue 41), typed text's intent moved 97.19 -> 96.71 (10 of 2,100, mostly
    # "who has Everest at noon" read as a bookings list) while recognizer text of the same held-out templates
    # gained 6 points of slot F1 (test_heard_corpus): the bar is the typed text's floor, the gain is held there.
    assert dev["intent_accuracy"] >= 96.5
    assert dev["slot_f1"] >= 97.0
    if meeting_model.manifest["int8_kept"]:
        int8 = meeting_model.manifest["dev"]["onnx_int8"]
        assert dev["intent_accuracy"] - int8["intent_accuracy"] <= 0.5
        assert dev["slot_f1"] - int8["slot_f1"] <= 0.5
