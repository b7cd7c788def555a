"""The whole recipe for the meeting NLU model: generate data -> train -> export ONNX -> check parity ->
quantize INT8 (kept only if accurate enough) -> write the artifact folder with a manifest of what was measured."""

from __future__ import annotations

import json
import platform
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import torch
import transformers
from safetensors.torch import save_file

from assistant.domain import INTENTS, SLOT_NAMES, bio_labels
from assistant.language.registry import get
from assistant.language.script import HAN, HAN_COMPATIBILITY
from assistant.nlu.labels import LabelSet
from assistant.nlu.tokenizer import WordPieceTokenizer
from engines.base import BackendOptions, JointModelFiles
from engines.onnxruntime import OnnxRuntimeBackend
from models.accuracy_gate import MAX_DROP_POINTS, accepted, drops
from models.datagen.splits import GeneratorConfig, generate_splits
from models.encoder import encoder_dir
from models.encoders import ENCODERS
from models.example import Example
from models.export import export_onnx, max_abs_difference
from models.heard.corpus import corpus_summary, heard_examples
from models.quantize import (
    MAX_FLOAT_LAYERS,
    TABLE_FORMATS,
    most_changing_layers,
    quantize_int8,
    quantize_word_embeddings,
)
from models.reproducible import BUILD_THREADS
from models.train import Feature, evaluate, featurize, torch_runner, train_joint_model
from models.train_config import TrainConfig
from models.vocabulary import VocabularyTrim, kept_pieces, trim_encoder_folder

__all__ = ["build_meeting_nlu", "chinese_characters_apart", "MAX_PARITY_DIFF", "Progress", "STAGES"]

# What a build tells whoever waits for it: (stage, fraction of the whole build done). The shares are about those
# of the stages' time on 2 cores (each manifest's stage_seconds; docs/multilingual.md).
Progress = Callable[[str, float], None]
STAGES = {"generating": (0.0, 0.01), "training": (0.01, 0.97), "checking": (0.97, 1.0)}
_SENSITIVITY_REQUESTS = 400

MAX_PARITY_DIFF = 1e-3  # ONNX Runtime vs PyTorch, logits; beyond this the export is wrong, not rounding


def _say(message: str) -> None:
    # stderr: standard output belongs to the command that asked for the model (JSON lines).
    print(f"[nlu] {message}", file=sys.stderr, flush=True)


