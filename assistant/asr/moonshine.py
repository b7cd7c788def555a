"""Moonshine tiny (English) run by ONNX Runtime: a recognizer whose cost grows with the audio.

Whisper encodes a padded 30 s window for every command, so a 3 s "book Everest at nine" costs what 30 s would.
Moonshine's encoder reads the audio as it is (a 3 s command is a tenth of the work), which makes it the faster
English recognizer on a CPU (docs/benchmarks, `assistant bench voice --engines`). Its weights ship in the
`moonshine-voice` wheel (MIT; 0.0.4 is the last version that bundles them: later ones download them) as ONNX
Runtime files; they are run here by the ONNX Runtime the NLU already uses, with our own greedy search, and the
package itself is never imported (its import pulls in an HTTP client and a second ONNX Runtime).

The search is ours so that it can hear the room names: Moonshine takes no prompt, so a word being spelled that
could still become a room name ("▁Den" on the way to "Denali") has its score raised by HOTWORD_BONUS (shallow
fusion on the words so far, as in contextual biasing). Without it tiny wrote "Booked in Ali" for "Book Denali" and
"Is ever as free" for "Is Everest free". A room name it writes is still only a word: the room matcher and the
guard decide what it means.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from assistant.asr.moonshine_text import rewrite as moonshine_rewrite
from assistant.asr.warm_up import timed_warm_up
from assistant.errors import ModelUnavailable

__all__ = ["MoonshineRecognizer", "moonshine_model_dir", "MOONSHINE_REQUIREMENT", "HOTWORD_BONUS", "TokenText"]

MOONSHINE_REQUIREMENT = "moonshine-voice==0.0.4"
# Added to the log-probability of a token that keeps the word being written on its way to a hotword. Chosen on
# the tuning voices (hibari, joe): 3 turned "Booked in Ali" into "Book Denali"; 5 and 8 began to write names
# half ("everesed"); the untuned voice is reported apart (docs/nlu.md).
HOTWORD_BONUS = 3.0
_CANDIDATES = 8  # the likeliest tokens a bonus may lift; a token outside them is too unlikely to be meant
_MIN_PREFIX = 2  # letters of a word before it counts as on its way to a hotword ("E" is too many words' start)
# Moonshine's own decode limit: at most this many tokens per second of audio (its reference code uses 6; a
# command's digits and names run a little denser), so a search that loops stops.
_TOKENS_PER_SECOND = 8.0
_SILENT_RMS = 10 ** (-60 / 20)  # -60 dBFS: quieter than any microphone's own noise; nobody spoke
# The decoder's cross-attention takes at most 384 encoder frames (about 9.2 s of audio; ONNX Runtime refuses more:
# "broadcast ... 2 by 388", found by the heard corpus on a 9.3 s request). Longer audio (a long request, a reopened
# turn heard again as one) is heard in pieces of at most 9 s, each cut at its quietest 50 ms in the 3 s before.
_PIECE_SAMPLES = 9 * 16000
_CUT_SEARCH_SAMPLES, _CUT_WINDOW, _CUT_HOP = 3 * 16000, 800, 160
_START, _END = 1, 2
_LAYERS, _HEADS, _HEAD_DIM = 6, 8, 36  # tiny's decoder


def moonshine_model_dir() -> Path:
    """The tiny English model's folder inside the installed wheel, found without importing the package."""
    spec = importlib.util.find_spec("moonshine_voice")
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(f"[asr] engine = \"moonshine\" needs: pip install --no-deps {MOONSHINE_REQUIREMENT}")
    folder = Path(next(iter(spec.submodule_search_locations))) / "assets" / "tiny-en"
    if not (folder / "encoder_model.ort").exists():
        raise ModelUnavailable(f"{folder} has no Moonshine tiny model: {MOONSHINE_REQUIREMENT} is the version "
                               "that bundles it (later versions download it)")
    return folder


class TokenText:
    """Moonshine's vocabulary (tokenizer.bin: each token's bytes after a one- or two-byte length), as text."""

    def __init__(self, path: Path) -> None:
        data = path.read_bytes()
        pieces: list[bytes] = []
        i = 0
        while i < len(data):
            length = data[i]
            i += 1
            if length >= 0x80:  # a length of 128 or more takes a second byte (little-endian base 128)
                length = (length & 0x7F) | (data[i] << 7)
                i += 1
            pieces.append(data[i:i + length])
            i += length
        self.pieces = pieces
        # each token as text, "▁" (a word's start) as a space; byte tokens that are half a character stay empty
        self.texts = [piece.decode("utf-8", errors="ignore").replace("\u2581", " ") for piece in pieces]

    def decode(self, ids: Sequence[int]) -> str:
        joined = b"".join(self.pieces[i] for i in ids if i > _END)
        return joined.decode("utf-8", errors="replace").replace("\u2581", " ").strip()


class _Hotwords:
    """Which tokens keep the word being written on its way to a hotword."""

    def __init__(self, words: Sequence[str]) -> None:
        self.words = tuple(sorted({w.lower() for w in words if w.strip()}))

    def lifts(self, written: str, token: str) -> bool:
        if not self.words or not token.strip():
            return False
        word = token[1:] if token.startswith(" ") else written.rsplit(" ", 1)[-1] + token
        word = word.lower()
        return len(word) >= _MIN_PREFIX and word.isalpha() and any(h.startswith(word) for h in self.words)


