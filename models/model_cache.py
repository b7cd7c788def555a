"""The trained meeting NLU model in the cache: found by its key, or made by the recipe on first use.

The cache folder is keyed by everything that changes the model (the recipe's source code, generator and
training settings, encoder package version), so a changed recipe builds a new model instead of reusing a stale
one. Building happens in a temporary folder renamed into place, under a file lock, so a crash never leaves a
half-written model and two processes never train at once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from assistant.cache import build_folder, locked
from assistant.errors import ModelUnavailable
from assistant.nlu.model_folder import NLUModel, load_model
from models.datagen.generator import GeneratorConfig
from models.encoder import encoder_version
from models.multilingual_encoder import multilingual_encoder_version
from models.train_config import TrainConfig

__all__ = ["RECIPE_VERSION", "RECIPE_SOURCES", "CHINESE_GENERATOR", "CHINESE_TRAINING", "model_key",
           "ensure_meeting_model", "ensure_chinese_model", "cached_model"]

# The Chinese (and mixed-language) model: multilingual-e5-small is twice MiniLM's depth, so fewer requests keep
# its training within minutes on two cores; it reads Chinese a character a token, which its pretraining cut into
# longer pieces, so it trains longer and faster than MiniLM (at 2 epochs and 1e-4 it ended underfit: dev intent
# accuracy 85.7 %).
CHINESE_GENERATOR = GeneratorConfig(train_size=8000, dev_size=1600, language="zh")
CHINESE_TRAINING = TrainConfig(epochs=3, learning_rate=2e-4)

RECIPE_VERSION = 1

_REPO = Path(__file__).resolve().parents[1]
# The code that decides what the model learns: templates, value renderers, training, export, quantization and
# the accuracy gate that decides whether the INT8 file is kept.
RECIPE_SOURCES = ("models/datagen/*.py", "models/train.py", "models/train_config.py", "models/export.py",
                  "models/quantize.py", "models/accuracy_gate.py", "models/recipe.py", "engines/torch_joint.py",
                  "assistant/nlu/tokenizer.py", "assistant/nlu/bio.py")  # words and tags: what each token learns


# The Chinese generator's own files, which the English model never reads (a change there retrains only Chinese).
_CHINESE_ONLY = "models/datagen/zh_*.py"


def _recipe_digest(language: str) -> str:
    digest = hashlib.sha256()
    skipped = set(_REPO.glob(_CHINESE_ONLY)) if language != "zh" else set()
    for pattern in RECIPE_SOURCES:
        for path in sorted(set(_REPO.glob(pattern)) - skipped):
            digest.update(path.relative_to(_REPO).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def model_key(generator: GeneratorConfig, training: TrainConfig) -> str:
    encoder = multilingual_encoder_version() if generator.language == "zh" else encoder_version()
    recipe = {"recipe": RECIPE_VERSION, "generator": asdict(generator), "training": asdict(training),
              "encoder": encoder, "sources": _recipe_digest(generator.language)}
    return "meeting-" + hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:12]


def ensure_meeting_model(cache_dir: Path, rebuild: bool = False, generator: GeneratorConfig | None = None,
                         training: TrainConfig | None = None,
                         progress: Callable[[str, float], None] | None = None) -> NLUModel:
    """`progress`: told (stage, fraction done) while a model is built (models/recipe.py STAGES)."""
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
        encoder = _encoder_folder(generator.language, cache_dir)
        build_folder(folder, lambda staging: build_meeting_nlu(staging, generator, training, key, encoder,
                                                                    progress))
    return load_model(folder)


def ensure_chinese_model(cache_dir: Path, rebuild: bool = False,
                         progress: Callable[[str, float], None] | None = None) -> NLUModel:
    """The Chinese and mixed-language model (docs/multilingual.md), found or built like the English one."""
    return ensure_meeting_model(cache_dir, rebuild, CHINESE_GENERATOR, CHINESE_TRAINING, progress)


def cached_model(cache_dir: Path, language: str) -> NLUModel | None:
    """The language's model when it is already built; None when building it would take minutes."""
    generator, training = (CHINESE_GENERATOR, CHINESE_TRAINING) if language == "zh" else \
        (GeneratorConfig(), TrainConfig())
    folder = cache_dir / "nlu" / model_key(generator, training)
    return load_model(folder) if (folder / "manifest.json").exists() else None


def _encoder_folder(language: str, cache_dir: Path) -> Path:
    if language == "zh":
        from models.multilingual_encoder import multilingual_encoder_dir

        return multilingual_encoder_dir(cache_dir)
    from models.encoder import encoder_dir

    return encoder_dir()
