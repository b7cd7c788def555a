"""The trained meeting NLU model in the cache: found by its key, or made by the recipe on first use.

The cache folder is keyed by everything that changes the model (the recipe's source code, generator and
training settings, encoder package version), so a changed recipe builds a new model instead of reusing a stale
one. Building happens in a temporary folder renamed into place, under a file lock, so a crash never leaves a
half-written model and two processes never train at once.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

from assistant.cache import build_folder, locked
from assistant.errors import ModelUnavailable
from assistant.nlu.model_folder import NLUModel, load_model
from models.datagen.generator import GeneratorConfig
from models.encoder import encoder_version
from models.train_config import TrainConfig

__all__ = ["RECIPE_VERSION", "RECIPE_SOURCES", "model_key", "ensure_meeting_model"]

RECIPE_VERSION = 1

_REPO = Path(__file__).resolve().parents[1]
# The code that decides what the model learns: templates, value renderers, training, export, quantization and
# the accuracy gate that decides whether the INT8 file is kept.
RECIPE_SOURCES = ("models/datagen/*.py", "models/train.py", "models/train_config.py", "models/export.py",
                  "models/quantize.py", "models/accuracy_gate.py", "models/recipe.py", "engines/torch_joint.py")


def _recipe_digest() -> str:
    digest = hashlib.sha256()
    for pattern in RECIPE_SOURCES:
        for path in sorted(_REPO.glob(pattern)):
            digest.update(path.relative_to(_REPO).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def model_key(generator: GeneratorConfig, training: TrainConfig) -> str:
    recipe = {"recipe": RECIPE_VERSION, "generator": asdict(generator), "training": asdict(training),
              "encoder": encoder_version(), "sources": _recipe_digest()}
    return "meeting-" + hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:12]


def ensure_meeting_model(cache_dir: Path, rebuild: bool = False, generator: GeneratorConfig | None = None,
                         training: TrainConfig | None = None) -> NLUModel:
    generator = generator or GeneratorConfig()
    training = training or TrainConfig()
    root = cache_dir / "nlu"
    root.mkdir(parents=True, exist_ok=True)
    key = model_key(generator, training)
    folder = root / key
    if (folder / "manifest.json").exists() and not rebuild:
        return load_model(folder)
    with locked(root / f"{key}.lock"):
        if (folder / "manifest.json").exists() and not rebuild:
            return load_model(folder)  # another process built it while we waited
        try:
            from models.recipe import build_meeting_nlu  # needs torch: imported only to build
        except ImportError as exc:
            raise ModelUnavailable(
                f"no trained model in {root} and training needs torch ({exc.name} is missing): "
                "pip install -e '.[train]'"
            ) from exc
        build_folder(folder, lambda staging: build_meeting_nlu(staging, generator, training, key))
    return load_model(folder)
