"""PyTorch FP32 eager on the CPU: the baseline that faster backends are measured against."""

from __future__ import annotations

import numpy as np
import torch
from numpy.typing import NDArray
from safetensors.torch import load_file

from engines.base import BackendInfo, BackendOptions, JointModelFiles, Logits
from engines.torch_joint import JointIntentSlotModel

__all__ = ["TorchEagerBackend"]


class TorchEagerBackend:
    def __init__(self, files: JointModelFiles, options: BackendOptions) -> None:
        if options.precision not in ("auto", "fp32"):
            raise ValueError(f"torch-eager runs fp32 only, not {options.precision!r}")
        if options.threads > 0:
            torch.set_num_threads(options.threads)
        model = JointIntentSlotModel.from_config(files.encoder_config, files.num_intents, files.num_slot_labels)
        model.load_state_dict(load_file(str(files.torch_weights)))
        self._model = model.eval()
        self._name = files.torch_weights.name

    def run(self, input_ids: NDArray[np.int64], attention_mask: NDArray[np.int64]) -> Logits:
        with torch.inference_mode():
            intent, slots = self._model(torch.from_numpy(input_ids), torch.from_numpy(attention_mask))
        return intent.numpy(), slots.numpy()

    def info(self) -> BackendInfo:
        return BackendInfo("torch-eager", "cpu", "fp32", self._name)

    def close(self) -> None:
        self._model = None  # type: ignore[assignment]
