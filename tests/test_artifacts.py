from dataclasses import replace
from pathlib import Path

import pytest

from assistant.errors import ModelUnavailable
from assistant.nlu.model_folder import NLUModel, load_model
from models.datagen.sampling import GeneratorConfig
from models.model_cache import ensure_meeting_model, model_key
from models.train_config import TrainConfig


def test_key_changes_with_anything_that_changes_the_model() -> None:
    base = model_key(GeneratorConfig(), TrainConfig())
    assert base == model_key(GeneratorConfig(), TrainConfig())
    assert base != model_key(GeneratorConfig(seed=1), TrainConfig())
    assert base != model_key(GeneratorConfig(), replace(TrainConfig(), epochs=9))


def test_missing_model_is_explained(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match="manifest.json"):
        load_model(tmp_path)


def test_cached_model_is_reused_not_rebuilt(meeting_model: NLUModel) -> None:
    cache = meeting_model.folder.parent.parent
    built_at = (meeting_model.folder / "manifest.json").stat().st_mtime_ns
    again = ensure_meeting_model(cache)
    assert (again.folder / "manifest.json").stat().st_mtime_ns == built_at
    assert again.folder == meeting_model.folder
    assert again.manifest["key"] == meeting_model.folder.name
    assert not list(meeting_model.folder.parent.glob(f".{meeting_model.folder.name}-*"))  # no staging left behind


def test_key_changes_when_the_recipe_code_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    from models import model_cache

    base = model_key(GeneratorConfig(), TrainConfig())
    monkeypatch.setattr(model_cache, "_recipe_digest", lambda language: "templates edited")
    assert model_key(GeneratorConfig(), TrainConfig()) != base


def test_the_accuracy_gate_is_part_of_the_recipe() -> None:
    # whether the INT8 file is kept depends on the gate: editing it must build a new model, not reuse one
    from models import model_cache

    assert "models/accuracy_gate.py" in model_cache.RECIPE_SOURCES
