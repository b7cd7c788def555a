"""Train the joint intent + slot model on labelled examples (CPU, seeded, with a progress bar)."""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from numpy.typing import NDArray
from tqdm import tqdm

from assistant.nlu.bio import char_spans_to_tags
from assistant.nlu.decode import RunFn, decode_in_batches
from assistant.nlu.labels import LabelSet
from assistant.nlu.tokenizer import TokenizedText, WordPieceTokenizer
from engines.base import Logits
from engines.torch_joint import JointIntentSlotModel
from models.example import Example
from models.metrics import Scores, score
from models.train_config import TrainConfig

__all__ = ["TrainConfig", "Feature", "featurize", "train_joint_model", "deterministic_kernels", "evaluate",
           "torch_runner"]

IGNORE = -100  # loss ignores non-first sub-tokens, [CLS], [SEP] and padding


@dataclass(frozen=True)
class Feature:
    item: TokenizedText
    intent: str  # gold, as written in the data
    tags: list[str]  # gold word tags


def featurize(examples: Sequence[Example], tokenizer: WordPieceTokenizer, max_tokens: int) -> list[Feature]:
    items = tokenizer.tokenize([e.text for e in examples])
    return [
        Feature(item, ex.intent, char_spans_to_tags(item.word_spans, ex.spans))
        for ex, item in zip(examples, items, strict=True)
        if item.num_tokens <= max_tokens
    ]


def _tensors(batch: Sequence[Feature], tokenizer: WordPieceTokenizer, labels: LabelSet
             ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    padded = tokenizer.batch([f.item for f in batch])
    slot_index = {tag: i for i, tag in enumerate(labels.slot_labels)}
    intent_index = {intent: i for i, intent in enumerate(labels.intents)}
    slot_targets = np.full(padded.input_ids.shape, IGNORE, dtype=np.int64)
    for row, feature in enumerate(batch):
        for position, tag in zip(feature.item.word_first_token, feature.tags, strict=True):
            slot_targets[row, position] = slot_index.get(tag, 0)  # a tag unseen in training counts as O
    intents = torch.tensor([intent_index.get(f.intent, 0) for f in batch])
    return (torch.from_numpy(padded.input_ids), torch.from_numpy(padded.attention_mask), intents,
            torch.from_numpy(slot_targets))


@contextmanager
def deterministic_kernels() -> Iterator[None]:
    """Every op on a deterministic kernel, or an error instead of a silent difference: with the same seed, data
    and thread count, training gives the same weights bit for bit (the model cache and the README's numbers
    rely on it). On a CPU none of the ops used here changes its numbers under this setting."""
    previous = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(previous)


def train_joint_model(encoder_dir: Path, features: Sequence[Feature], tokenizer: WordPieceTokenizer,
                      labels: LabelSet, config: TrainConfig, desc: str = "training", device: str = "cpu",
                      progress: Callable[[float], None] | None = None) -> JointIntentSlotModel:
    """`device`: "cpu" (the meeting model's recipe, bit-reproducible) or "cuda" (benchmarks such as ATIS).
    `progress`: told the fraction of steps done after each step (a server building a model in the background
    shows it)."""
    if device.startswith("cuda"):
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS needs a fixed workspace
    with deterministic_kernels():
        return _train(encoder_dir, features, tokenizer, labels, config, desc, torch.device(device), progress)


def _train(encoder_dir: Path, features: Sequence[Feature], tokenizer: WordPieceTokenizer, labels: LabelSet,
           config: TrainConfig, desc: str, device: torch.device, progress: Callable[[float], None] | None
           ) -> JointIntentSlotModel:
    torch.manual_seed(config.seed)
    rng = random.Random(config.seed)
    model = JointIntentSlotModel.from_pretrained_encoder(
        encoder_dir, len(labels.intents), len(labels.slot_labels), config.dropout
    ).to(device)
    model.encoder.embeddings.word_embeddings.weight.requires_grad_(not config.freeze_word_embeddings)
    no_decay = ("bias", "LayerNorm.weight")
    trainable = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    groups = [
        {"params": [p for n, p in trainable if not n.endswith(no_decay)], "weight_decay": config.weight_decay},
        {"params": [p for n, p in trainable if n.endswith(no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=config.learning_rate)
    steps_per_epoch = -(-len(features) // config.batch_size)
    total = steps_per_epoch * config.epochs
    warmup = max(1, int(total * config.warmup_ratio))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warmup, max(0.0, (total - step) / max(1, total - warmup)))
    )
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=IGNORE)
    model.train()
    order = list(features)
    with tqdm(total=total, desc=desc, unit="step") as bar:
        for epoch in range(config.epochs):
            rng.shuffle(order)
            for start in range(0, len(order), config.batch_size):
                batch = _tensors(order[start : start + config.batch_size], tokenizer, labels)
                ids, mask, intents, slots = (t.to(device) for t in batch)
                intent_logits, slot_logits = model(ids, mask)
                loss = loss_fn(intent_logits, intents) + loss_fn(slot_logits.flatten(0, 1), slots.flatten())
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                schedule.step()
                bar.set_postfix(epoch=epoch + 1, loss=f"{loss.item():.3f}")
                bar.update()
                if progress is not None:
                    progress(bar.n / total)
    return model.eval()


def torch_runner(model: JointIntentSlotModel) -> RunFn:
    device = next(model.parameters()).device

    def run(ids: NDArray[np.int64], mask: NDArray[np.int64]) -> Logits:
        with torch.inference_mode():
            intent, slots = model(torch.from_numpy(ids).to(device), torch.from_numpy(mask).to(device))
        return intent.cpu().numpy(), slots.cpu().numpy()

    return run


def evaluate(run: RunFn, features: Sequence[Feature], tokenizer: WordPieceTokenizer, labels: LabelSet) -> Scores:
    decoded = decode_in_batches(run, [f.item for f in features], tokenizer, labels)
    return score([(f.intent, f.tags) for f in features], [(d.intent, d.word_tags) for d in decoded])
