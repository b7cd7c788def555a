"""The trained meeting NLU models: shipped with the project (models/shipped/<language>), found in the cache by
their key, or made by the recipe.

The shipped folder holds what serving on a CPU reads (the INT8 ONNX file, tokenizer, labels, encoder config,
manifest), exactly as the recipe writes them: `assistant train` copies them there when a build changes them, and
`assistant train --check` rebuilds from nothing and fails naming any file that differs (CI runs it). The cache
holds the whole build (FP32 ONNX, PyTorch weights) that the GPU backends and the precision files need.

The cache folder is keyed by everything that changes the model (the recipe's source code, generator and
training settings, encoder package version), so a changed recipe builds a new model instead of reusing a stale
one. Building happens in a temporary folder renamed into place, under a file lock, so a crash never leaves a
half-written model and two processes never train at once.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path

from assistant.cache import build_folder, locked
from assistant.errors import ModelUnavailable
from assistant.language.registry import DEFAULT, LANGUAGES, get
from assistant.nlu.model_folder import NLUModel, load_model
from models.datagen.sampling import GeneratorConfig
from models.encoders import ENCODERS
from models.heard.corpus import corpus_digest
from models.train_config import TrainConfig

__all__ = ["RECIPE_VERSION", "RECIPE_SOURCES", "SHIPPED", "SHIPPED_FILES", "language_recipe", "model_key",
           "ensure_meeting_model", "ensure_language_model", "cached_model", "shipped_model", "ship",
           "shipped_differences"]

RECIPE_VERSION = 1

_REPO = Path(__file__).resolve().parents[1]
SHIPPED = Path(__file__).resolve().parent / "shipped"
# what a CPU serves from; the manifest is shipped too but holds measurements of the machine that built it
SHIPPED_FILES = ("model.int8.onnx", "tokenizer.json", "labels.json", "encoder_config.json")
# The code that decides what the model learns: templates, value renderers, training, export, quantization and
# the accuracy gate that decides whether the INT8 file is kept.
RECIPE_SOURCES = ("models/datagen/*.py", "models/train.py", "models/train_config.py", "models/export.py",
                  "models/quantize.py", "models/accuracy_gate.py", "models/recipe.py", "engines/torch_joint.py",
                  "models/vocabulary.py", "models/reproducible.py",
                  "models/heard/corpus.py",  # which rows of the heard corpus training reads (the file: "heard")
                  "assistant/nlu/tokenizer.py", "assistant/nlu/bio.py",  # words and tags: what each token learns
                  "assistant/language/script.py")  # the characters the tokenizer reads one a token


def language_recipe(language: str) -> tuple[GeneratorConfig, TrainConfig]:
    """The generator and training settings of a language's model, from its profile (assistant/language)."""
    recipe = get(language).model
    generator = GeneratorConfig(language=language)
    if recipe.sizes is not None:
        generator = replace(generator, train_size=recipe.sizes[0], dev_size=recipe.sizes[1])
    training = TrainConfig()
    if recipe.training is not None:
        training = replace(training, epochs=recipe.training[0], learning_rate=recipe.training[1])
    return generator, training


def _recipe_digest(language: str) -> str:
    digest = hashlib.sha256()
    # other languages' own generator files: the model never reads them (a change there retrains only theirs)
    skipped = {path for other in LANGUAGES if other.code != language and other.model.own_sources
               for path in _REPO.glob(other.model.own_sources)}
    for pattern in RECIPE_SOURCES:
        for path in sorted(set(_REPO.glob(pattern)) - skipped):
            digest.update(path.relative_to(_REPO).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def model_key(generator: GeneratorConfig, training: TrainConfig) -> str:
    language = get(generator.language).model
    recipe = {"recipe": RECIPE_VERSION, "generator": asdict(generator), "training": asdict(training),
              "encoder": ENCODERS[language.encoder].version(), "language": asdict(language),
              "sources": _recipe_digest(generator.language), "heard": corpus_digest(generator.language)}
    return "meeting-" + hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:12]


