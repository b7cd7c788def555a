"""The joint intent + slot network (JointBERT style) on a BERT encoder, in PyTorch.

Intent: masked mean of the encoder's last hidden states (the pooling the MiniLM sentence encoder was trained
with) -> dropout -> linear. Slots: each token's hidden state -> dropout -> linear over BIO labels. No CRF, so the
whole network is one static graph that ONNX Runtime, TensorRT and CUDA graphs all take as it is.
"""

from __future__ import annotations

from pathlib import Path

import torch
import transformers
from torch import nn
from transformers import BertConfig, BertModel

__all__ = ["JointIntentSlotModel"]


class JointIntentSlotModel(nn.Module):
    def __init__(self, encoder: BertModel, num_intents: int, num_slot_labels: int, dropout: float = 0.1) -> None:
        super().__init__()
        self.encoder = encoder
        hidden = encoder.config.hidden_size
        self.dropout = nn.Dropout(dropout)
        self.intent_head = nn.Linear(hidden, num_intents)
        self.slot_head = nn.Linear(hidden, num_slot_labels)

    @classmethod
    def from_pretrained_encoder(cls, encoder_dir: Path, num_intents: int, num_slot_labels: int,
                                dropout: float = 0.1) -> JointIntentSlotModel:
        # Eager attention: the same graph trains here and exports cleanly to ONNX (no SDPA custom op).
        verbosity = transformers.logging.get_verbosity()
        transformers.logging.set_verbosity_error()  # type: ignore[no-untyped-call]  # the unused pooler weights are expected, not news
        try:
            encoder = BertModel.from_pretrained(
                str(encoder_dir), add_pooling_layer=False, attn_implementation="eager", local_files_only=True
            )
        finally:
            transformers.logging.set_verbosity(verbosity)
        return cls(encoder, num_intents, num_slot_labels, dropout)

    @classmethod
    def from_config(cls, encoder_config: Path, num_intents: int, num_slot_labels: int) -> JointIntentSlotModel:
        """An untrained shell of the right shape, for loading a saved state dict."""
        config = BertConfig.from_json_file(str(encoder_config))
        config._attn_implementation = "eager"
        return cls(BertModel(config, add_pooling_layer=False), num_intents, num_slot_labels)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hidden = self.encoder(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=torch.zeros_like(input_ids)
        ).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
        intent_logits = self.intent_head(self.dropout(pooled))
        slot_logits = self.slot_head(self.dropout(hidden))
        return intent_logits, slot_logits
