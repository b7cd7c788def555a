"""The GPU path on a real GPU: the cuda-python layer, the torch-CUDA graph backend against ONNX Runtime, and
faster-whisper's batched decode on CUDA. Everything here skips, saying why, on a machine without a GPU (CI);
it runs on the GPU machine (DEVELOPERS.md says how)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from assistant.config import Settings
from assistant.nlu.model_folder import NLUModel
from assistant.nlu.parser import IntentSlotParser, Understanding
from assistant.nlu.tokenizer import WordPieceTokenizer
from engines.base import BackendOptions, ShapeProfile
from engines.registry import create_backend
from models.datagen.splits import GeneratorConfig, generate_splits
from tests.transcripts import normalized

DATA = Path(__file__).resolve().parent / "data"


def _torch_cuda() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


def _cuda_python_device() -> bool:
    if importlib.util.find_spec("cuda") is None:
        return False
    from engines.cuda import device_count

    return device_count() > 0


needs_torch_cuda = pytest.mark.skipif(not _torch_cuda(), reason="no CUDA GPU visible to PyTorch")
needs_cuda_python = pytest.mark.skipif(not _cuda_python_device(), reason="cuda-python or a CUDA GPU is missing")


@needs_cuda_python
def test_pinned_and_device_buffers_round_trip_on_their_own_stream() -> None:
    from engines.cuda import CudaEvent, CudaStream, DeviceBuffer, PinnedArray, device_identity

    identity = device_identity()
    assert identity.name and identity.compute_capability.count(".") == 1
    stream = CudaStream(priority=-1)
    source, back = PinnedArray((64, 128), np.int64), PinnedArray((64, 128), np.int64)
    device = DeviceBuffer(source.nbytes)
    values = np.arange(64 * 128, dtype=np.int64).reshape(64, 128)
    source.array[:] = values
    start, end = CudaEvent(), CudaEvent()
    start.record(stream)
    device.upload(source, source.nbytes, stream)
    device.download(back, back.nbytes, stream)
    end.record(stream)
    stream.synchronize()
    assert np.array_equal(back.array, values)
    assert end.elapsed_ms(start) >= 0.0
    part = back.view((3, 5))
    assert part.shape == (3, 5) and part.flags.c_contiguous
    for thing in (source, back, device, start, end, stream):
        thing.close()


def _dev_texts(count: int) -> list[str]:
    _, dev = generate_splits(GeneratorConfig(train_size=0, dev_size=count))
    return [e.text for e in dev][:count]


@needs_torch_cuda
def test_torch_cuda_graphs_understand_the_dev_split_exactly_as_onnx_runtime(settings: Settings,
                                                                            meeting_model: NLUModel) -> None:
    tokenizer = WordPieceTokenizer(meeting_model.tokenizer_file)
    reference = create_backend("onnxruntime", meeting_model.files, BackendOptions("fp32"))
    graphs = create_backend("torch-cuda", meeting_model.files, BackendOptions("fp16"))
    assert graphs.info().precision == "fp16" and graphs.info().device.startswith("cuda")
    texts = _dev_texts(600)
    results = []
    for backend in (reference, graphs):
        parser = IntentSlotParser(backend, tokenizer, meeting_model.labels, batch_size=24)
        results.append(parser.parse_many(texts))
    mismatches = []
    for text, ort, gpu in zip(texts, *results, strict=True):
        assert isinstance(ort, Understanding) == isinstance(gpu, Understanding)
        if isinstance(ort, Understanding) and isinstance(gpu, Understanding) and (
                ort.intent != gpu.intent or [(s.name, s.text) for s in ort.slots] != [(s.name, s.text)
                                                                                      for s in gpu.slots]):
            mismatches.append(text)
    assert not mismatches, mismatches[:5]


@needs_torch_cuda
def test_padding_to_a_bucket_changes_no_real_token(meeting_model: NLUModel) -> None:
    tokenizer = WordPieceTokenizer(meeting_model.tokenizer_file)
    graphs = create_backend("torch-cuda", meeting_model.files,
                            BackendOptions("fp16", shapes=ShapeProfile((1, 8, 16), (8, 32, 64))))
    items = tokenizer.tokenize(_dev_texts(40)[:5])  # batch 5 -> bucket 8; its longest -> a seq bucket
    batch = tokenizer.batch(items)
    together_intent, together_slots = graphs.run(batch.input_ids, batch.attention_mask)
    for row, item in enumerate(items):
        alone = tokenizer.batch([item])
        intent, slots = graphs.run(alone.input_ids, alone.attention_mask)
        assert np.allclose(intent[0], together_intent[row], atol=2e-2)
        assert np.allclose(slots[0], together_slots[row, : item.num_tokens], atol=2e-2)
    big = tokenizer.batch(tokenizer.tokenize(_dev_texts(60)[:40]))  # beyond the largest graph: split in 16s
    intent, slots = graphs.run(big.input_ids, big.attention_mask)
    assert intent.shape[0] == 40 and slots.shape[:2] == big.input_ids.shape


@needs_torch_cuda
def test_whisper_on_cuda_decodes_commands_that_end_together_in_one_call(settings: Settings) -> None:
    import wave

    from assistant.asr.whisper import WhisperRecognizer

    recognizer = WhisperRecognizer(settings.cache_dir, "tiny.en", "cuda", "float16")
    recognizer.warm_up()
    from threadpoolctl import threadpool_info  # a recognizer on a GPU put numpy's BLAS on one thread

    assert all(i["num_threads"] == 1 for i in threadpool_info()
               if i["user_api"] == "blas" and Path(i["filepath"]).parent.name.startswith("numpy"))
    pcms = []
    for name in ("book_everest_tomorrow_9.wav", "cancel_denali_friday.wav"):
        with wave.open(str(DATA / name), "rb") as wav:
            pcms.append(wav.readframes(wav.getnframes()))
    texts = recognizer.transcribe_batch([pcms[0], pcms[1], bytes(32_000), pcms[0]])
    assert "everest" in normalized(texts[0]) and "denali" in normalized(texts[1])
    assert texts[2] == "" and texts[3] == texts[0]


def _tensorrt_ready() -> str | None:
    """None when a TensorRT engine can be built and run here, else why not."""
    if importlib.util.find_spec("tensorrt") is None:
        return "TensorRT is not installed (it comes from NVIDIA: pip install tensorrt)"
    if not _cuda_python_device():
        return "cuda-python or a CUDA GPU is missing"
    return None


@pytest.mark.skipif(_tensorrt_ready() is not None, reason=str(_tensorrt_ready()))
@pytest.mark.parametrize("precision", ["fp16", "int8"])
def test_a_tensorrt_engine_understands_the_dev_split_as_onnx_runtime_does(meeting_model: NLUModel,
                                                                          precision: str) -> None:
    from models.engine_build import build_engine
    from models.precision_files import ensure_precision_file

    ensure_precision_file(meeting_model, precision)
    shapes = ShapeProfile((1, 8, 32), (8, 32, 128))
    plan, key, _ = build_engine(meeting_model.files, precision, shapes)
    again, _, built_again = build_engine(meeting_model.files, precision, shapes)
    assert again == plan and not built_again  # cached under its key
    engine = create_backend("tensorrt", meeting_model.files, BackendOptions(precision, shapes=shapes))
    assert engine.info().precision == precision and key.precision == precision
    tokenizer = WordPieceTokenizer(meeting_model.tokenizer_file)
    reference = create_backend("onnxruntime", meeting_model.files, BackendOptions("fp32"))
    texts = _dev_texts(400)
    ort, trt = (IntentSlotParser(b, tokenizer, meeting_model.labels, batch_size=48).parse_many(texts)
                for b in (reference, engine))  # batch 48 > profile max 32: split by the backend
    agree = sum(isinstance(a, Understanding) and isinstance(b, Understanding) and a.intent == b.intent
                and [(s.name, s.text) for s in a.slots] == [(s.name, s.text) for s in b.slots]
                for a, b in zip(ort, trt, strict=True))
    assert agree >= 0.98 * len(texts)  # dev accuracy of these files is within 0.1 point of FP32
    engine.close()