class MoonshineRecognizer:
    """The Recognizer the workers call (assistant/server/workers.py): 16 kHz PCM in, English text out."""

    device = "cpu"
    compute_type = "fp32"
    language = "en"

    def __init__(self, hotwords: Sequence[str] = (), threads: int = 0, model_dir: Path | None = None,
                 rewrite: Callable[[str], str] | None = moonshine_rewrite,
                 hotword_bonus: float = HOTWORD_BONUS) -> None:
        """`hotwords`: words to lift while they are being spelled (the room names). `rewrite`: applied to every
        text (Moonshine's spelled forms as the NLU reads them: assistant/asr/moonshine_text.py)."""
        import onnxruntime as ort

        folder = model_dir or moonshine_model_dir()
        self.model_name = "moonshine-tiny"
        options = ort.SessionOptions()
        options.inter_op_num_threads = 1
        if threads > 0:
            options.intra_op_num_threads = threads
        providers = ["CPUExecutionProvider"]
        self._encoder = ort.InferenceSession(str(folder / "encoder_model.ort"), options, providers=providers)
        self._decoder = ort.InferenceSession(str(folder / "decoder_model_merged.ort"), options, providers=providers)
        self._outputs = [o.name for o in self._decoder.get_outputs()]
        self._tokens = TokenText(folder / "tokenizer.bin")
        self._hotwords = _Hotwords(hotwords)
        self._bonus = hotword_bonus
        self._rewrite = rewrite

    def warm_up(self) -> float:
        """One decode of a second of a quiet tone (silence would stop at the level check, warming nothing)."""
        tone = (0.03 * 32767 * np.sin(2 * np.pi * 440 * np.arange(16000) / 16000)).astype("<i2").tobytes()
        return timed_warm_up(lambda: self.transcribe(tone))

    def transcribe(self, pcm16k: bytes) -> str:
        return self.transcribe_batch([pcm16k])[0]

    def transcribe_batch(self, pcms: list[bytes], priority: int = 0) -> list[str]:
        """One utterance after another: on a CPU a batch only makes each wait for the longest."""
        return [self._transcribe(pcm) for pcm in pcms]

    def _transcribe(self, pcm16k: bytes) -> str:
        samples = np.frombuffer(pcm16k, dtype="<i2").astype(np.float32) / 32768.0
        if len(samples) < 1600:  # under 0.1 s: shorter than the encoder's first window; nothing was said
            return ""
        if float(np.sqrt(np.mean(samples**2))) < _SILENT_RMS:
            return ""  # Moonshine writes "You" over silence; Whisper's no-speech probability has no match here
        texts = [self._tokens.decode(self._search(self._encode(piece),
                                                  max_tokens=max(4, int(len(piece) / 16000 * _TOKENS_PER_SECOND))))
                 for piece in _pieces(samples)]
        text = " ".join(t for t in texts if t)
        return self._rewrite(text) if self._rewrite is not None and text else text

    def _encode(self, samples: NDArray[np.float32]) -> NDArray[np.float32]:
        audio = samples[None, :]
        hidden: NDArray[np.float32] = self._encoder.run(None, {
            "input_values": audio, "attention_mask": np.ones(audio.shape, dtype=np.int64)})[0]
        return hidden

    def _search(self, hidden: NDArray[np.float32], max_tokens: int) -> list[int]:
        """Greedy, with the hotword bonus; the decoder's self-attention keys and values are carried between steps
        and the cross-attention ones computed once, at the first step."""
        empty = np.zeros((1, _HEADS, 0, _HEAD_DIM), dtype=np.float32)
        past = {f"past_key_values.{layer}.{side}.{kind}": empty
                for layer in range(_LAYERS) for side in ("decoder", "encoder") for kind in ("key", "value")}
        feed_common = {"encoder_hidden_states": hidden,
                       "encoder_attention_mask": np.ones(hidden.shape[:2], dtype=np.int64)}
        ids: list[int] = []
        token = _START
        for step in range(max_tokens):
            outputs = self._decoder.run(self._outputs, {
                **feed_common, **past, "input_ids": np.array([[token]], dtype=np.int64),
                "use_cache_branch": np.array([step > 0])})
            token = self._next(outputs[0][0, -1], ids)
            if token == _END:
                break
            ids.append(token)
            for name, value in zip(self._outputs[1:], outputs[1:], strict=True):
                key = name.replace("present.", "past_key_values.")
                if step == 0 or ".decoder." in key:  # the encoder's keys and values stay those of step 0
                    past[key] = value
        return ids

    def _next(self, logits: NDArray[np.float32], ids: list[int]) -> int:
        best = int(np.argmax(logits))
        if not self._hotwords.words or self._bonus <= 0:
            return best
        scores = logits - (logits.max() + np.log(np.exp(logits - logits.max()).sum()))  # log-probabilities
        written = self._tokens.decode(ids)
        candidates = np.argpartition(scores, -_CANDIDATES)[-_CANDIDATES:]
        lifted = {int(c): float(scores[c]) + (self._bonus if self._hotwords.lifts(written, self._tokens.texts[c])
                                              else 0.0) for c in candidates}
        return max(lifted, key=lambda c: lifted[c])


def _pieces(samples: NDArray[np.float32]) -> list[NDArray[np.float32]]:
    """The audio in pieces the decoder takes (at most _PIECE_SAMPLES), each cut in the quietest stretch near its
    end: a pause between words, so no word is cut in two where there is one."""
    pieces = []
    while len(samples) > _PIECE_SAMPLES:
        start = _PIECE_SAMPLES - _CUT_SEARCH_SAMPLES
        energy = [float(np.mean(samples[at:at + _CUT_WINDOW] ** 2))
                  for at in range(start, _PIECE_SAMPLES - _CUT_WINDOW + 1, _CUT_HOP)]
        cut = start + _CUT_HOP * int(np.argmin(energy)) + _CUT_WINDOW // 2
        pieces.append(samples[:cut])
        samples = samples[cut:]
    return [*pieces, samples]
