"""Training is seeded: the same data and seed give bit-identical weights.

What that rests on, so the test holds on any machine and in any order: the seed (torch's generator and the
shuffle), deterministic kernels (training runs under torch.use_deterministic_algorithms, so an op without a
deterministic kernel raises instead of varying), and the same intra-op thread count for both runs (a reduction
split over threads adds in another order when the count changes; the count is process-wide and the torch-eager
backend's `threads` setting changes it), which the test pins."""

from collections.abc import Iterator

import pytest
import torch

from assistant.domain import INTENTS, SLOT_NAMES, bio_labels
from assistant.nlu.labels import LabelSet
from assistant.nlu.tokenizer import WordPieceTokenizer
from models.datagen.splits import GeneratorConfig, generate_splits
from models.encoder import encoder_dir
from models.train import featurize, train_joint_model
from models.train_config import TrainConfig


@pytest.fixture()
def pinned_threads() -> Iterator[None]:
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


@pytest.mark.usefixtures("pinned_threads")
def test_same_seed_same_weights() -> None:
    tokenizer = WordPieceTokenizer(encoder_dir() / "tokenizer.json")
    train, _ = generate_splits(GeneratorConfig(seed=3, train_size=48, dev_size=0))
    features = featurize(train, tokenizer, 128)
    labels = LabelSet(INTENTS, tuple(bio_labels(SLOT_NAMES)))
    config = TrainConfig(epochs=1, batch_size=16, seed=7)
    first = train_joint_model(encoder_dir(), features, tokenizer, labels, config).state_dict()
    second = train_joint_model(encoder_dir(), features, tokenizer, labels, config).state_dict()
    assert all(torch.equal(first[k], second[k]) for k in first)
    moved = train_joint_model(encoder_dir(), features, tokenizer, labels, TrainConfig(epochs=1, batch_size=16,
                                                                                      seed=8)).state_dict()
    assert not torch.equal(first["slot_head.weight"], moved["slot_head.weight"])

    assert not torch.are_deterministic_algorithms_enabled()  # the setting is the training's, restored after
