"""The server's speech worker: every session's spoken replies are made in one thread of their own (a voice holds
one model or one global state), sentence by sentence, so a reply's first sentence is on its way while the next is
made, and no reply waits behind the recognizer's decodes."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Mapping
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from assistant.language.profile import Language
from assistant.server.metrics import ServerMetrics
from assistant.speech.voices import Voice, VoiceError, load_voice

__all__ = ["SpeechWorker"]

log = logging.getLogger(__name__)


class SpeechWorker:
    def __init__(self, voices: Mapping[Language, str], metrics: ServerMetrics) -> None:
        """`voices`: each language's voice spec ("" or absent: replies in it are not spoken)."""
        self._specs = {language: spec for language, spec in voices.items() if spec}
        self._voices: dict[Language, Voice] = {}
        self._metrics = metrics
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="speech")

    def speaks(self, language: Language) -> bool:
        return language in self._specs

    def warm_up(self) -> None:
        """Load every voice now (seconds of loading belong to the start, not to the first reply)."""
        for language in self._specs:
            self._thread.submit(self._voice, language).result()

    def _voice(self, language: Language) -> Voice:
        voice = self._voices.get(language)
        if voice is None:
            voice = self._voices[language] = load_voice(self._specs[language])
        return voice

    async def sentences(self, language: Language, text: str) -> AsyncIterator[tuple[np.ndarray, int]]:
        """The text's audio, a sentence at a time as each is made: (int16 samples, sample rate)."""
        loop = asyncio.get_running_loop()
        voice = await loop.run_in_executor(self._thread, self._voice, language)
        made = iter(voice.sentences(text))

        def next_sentence() -> np.ndarray | None:
            began = time.perf_counter()
            audio = next(made, None)
            if audio is not None:
                self._metrics.compute.labels("tts").observe(time.perf_counter() - began)
            return audio

        while True:
            audio = await loop.run_in_executor(self._thread, next_sentence)
            if audio is None:
                return
            yield audio, voice.sample_rate

    def close(self) -> None:
        self._thread.shutdown(wait=False, cancel_futures=True)


def load_speech(voices: Mapping[Language, str], metrics: ServerMetrics) -> SpeechWorker | None:
    """The worker with every voice loaded, or None where no language has one (or a voice cannot load: said)."""
    if not any(voices.values()):
        return None
    worker = SpeechWorker(voices, metrics)
    try:
        worker.warm_up()
    except VoiceError as exc:
        log.warning("replies will not be spoken: %s", exc)
        worker.close()
        return None
    return worker
