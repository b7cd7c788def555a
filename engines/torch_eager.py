"""PyTorch FP32 eager, on the CPU or a GPU: the baseline that faster backends are measured against."""

from __future__ import annotations

import numpy as np
import torch
from numpy.typing import NDArray
from safetensors.torch import load_file

from engines.base import BackendInfo, BackendOptions, JointModelFiles, Logits
from engines.torch_joint import JointIntentSlotModel

__all__ = ["TorchEagerBackend", "TorchEagerCudaBackend"]


class TorchEagerBackend:
    name = "torch-eager"
    device = torch.device("cpu")

    def __init__(self, files: JointModelFiles, options: BackendOptions) -> None:
        if options.precision not in ("auto", "fp32"):
            raise ValueError(f"{self.name} runs fp32 only, not {options.precision!r}")
        if options.threads > 0:
            torch.set_num_threads(options.threads)
        model = JointIntentSlotModel.from_config(files.encoder_config, files.num_intents, files.num_slot_labels)
        model.load_state_dict(load_file(str(files.torch_weights)))
        self._model = model.eval().to(self.device)
        self._name = files.torch_weights.name

    def run(self, input_ids: NDArray[np.int64], attention_mask: NDArray[np.int64]) -> Logits:
        with torch.inference_mode():
            intent, slots = self._model(torch.from_numpy(input_ids).to(self.device),
                                        torch.from_numpy(attention_mask).to(self.device))
        return intent.cpu().numpy(), slots.cpu().numpy()

    def info(self) -> BackendInfo:
        device = str(self.device)
        if self.device.type == "cuda":
            device += f" {torch.cuda.get_device_name(self.device)}"
        return BackendInfo(self.name, device, "fp32", self._name)

    def close(self) -> None:
        self._model = None  # type: ignore[assignment]


class TorchEagerCudaBackend(TorchEagerBackend):
    """The same eager FP32 call on the GPU (numpy in, numpy out): what a plain PyTorch service would do."""

    name = "torch-eager-cuda"

    def __init__(self, files: JointModelFiles, options: BackendOptions) -> None:
        if not torch.cuda.is_available():
            raise FileNotFoundError("no CUDA device is visible to PyTorch")
        self.device = torch.device("cuda", torch.cuda.current_device())
        super().__init__(files, options)
