"""Speech models from PyPI packages: tiny.en as shipped, whisper base joined from its two part packages into the
cache, both transcribing a spoken request, and the server running on base when configured to."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import wave
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import soxr

from assistant.asr.models import SPEECH_MODELS, whisper_model_dir
from assistant.asr.whisper import WhisperRecognizer
from assistant.config import Settings
from assistant.errors import ModelUnavailable
from assistant.language.registry import get
from assistant.server.spawn import spawn_server
from assistant.wiring import build_language_recognizer
from tests.transcripts import normalized

DATA = Path(__file__).resolve().parent / "data"
BASE_PARTS = [Path(__import__(m).__file__).parent / "data" / f"model.bin.part{i}"
              for i, m in enumerate(SPEECH_MODELS["base"].modules, 1)]


def _pcm16k(path: Path) -> bytes:
    with wave.open(str(path), "rb") as wav:
        rate, samples = wav.getframerate(), np.frombuffer(wav.readframes(wav.getnframes()), "<i2")
    return soxr.resample(samples, rate, 16_000).astype("<i2").tobytes()


def test_base_is_joined_once_into_the_cache_from_its_two_parts(tmp_path: Path) -> None:
    folder = whisper_model_dir("base", tmp_path)
    assert folder.is_relative_to(tmp_path / "whisper")
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "model.bin", "tokenizer.json", "vocabulary.txt"]
    joined = (folder / "model.bin").read_bytes()
    assert joined == b"".join(part.read_bytes() for part in BASE_PARTS)
    stamp = (folder / "model.bin").stat().st_mtime_ns
    assert whisper_model_dir("base", tmp_path) == folder
    assert (folder / "model.bin").stat().st_mtime_ns == stamp  # reused, not joined again


def test_two_processes_asking_for_base_at_once_get_one_complete_folder(tmp_path: Path) -> None:
    with ProcessPoolExecutor(2) as pool:
        folders = list(pool.map(whisper_model_dir, ["base", "base"], [tmp_path, tmp_path]))
    assert folders[0] == folders[1]
    assert (folders[0] / "model.bin").stat().st_size == sum(p.stat().st_size for p in BASE_PARTS)
    assert [p.name for p in (tmp_path / "whisper").iterdir() if p.is_dir()] == [folders[0].name]  # no staging left


def test_an_unknown_speech_model_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match="unknown speech model 'large'.*tiny.en"):
        whisper_model_dir("large", tmp_path)


@pytest.mark.parametrize("model", ["tiny.en", "base"])
def test_each_model_transcribes_a_spoken_request(model: str, settings: object, tmp_path: Path) -> None:
    recognizer = WhisperRecognizer(tmp_path, model)
    text = recognizer.transcribe(_pcm16k(DATA / "book_everest_tomorrow_9.wav"))
    assert normalized(text) == "book everest tomorrow at 9 for an hour", text  # "at nine" on some processors
    assert recognizer.transcribe(_pcm16k(DATA / "silence_3s.wav")) == ""


def test_the_server_runs_on_base_when_asked(tmp_path: Path, meeting_model: object) -> None:
    proc, url = spawn_server(tmp_path / "bookings.sqlite", ["--asr-model", "base"])
    try:
        sent = subprocess.run([sys.executable, "-m", "assistant", "send", str(DATA / "cancel_denali_friday.wav"),
                               "--url", url, "--fast", "--now", "2026-12-02T10:00:00", "--tz", "Europe/Berlin"],
                              capture_output=True, text=True, timeout=120, check=True)
    finally:
        proc.terminate()
        proc.wait(30)
    events = [json.loads(line) for line in sent.stdout.splitlines()]
    intent = next(e for e in events if e["type"] == "intent")
    assert intent["intent"] == "cancel_meeting"
    assert ("room", "denali") in {(s["name"], normalized(s["text"])) for s in intent["slots"]}


def test_utterances_that_end_together_are_decoded_in_one_call(tmp_path: Path) -> None:
    # The batched path (one encoder pass, one search over all) reads each command as single decodes do.
    recognizer = WhisperRecognizer(tmp_path, "tiny.en")
    everest, denali = _pcm16k(DATA / "book_everest_tomorrow_9.wav"), _pcm16k(DATA / "cancel_denali_friday.wav")
    silence = _pcm16k(DATA / "silence_3s.wav")
    batch = [everest, denali, silence, everest]
    batched = recognizer.transcribe_batch(batch)
    singles = [recognizer.transcribe(pcm) for pcm in batch]
    assert [normalized(t) for t in batched] == [normalized(t) for t in singles], (batched, singles)
    assert normalized(batched[0]) == "book everest tomorrow at 9 for an hour" and "denali" in normalized(batched[1])
    assert batched[2] == "" and batched[3] == batched[0]  # silence says nothing; a batch row is its own decode


def test_base_tells_chinese_from_english_and_hears_the_chinese_in_the_same_pass(settings: Settings,
                                                                                 tmp_path: Path) -> None:
    # "language": "auto" sessions: the Chinese recognizer (base, as configured) says each audio's language and
    # gives the Chinese text from the same encoder pass; the English is left to tiny.en (None).
    recognizer = build_language_recognizer(settings, get("zh"))
    assert recognizer is not None
    chinese = [_pcm16k(DATA / "corpus_zh" / f"z{i:02d}.wav") for i in (1, 7, 31)]  # z31: 帮我订 Everest 明天下午五点
    english = [_pcm16k(DATA / "corpus" / f"r{i:02d}.wav") for i in (1, 2)] + [
        _pcm16k(DATA / "book_everest_tomorrow_9.wav")]
    heard = recognizer.identify_batch(chinese + english, ("en", "zh"))
    assert [language for language, _ in heard] == ["zh"] * 3 + ["en"] * 3
    assert [text for _, text in heard[3:]] == [None] * 3
    assert [text for _, text in heard[:3]] == recognizer.transcribe_batch(chinese + english)[:3]
    assert "会议室" in str(heard[0][1])  # 帮我订明天上午九点的会议室
    with pytest.raises(ValueError, match="English only"):
        WhisperRecognizer(tmp_path, "tiny.en").identify_batch(chinese, ("en", "zh"))


def test_numpys_blas_goes_to_one_thread_and_torchs_pool_is_left_alone() -> None:
    # What a recognizer on a GPU does at start (numpy's OpenBLAS on every core spun 11 of 16 cores around the
    # features' small matmul on an H200 machine). In a fresh process: the setting is process-wide, and OpenBLAS
    # starts there with one thread per core.
    code = (
        "import json, torch\n"
        "from pathlib import Path\n"
        "from threadpoolctl import threadpool_info\n"
        "from assistant.asr.whisper import one_blas_thread_for_numpy\n"
        "def threads(): return {i['internal_api'] + ':' + Path(i['filepath']).parent.name: i['num_threads']"
        " for i in threadpool_info()}\n"
        "before = threads()\n"
        "one_blas_thread_for_numpy()\n"
        "print(json.dumps([before, threads()]))\n"
    )
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: OpenBLAS starts on one thread, so there is nothing to take away")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                          check=True)
    before, after = json.loads(done.stdout.strip().splitlines()[-1])
    numpy_blas = [name for name in before if name.startswith("openblas:numpy")]
    assert numpy_blas and all(before[name] > 1 and after[name] == 1 for name in numpy_blas), (before, after)
    others = [name for name in before if name not in numpy_blas]  # torch's OpenMP
    assert others and all(after[name] == before[name] for name in others), (before, after)