def chinese_characters_apart(tokenizer_json: dict[str, Any]) -> dict[str, Any]:
    """The XLM-R tokenizer with every Chinese character, run of digits and punctuation mark a word of its own.

    SentencePiece's pieces cross slot boundaries where no space is: 今天的, 日下午, 人的, 礼拜二十点 cut as
    礼拜|二十|点, and in mixed text "Everest8", "20-", "Kilimanjaro。". In generated Chinese requests one in
    eleven had a slot that no run of pieces spelled exactly, so no tag sequence could give it. Split first (as
    BERT-Chinese reads Chinese, one character a token; every one is in the vocabulary), every slot is a run of
    whole pieces; English words are cut as before."""
    out = dict(tokenizer_json)
    metaspace = dict(tokenizer_json["pre_tokenizer"], prepend_scheme="first")  # "▁" only where a space was
    cjk = {"type": "Split", "pattern": {"Regex": f"[{HAN}{HAN_COMPATIBILITY}]"},
           "behavior": "Isolated", "invert": False}
    digits = {"type": "Digits", "individual_digits": False}
    punctuation = {"type": "Punctuation", "behavior": "Isolated"}
    out["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [cjk, digits, punctuation, metaspace]}
    return out


def _reporter(progress: Progress | None) -> Callable[[str, float], None]:
    def report(stage: str, done: float) -> None:
        if progress is not None:
            first, last = STAGES[stage]
            progress(stage, first + (last - first) * done)

    return report


def build_meeting_nlu(out_dir: Path, generator: GeneratorConfig, training: TrainConfig, key: str,
                      source: Path | None = None, progress: Progress | None = None) -> None:
    """Write every artifact of the model into out_dir (which must exist and be empty). `source`: the pretrained
    encoder's folder (default: MiniLM's package). `progress`: told each stage and the fraction done."""
    started = time.monotonic()
    report = _reporter(progress)
    report("generating", 0.0)
    torch.set_num_threads(BUILD_THREADS)  # the order of a reduction follows the threads (models/reproducible.py)
    source = source or encoder_dir()
    tokenizer_json = json.loads((source / "tokenizer.json").read_text())
    if get(generator.language).model.characters_apart:
        tokenizer_json = chinese_characters_apart(tokenizer_json)
    labels = LabelSet(INTENTS, tuple(bio_labels(SLOT_NAMES)))
    labels.save(out_dir / "labels.json")

    _say(f"generating {generator.train_size} training and {generator.dev_size} dev requests (seed {generator.seed})")
    train, dev = generate_splits(generator)
    # what the recognizers wrote for requests of the training templates (models/heard): the model learns to read
    # "at 1034", "Booked in Ollie" and "sixteen thirty" as well as typed text
    heard, heard_dev = heard_examples(generator.language), heard_examples(generator.language, "dev")
    if heard:
        _say(f"with {len(heard)} recognized requests of the heard corpus ({len(heard_dev)} more for dev)")
    trimmed = out_dir / "pretrained"  # inside the staging folder: a killed build leaves nothing elsewhere
    trimmed.mkdir()
    try:
        vocabulary = _trimmed_encoder(source, trimmed, tokenizer_json, [e.text for e in train + heard])
        shutil.copy(trimmed / "tokenizer.json", out_dir / "tokenizer.json")
        shutil.copy(trimmed / "config.json", out_dir / "encoder_config.json")
        tokenizer = WordPieceTokenizer(out_dir / "tokenizer.json")
        _train_and_check(out_dir, trimmed, generator, training, key, tokenizer, labels, (train, dev, heard, heard_dev),
                         vocabulary, started, report)
    finally:
        shutil.rmtree(trimmed, ignore_errors=True)


def _trimmed_encoder(source: Path, target: Path, tokenizer_json: dict[str, Any], texts: list[str]) -> VocabularyTrim:
    """The pretrained encoder with its vocabulary trimmed (models/vocabulary.py), written to `target`; checked to
    cut the training text into the very pieces the full vocabulary does."""
    english = None
    if tokenizer_json["model"]["type"] != "WordPiece":  # multilingual: its Latin pieces kept where English words
        english = set(json.loads((encoder_dir() / "tokenizer.json").read_text())["model"]["vocab"])
    keep, trim = kept_pieces(tokenizer_json, texts, english)
    trim_encoder_folder(source, target, tokenizer_json, keep)
    full, cut = WordPieceTokenizer.from_json(tokenizer_json), WordPieceTokenizer(target / "tokenizer.json")
    for before, after in zip(full.tokenize(texts), cut.tokenize(texts), strict=True):
        if [keep[i] for i in after.ids] != before.ids:
            raise RuntimeError("the trimmed vocabulary cuts a training request differently from the full one")
    _say(f"vocabulary trimmed to {trim.kept} of {trim.before} pieces ({trim.from_text} used by the training text)")
    return trim


def _train_and_check(out_dir: Path, source: Path, generator: GeneratorConfig, training: TrainConfig, key: str,
                     tokenizer: WordPieceTokenizer, labels: LabelSet, data: tuple[list[Example], ...],
                     vocabulary: VocabularyTrim, started: float, report: Callable[[str, float], None]) -> None:
    train, dev, heard, heard_dev = data
    seconds: dict[str, float] = {}
    train_features = featurize(train + heard, tokenizer, training.max_tokens)
    dev_features = featurize(dev, tokenizer, training.max_tokens)
    heard_dev_features = featurize(heard_dev, tokenizer, training.max_tokens)
    seconds["generating"] = time.monotonic() - started

    _say(f"training on {len(train_features)} requests, {training.epochs} epochs (CPU)")
    report("training", 0.0)
    model = train_joint_model(source, train_features, tokenizer, labels, training,
                              progress=lambda done: report("training", done))
    seconds["training"] = time.monotonic() - started - seconds["generating"]
    report("checking", 0.0)
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(out_dir / "joint_model.safetensors"))
    torch_scores = evaluate(torch_runner(model), dev_features, tokenizer, labels)
    _say(f"dev (held-out templates), PyTorch: {torch_scores.line()}")

    _say("exporting ONNX (dynamic batch and sequence)")
    export_onnx(model, out_dir / "model.onnx")
    probe = tokenizer.batch([f.item for f in dev_features[:32]])
    parity = max_abs_difference(model, out_dir / "model.onnx", probe.input_ids, probe.attention_mask)
    _say(f"ONNX vs PyTorch max abs difference: {parity:.2e}")
    if parity > MAX_PARITY_DIFF:
        raise RuntimeError(f"ONNX export differs from PyTorch by {parity:.2e} (> {MAX_PARITY_DIFF})")

    files = JointModelFiles(out_dir / "model.onnx", None, out_dir / "joint_model.safetensors",
                            out_dir / "encoder_config.json", len(labels.intents), len(labels.slot_labels))
    fp32_scores = evaluate(OnnxRuntimeBackend(files, BackendOptions("fp32")).run, dev_features, tokenizer, labels)
    int8_scores, int8_ok, float_layers, table_format = _int8(out_dir, files, generator, training, tokenizer,
                                                             labels, dev_features, fp32_scores.as_dict(), report)
    heard_scores = _heard_dev(out_dir, files, int8_ok, heard_dev_features, tokenizer, labels)

    manifest = {
        "key": key,
        "task": "meeting-booking joint intent + slots",
        "language": generator.language,
        "encoder": ENCODERS[get(generator.language).model.encoder].description,
        "generator": asdict(generator),
        "training": asdict(training),
        "train_requests": len(train_features),
        "dev_requests": len(dev_features),
        "vocabulary": vocabulary.as_dict(),
        "dev": {"torch_fp32": torch_scores.as_dict(), "onnx_fp32": fp32_scores.as_dict(),
                "onnx_int8": int8_scores.as_dict()},
        # what it was trained on besides the generated text: voices, recognizers, counts (None: no heard corpus)
        "heard": corpus_summary(generator.language),
        "heard_train_requests": len(heard),
        "heard_dev": heard_scores,
        "int8_kept": int8_ok,
        "int8_float_layers": list(float_layers),
        "int8_word_embeddings": table_format,
        "int8_max_drop_points": MAX_DROP_POINTS,
        "onnx_vs_torch_max_abs_diff": parity,
        "build_seconds": round(time.monotonic() - started, 1),
        "stage_seconds": {**{k: round(v, 1) for k, v in seconds.items()},
                          "checking": round(time.monotonic() - started - sum(seconds.values()), 1)},
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                     "onnxruntime": ort.__version__, "numpy": np.__version__, "python": platform.python_version()},
    }
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2))
    _say(f"done in {manifest['build_seconds']} s")


