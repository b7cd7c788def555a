"""faster-whisper as a pure engine call: 16 kHz PCM in, text out, one utterance or a batch of them.

Models come from PyPI packages, never a hub (assistant/asr/models.py). The lazy segment generator is consumed
here, inside the worker thread that calls transcribe(). Several utterances that end together are decoded in one
call (transcribe_batch): one encoder pass over the stacked 30 s windows and one batched greedy/beam search in
CTranslate2, which on a GPU costs little more than one utterance.

One utterance takes exactly the same path as a batch of several (the same features, prompt, suppressed tokens
and search, no temperature fallback): the text a request gets must not depend on how busy the server was.
faster-whisper's own `transcribe()` re-decodes with sampling when the greedy text looks repetitive, which the
batched search never did, so under load (batches) some commands were written differently than when alone.
Instead, a text that cannot be the speech (a loop, the prompt read back, more words than the audio holds:
assistant/asr/plausible.py) is decoded again without the prompt, and cut where it is still implausible.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from assistant.asr.hypotheses import Heard, Hypothesis
from assistant.asr.models import whisper_model_dir
from assistant.asr.plausible import cut, implausible, prompt_lists
from assistant.asr.warm_up import timed_warm_up
from assistant.language.registry import DEFAULT, get

__all__ = ["WhisperRecognizer", "float_audio", "one_blas_thread_for_numpy"]

# faster-whisper's defaults for dropping a segment as non-speech: both must hold
_NO_SPEECH_PROB = 0.6
_LOG_PROB = -1.0
_READ = 1  # the workers' priority of a read at a pause (a final is 0, a partial 2)


def one_blas_thread_for_numpy() -> int:
    """Sets numpy's own BLAS (OpenBLAS in numpy.libs) to one thread; returns how many libraries it set.

    faster-whisper's features end in a small matmul (80 mel filters x 201 FFT bins x the frames). On a 16-core
    machine numpy's OpenBLAS runs it on 16 threads whose workers then spin in sched_yield between calls: with
    four recognizers under load, 11 cores went on spinning (half of it system time) and each decode waited for
    them. One thread does that matmul in about a millisecond. Only numpy's copy is touched: torch's and
    CTranslate2's thread pools (training, the NLU model, CPU decoding) keep their own settings. Called by a
    recognizer on a GPU."""
    from threadpoolctl import ThreadpoolController

    controller = ThreadpoolController()
    numpy_blas = [lib.filepath for lib in controller.lib_controllers
                  if lib.user_api == "blas" and Path(lib.filepath).parent.name.startswith("numpy")]
    if numpy_blas:
        controller.select(filepath=numpy_blas).limit(limits=1)
    return len(numpy_blas)


def float_audio(pcm16k: bytes) -> np.ndarray:
    """16-bit PCM as the float32 samples in [-1, 1) faster-whisper takes."""
    return np.frombuffer(pcm16k, dtype="<i2").astype(np.float32) / 32768.0


def _likeliest(scores: dict[str, float], choices: Sequence[str]) -> str:
    """The choice Whisper finds likeliest ({"<|zh|>": 0.98, ...}); the first choice when it scores none."""
    return max(choices, key=lambda language: scores.get(f"<|{language}|>", 0.0))


class WhisperRecognizer:
    def __init__(self, cache_dir: Path, model: str = "tiny.en", device: str = "cpu", compute_type: str = "int8",
                 beam_size: int = 1, hotwords: str | None = None, model_dir: Path | None = None,
                 device_index: int = 0, language: str = DEFAULT.code,
                 rewrite: Callable[[str], str] | None = None, hypotheses: int = 1) -> None:
        """`hotwords`: words the speech is likely to hold (the room names, the domain's verbs), given to the
        decoder as previous text; tiny.en then hears "Book Denali" instead of "Booked in Ollie". `model_dir`:
        the model's folder when the caller already found it (the model server gets it from its launcher);
        `device_index`: which GPU (a Triton instance group's). `language`: what the speech is ("en", "zh"); a
        multilingual model (base) is told, never left to guess per utterance; with "zh" the hotwords, written in
        simplified characters, also keep its writing simplified. `rewrite`: applied to every text (Chinese: the
        domain's words put right by sound, assistant/language/zh/transcript.py); without one, the language's own
        (English: the unambiguous recognizer forms put right, assistant/language/en/transcript.py).
        `hypotheses`: how many readings a final decode or a read at a pause returns (a beam that wide; 1: the
        greedy search alone): the best is the text, the others ride along (`Heard.alternatives`) for
        understanding to choose from. Partials stay greedy: they are only shown."""
        from faster_whisper import WhisperModel
        from faster_whisper.tokenizer import Tokenizer
        from faster_whisper.transcribe import get_suppressed_tokens

        self.model_name, self.device, self.compute_type, self.language = model, device, compute_type, language
        if device == "cuda":
            # Where the recognizer serves many streams beside a GPU (measured: 16 cores, 11 spinning). On a CPU
            # numpy keeps its default: the thread count changes the features' rounding, and with it 1 of the
            # pause corpus's 40 transcripts on the 2-core CI ("for" heard as "four"), so a CPU change waits for
            # a CPU measurement that shows it is worth that.
            one_blas_thread_for_numpy()
        folder = model_dir or whisper_model_dir(model, cache_dir)
        self._model = WhisperModel(str(folder), device=device, device_index=device_index, compute_type=compute_type)
        self._beam_size = beam_size
        self._hypotheses = max(1, hypotheses)
        if language != DEFAULT.code and not self._model.model.is_multilingual:  # an .en model hears English
            raise ValueError(f"speech model {model} hears English only; language {language!r} needs base")
        self._tokenizer = Tokenizer(self._model.hf_tokenizer, self._model.model.is_multilingual, task="transcribe",
                                    language=language)
        self._hotwords = hotwords
        self._rewrite = rewrite if rewrite is not None else get(language).rewrite
        self._prompt = self._model.get_prompt(self._tokenizer, [], without_timestamps=True, hotwords=hotwords)
        self._bare_prompt = self._model.get_prompt(self._tokenizer, [], without_timestamps=True)
        self._prompt_lists = prompt_lists(hotwords)
        self.redecoded = 0  # texts decoded again without the prompt (they could not have been the speech)
        self._suppress = get_suppressed_tokens(self._tokenizer, [-1])

    @property
    def whisper(self) -> Any:
        """The faster-whisper model itself (benchmarks compare against calling it directly)."""
        return self._model

    def warm_up(self) -> float:
        """One decode of a second of silence; returns its seconds. On a GPU the first decode of a process
        compiles kernels (over 10 s on a fresh machine): better at start than on someone's first command."""
        return timed_warm_up(lambda: self.transcribe_batch(
            [bytes(32000), bytes(32000)] if self.device == "cuda" else [bytes(32000)]))

    def transcribe(self, pcm16k: bytes) -> str:
        return self.transcribe_batch([pcm16k])[0]

    def transcribe_batch(self, pcms: list[bytes], priority: int = 0) -> list[str]:
        """Texts in order: one encoder pass and one search for all (commands are short, so each fits one 30 s
        window; longer audio is decoded from its first 30 s). `priority`: a final (0) or a read at a pause (1)
        gets the n-best (`hypotheses`); a partial (2) the greedy text."""
        return self._plausible(pcms, self._decode(self._encode(pcms), len(pcms),
                                                  hypotheses=self._hypotheses if priority <= _READ else 1))

    def transcribe_nbest(self, pcms: list[bytes], hypotheses: int) -> list[list[Hypothesis]]:
        """Each audio's `hypotheses` best readings with their scores, best first (no plausibility check)."""
        return [[(text, score) for text, score in found]
                for found in self._search(self._encode(pcms), len(pcms), self._prompt, hypotheses)]

    def identify_batch(self, pcms: list[bytes], choices: Sequence[str], priority: int = 0
                       ) -> list[tuple[str, str | None]]:
        """(language, text) of each audio: its language among `choices` by Whisper's own language identification
        (one decoder step on the encoder output), and, where that is this recognizer's language, its text from
        the same encoder pass (so Chinese pays for no second one); None where another recognizer must hear it.
        Needs a multilingual model (base)."""
        if not self._model.model.is_multilingual:
            raise ValueError(f"speech model {self.model_name} hears English only: it cannot tell languages apart")
        encoded = self._encode(pcms)
        languages = [_likeliest(dict(scores), choices) for scores in self._model.model.detect_language(encoded)]
        # A batch is decoded whole (a part of the encoder output cannot be taken on the GPU without a copy);
        # a batch with none of this language is not decoded at all.
        texts = self._plausible(pcms, self._decode(encoded, len(pcms))) if self.language in languages \
            else [""] * len(pcms)
        return [(language, text if language == self.language else None)
                for language, text in zip(languages, texts, strict=True)]

    def _encode(self, pcms: list[bytes]) -> Any:
        from faster_whisper.audio import pad_or_trim

        features = np.stack([pad_or_trim(self._model.feature_extractor(float_audio(p))) for p in pcms])
        return self._model.encode(features)

    def _plausible(self, pcms: list[bytes], texts: list[str]) -> list[str]:
        """Texts that cannot be the speech decoded again without the prompt; cut where they still cannot be."""
        seconds = [len(pcm) / 32_000 for pcm in pcms]
        reasons = {i: why for i, text in enumerate(texts)
                   if text and (why := implausible(text, seconds[i], self._prompt_lists))}
        if not reasons:
            return texts
        bad = list(reasons)
        again = self._decode(self._encode([pcms[i] for i in bad]), len(bad), prompt=self._bare_prompt)
        out = list(texts)
        for i, text in zip(bad, again, strict=True):
            out[i] = text if not implausible(text, seconds[i], self._prompt_lists) else \
                cut(text, seconds[i], self._prompt_lists)
            print(f"[asr] {reasons[i]}: {texts[i][:80]!r} decoded again without the prompt: {out[i]!r}",
                  file=sys.stderr, flush=True)
        self.redecoded += len(bad)
        return out

    def _decode(self, encoded: Any, count: int, prompt: Sequence[int] | None = None, hypotheses: int = 1
                ) -> list[str]:
        """The best reading of each audio; with `hypotheses` > 1 a `Heard` that carries the others."""
        found = self._search(encoded, count, self._prompt if prompt is None else prompt, hypotheses)
        return [Heard(readings[0][0], readings[0][1], readings[1:]) if hypotheses > 1 else readings[0][0]
                for readings in found]

    def _search(self, encoded: Any, count: int, prompt: Sequence[int], hypotheses: int) -> list[list[Hypothesis]]:
        results = self._model.model.generate(
            encoded, [list(prompt) for _ in range(count)], beam_size=max(self._beam_size, hypotheses),
            num_hypotheses=hypotheses, max_length=self._model.max_length, suppress_blank=True,
            suppress_tokens=self._suppress, return_scores=True, return_no_speech_prob=True)
        return [[self._reading(result, k) for k in range(len(result.sequences_ids))] for result in results]

    def _reading(self, result: Any, k: int) -> Hypothesis:
        """The k-th hypothesis's text (rewritten) and its mean log-probability; "" where nobody spoke."""
        tokens = result.sequences_ids[k]
        avg_logprob = result.scores[k] * len(tokens) / (len(tokens) + 1)  # length penalty 1, as faster-whisper
        if result.no_speech_prob > _NO_SPEECH_PROB and avg_logprob < _LOG_PROB:
            return "", avg_logprob
        text = str(self._tokenizer.decode([t for t in tokens if t < self._tokenizer.eot])).strip()
        return (self._rewrite(text) if self._rewrite is not None and text else text), float(avg_logprob)
