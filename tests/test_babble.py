"""Babble noise for the voice bench (assistant/bench/babble.py): the level it promises, and the same audio each
time."""

import numpy as np
import pytest

from assistant.bench.babble import with_babble
from assistant.clients.send import read_wav
from tests.test_spoken_corpus import CORPUS


@pytest.mark.parametrize("snr_db", [0.0, 10.0, 20.0])
def test_babble_sits_the_asked_ratio_below_the_speech(snr_db: float) -> None:
    request, others = read_wav(CORPUS / "r01.wav")[0], [read_wav(CORPUS / f"r0{i}.wav")[0] for i in (2, 3, 4)]
    mixed = with_babble(request, others, snr_db)
    speech = np.frombuffer(request, "<i2").astype(np.float64)
    noise = np.frombuffer(mixed, "<i2").astype(np.float64) - speech
    loud = np.abs(speech) > 300
    measured = 10 * np.log10(np.mean(speech[loud] ** 2) / np.mean(noise**2))
    assert len(mixed) == len(request) and measured == pytest.approx(snr_db, abs=0.5)  # (clipping aside)
    assert with_babble(request, others, snr_db) == mixed  # deterministic