def _heard_dev(out_dir: Path, files: JointModelFiles, int8_kept: bool, features: list[Feature],
               tokenizer: WordPieceTokenizer, labels: LabelSet) -> dict[str, Any] | None:
    """The served file's scores on recognizer text of held-out templates (the heard corpus's dev rows)."""
    if not features:
        return None
    path = out_dir / ("model.int8.onnx" if int8_kept else "model.onnx")
    served = JointModelFiles(path, path if int8_kept else None, files.torch_weights, files.encoder_config,
                             files.num_intents, files.num_slot_labels)
    scores = evaluate(OnnxRuntimeBackend(served, BackendOptions("int8" if int8_kept else "fp32")).run, features,
                      tokenizer, labels)
    _say(f"heard dev (recognizer text, held-out templates), {path.name}: {scores.line()}")
    return {"file": path.name, "requests": len(features), **scores.as_dict()}


def _int8(out_dir: Path, files: JointModelFiles, generator: GeneratorConfig, training: TrainConfig,
          tokenizer: WordPieceTokenizer, labels: LabelSet, dev_features: list[Feature], fp32: dict[str, Any],
          report: Callable[[str, float], None]) -> tuple[Any, bool, tuple[str, ...], str]:
    """The CPU's INT8 file, gated on dev: all weight products quantized; where that fails the gate, the layers
    whose quantization moves the outputs most on calibration requests kept float, one more at a time; then the
    word embedding table stored as int8 rows, else float16, else float (models/quantize.py). Returns its dev
    scores, whether it was kept, the layers left float and the table's format."""
    fp32_path, int8_path = out_dir / "model.onnx", out_dir / "model.int8.onnx"

    def dev_scores(path: Path) -> Any:
        int8_files = JointModelFiles(path, path, files.torch_weights, files.encoder_config, files.num_intents,
                                     files.num_slot_labels)
        return evaluate(OnnxRuntimeBackend(int8_files, BackendOptions("int8")).run, dev_features, tokenizer, labels)

    _say("quantizing INT8 (dynamic, weight products per channel) and checking it on dev")
    float_layers: tuple[str, ...] = ()
    quantize_int8(fp32_path, int8_path)
    scores = dev_scores(int8_path)
    kept = accepted(drops(fp32, scores.as_dict()))
    _say(f"INT8: {scores.line()} -> {'kept' if kept else 'over the accuracy gate'}")
    if not kept:
        report("checking", 0.3)
        order = most_changing_layers(fp32_path, out_dir / "sensitivity.onnx",
                                     _logit_change(files, generator, training, tokenizer))
        for layer in order[:MAX_FLOAT_LAYERS]:
            float_layers += (layer,)
            quantize_int8(fp32_path, int8_path, float_layers)
            scores = dev_scores(int8_path)
            kept = accepted(drops(fp32, scores.as_dict()))
            _say(f"INT8 with {', '.join(float_layers)} float: {scores.line()} -> "
                 f"{'kept' if kept else 'over the accuracy gate'}")
            if kept:
                break
    if not kept:
        int8_path.unlink()
        return scores, kept, (), "float32"
    body = int8_path.read_bytes()
    for table_format in TABLE_FORMATS:  # the word embeddings stored smaller, where the gate still accepts it
        quantize_word_embeddings(int8_path, table_format)
        smaller = dev_scores(int8_path)
        good = accepted(drops(fp32, smaller.as_dict()))
        _say(f"INT8 with word embeddings as {table_format}: {smaller.line()} -> "
             f"{'kept' if good else 'over the accuracy gate'}")
        if good:
            return smaller, kept, float_layers, table_format
        int8_path.write_bytes(body)
    return scores, kept, float_layers, "float32"