def ensure_meeting_model(cache_dir: Path, rebuild: bool = False, generator: GeneratorConfig | None = None,
                         training: TrainConfig | None = None,
                         progress: Callable[[str, float], None] | None = None) -> NLUModel:
    """`progress`: told (stage, fraction done) while a model is built (models/recipe.py STAGES)."""
    default_generator, default_training = language_recipe(DEFAULT.code)
    generator = generator or default_generator
    training = training or default_training
    root = cache_dir / "nlu"
    root.mkdir(parents=True, exist_ok=True)
    key = model_key(generator, training)
    folder = root / key
    if (folder / "manifest.json").exists() and not rebuild:
        return load_model(folder)
    def waiting(lock: Path) -> None:  # another process builds this model: said, where progress goes, before waiting
        if progress is not None:
            progress("waiting for another process that is building it", 0.0)
        print(f"[nlu] waiting for another process that is building {key} (lock {lock})", file=sys.stderr,
              flush=True)

    with locked(root / f"{key}.lock", waiting):
        if (folder / "manifest.json").exists() and not rebuild:
            return load_model(folder)  # another process built it while we waited
        try:
            from models.recipe import build_meeting_nlu  # needs torch: imported only to build
        except ImportError as exc:
            raise ModelUnavailable(
                f"no trained model in {root} and training needs torch ({exc.name} is missing): "
                "pip install -e '.[train]'"
            ) from exc
        encoder = ENCODERS[get(generator.language).model.encoder].folder(cache_dir)
        build_folder(folder, lambda staging: build_meeting_nlu(staging, generator, training, key, encoder,
                                                                    progress))
    return load_model(folder)


def ensure_language_model(cache_dir: Path, language: str, rebuild: bool = False,
                          progress: Callable[[str, float], None] | None = None) -> NLUModel:
    """A language's model (English: MiniLM; Chinese and mixed: docs/multilingual.md), found or built."""
    generator, training = language_recipe(language)
    return ensure_meeting_model(cache_dir, rebuild, generator, training, progress)


def cached_model(cache_dir: Path, language: str, whole: bool = False, shipped: Path | None = None
                 ) -> NLUModel | None:
    """The language's model without building anything: the cache's whole build of the current recipe, else the
    shipped one (INT8 only; not when `whole`, the FP32 files and weights wanted) in `shipped` (default:
    models/shipped; `[paths] models`). None: it must be built."""
    try:
        folder = cache_dir / "nlu" / model_key(*language_recipe(language))
    except ModelUnavailable:  # the encoder packages (a build's inputs) are not installed: only shipped models
        folder = None
    if folder is not None and (folder / "manifest.json").exists():
        return load_model(folder)
    return None if whole else shipped_model(language, shipped)


def shipped_model(language: str, shipped: Path | None = None) -> NLUModel | None:
    """The language's model in `shipped` (default: models/shipped), or None."""
    folder = (shipped or SHIPPED) / language
    return load_model(folder) if (folder / "manifest.json").exists() else None


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def shipped_differences(model: NLUModel, language: str) -> list[str]:
    """Each shipped file that is not the built model's, in words (empty: the shipped model is this build)."""
    out = []
    for name in SHIPPED_FILES:
        built, shipped = model.folder / name, SHIPPED / language / name
        if not built.exists() or not shipped.exists():
            out.append(f"{language}/{name}: {'built' if built.exists() else 'not built'}, "
                       f"{'shipped' if shipped.exists() else 'not shipped'}")
        elif (built_hash := _sha256(built)) != (shipped_hash := _sha256(shipped)):
            out.append(f"{language}/{name}: built sha256 {built_hash[:16]} ({built.stat().st_size} bytes), "
                       f"shipped {shipped_hash[:16]} ({shipped.stat().st_size} bytes)")
    return out


def ship(model: NLUModel, language: str) -> bool:
    """Copy the build's files into models/shipped/<language> when they differ from what is there (a build of an
    unchanged recipe leaves the repository untouched). True when anything was copied."""
    if not (model.folder / SHIPPED_FILES[0]).exists():
        raise ModelUnavailable(f"the {language} build has no INT8 file (it failed the accuracy gate: "
                               f"{model.folder / 'manifest.json'}); nothing small enough to ship")
    if not shipped_differences(model, language):
        return False
    target = SHIPPED / language
    target.mkdir(parents=True, exist_ok=True)
    for name in (*SHIPPED_FILES, "manifest.json"):
        shutil.copyfile(model.folder / name, target / name)
    return True