def _logit_change(files: JointModelFiles, generator: GeneratorConfig, training: TrainConfig,
                  tokenizer: WordPieceTokenizer) -> Callable[[Path], float]:
    """How far an INT8 file's outputs move from FP32's on calibration requests: the mean absolute difference of
    the intent and slot logits. A continuous measure: on requests from the training templates FP32 and INT8 give
    the same answers nearly always, so counting changed answers cannot rank the layers."""
    from models.precision_files import calibration_requests

    features = featurize(calibration_requests(generator, _SENSITIVITY_REQUESTS), tokenizer, training.max_tokens)
    batches = [tokenizer.batch([f.item for f in features[i:i + 64]]) for i in range(0, len(features), 64)]
    fp32 = OnnxRuntimeBackend(files, BackendOptions("fp32"))
    reference = [fp32.run(b.input_ids, b.attention_mask) for b in batches]

    def change(path: Path) -> float:
        candidate = OnnxRuntimeBackend(JointModelFiles(path, path, files.torch_weights, files.encoder_config,
                                                       files.num_intents, files.num_slot_labels),
                                       BackendOptions("int8"))
        moved = []
        for batch, (intents, slots) in zip(batches, reference, strict=True):
            got_intents, got_slots = candidate.run(batch.input_ids, batch.attention_mask)
            mask = batch.attention_mask.astype(bool)
            moved += [float(np.abs(got_intents - intents).mean()), float(np.abs(got_slots - slots)[mask].mean())]
        return float(np.mean(moved))

    return change
