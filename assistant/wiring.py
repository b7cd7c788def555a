"""The app, built in one place: settings -> model, backend, parser, store, dialogue, text pipeline; recognizer,
workers and the voice stream's settings for the server.

`cli.py` parses arguments and hands settings here; nothing else assembles parts. Finding (or, on first use,
building) the trained model in the cache is the build side's (models/model_cache.py), imported only when a model
is needed; the runtime packages (`assistant.nlu`, `assistant.server`, `assistant.booking`) never import `models`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path

from assistant.asr.moonshine import MoonshineRecognizer  # light: its model loads when one is built
from assistant.asr.remote import RemoteRecognizer
from assistant.asr.whisper import WhisperRecognizer  # light: faster-whisper loads when one is built
from assistant.audio.endpointer import EndpointerConfig
from assistant.audio.stream import StreamConfig
from assistant.booking.dialogue import Dialogue
from assistant.booking.dispatcher import Dispatcher
from assistant.booking.interval import TimePolicy
from assistant.booking.rooms import RoomDirectory
from assistant.booking.sqlite_store import SqliteStore
from assistant.booking.zh_time import has_chinese
from assistant.config import BookingSettings, Settings
from assistant.errors import ConfigError
from assistant.nlu.model_folder import NLUModel
from assistant.nlu.parser import IntentSlotParser
from assistant.nlu.routing import LanguageRoutedParser
from assistant.nlu.tokenizer import WordPieceTokenizer
from assistant.server.batcher import BatchPolicy
from assistant.server.languages import Progress, train_in_subprocess
from assistant.server.workers import LoadPolicy, Recognizer, Workers
from assistant.text_pipeline import TextPipeline
from assistant.turn.models import NOTHING, SOUND, turn_model
from engines.base import BackendOptions, NLUBackend, ShapeProfile
from engines.registry import create_backend, create_best_backend

__all__ = ["VoiceServer", "build_recognizer", "shape_profile", "meeting_model", "chinese_model", "build_backend",
           "build_parser", "build_language_parser", "build_chinese_recognizer",
           "build_store", "build_text_pipeline", "stream_config", "load_policy", "check_serving",
           "build_gateway_models", "build_voice_server"]


def _say(part: str, message: str) -> None:
    print(f"[{part}] {message}", file=sys.stderr, flush=True)


def shape_profile(settings: Settings) -> ShapeProfile:
    """[nlu] profile_batch / profile_seq as the GPU backends' shapes, refused clearly when malformed."""
    batch, seq = settings.nlu.profile_batch, settings.nlu.profile_seq
    if len(batch) != 3 or len(seq) != 3:
        raise ConfigError(f"[nlu] profile_batch and profile_seq are [min, opt, max]; got {batch!r}, {seq!r}")
    try:
        return ShapeProfile((batch[0], batch[1], batch[2]), (seq[0], seq[1], seq[2]))
    except ValueError as exc:
        raise ConfigError(f"[nlu] {exc}") from exc


def meeting_model(settings: Settings, rebuild: bool = False, progress: Progress | None = None) -> NLUModel:
    """The trained model for these settings: from the cache, or trained now (minutes, with progress)."""
    from models.model_cache import ensure_meeting_model  # the build side, only when a model is needed

    return ensure_meeting_model(settings.cache_dir, rebuild=rebuild, progress=progress)


def chinese_model(settings: Settings, rebuild: bool = False, progress: Progress | None = None) -> NLUModel:
    """The Chinese and mixed-language model: from the cache, or trained now (minutes, with progress)."""
    from models.model_cache import ensure_chinese_model

    return ensure_chinese_model(settings.cache_dir, rebuild=rebuild, progress=progress)


def _languages(settings: Settings) -> list[str]:
    languages = settings.nlu.languages
    if not languages or "en" not in languages or not set(languages) <= {"en", "zh"}:
        raise ConfigError(f'[nlu] languages: "en", optionally with "zh"; got {languages!r}')
    return list(languages)


def build_backend(settings: Settings, model: NLUModel, verbose: bool = False) -> NLUBackend:
    nlu = settings.nlu
    options = BackendOptions(nlu.precision, nlu.threads, shape_profile(settings))
    if nlu.backend != "auto":
        backend = create_backend(nlu.backend, model.files, options)
    else:
        backend, passed_over = create_best_backend(model.files, options)
        if verbose:
            for name, reason in passed_over.items():
                _say("nlu", f"not {name}: {reason}")
    if verbose:
        _say("nlu", f"{backend.info().describe()} from {model.folder}")
    return backend


def build_parser(settings: Settings, model: NLUModel | None = None, verbose: bool = False) -> IntentSlotParser:
    nlu = settings.nlu
    model = model or meeting_model(settings)
    return IntentSlotParser(
        build_backend(settings, model, verbose), WordPieceTokenizer(model.tokenizer_file), model.labels,
        min_confidence=nlu.min_confidence, max_tokens=nlu.max_tokens, max_chars=nlu.max_chars,
        batch_size=nlu.batch_size,
    )


def build_language_parser(settings: Settings, verbose: bool = False) -> IntentSlotParser | LanguageRoutedParser:
    """The configured languages' parser: English alone, or English and Chinese routed by the text's script."""
    english = build_parser(settings, verbose=verbose)
    if "zh" not in _languages(settings):
        return english
    return LanguageRoutedParser(english, build_parser(settings, chinese_model(settings), verbose))


def _time_policy(booking: BookingSettings) -> TimePolicy:
    for name in ("morning_hours", "afternoon_hours"):
        hours = getattr(booking, name)
        if len(hours) != 2 or not all(isinstance(h, int) and 1 <= h <= 12 for h in hours) or hours[0] > hours[1]:
            raise ConfigError(f"[booking] {name} must be [first, last] clock hours 1-12, got {hours!r}")
    if not 0 < booking.max_hours <= 24:
        raise ConfigError(f"[booking] max_hours must be more than 0 and at most 24, got {booking.max_hours!r}")
    return TimePolicy(range(booking.morning_hours[0], booking.morning_hours[1] + 1),
                      range(booking.afternoon_hours[0], booking.afternoon_hours[1] + 1),
                      timedelta(minutes=booking.default_duration_minutes))


def build_store(settings: Settings, store_file: Path | None = None, commit: bool = True) -> SqliteStore:
    """With commit=False (a dry run) a store file that does not exist yet is not created: an empty in-memory
    store stands in for it."""
    path = store_file or settings.store_file
    return SqliteStore(path if commit or path.exists() else Path(":memory:"))


def build_text_pipeline(settings: Settings, store_file: Path | None = None, *, commit: bool = True,
                        parser: IntentSlotParser | LanguageRoutedParser | None = None,
                        verbose: bool = False) -> TextPipeline:
    """`parser`: an already built one (tests and benchmarks share one); by default, the configured languages'."""
    policy = _time_policy(settings.booking)  # refused before minutes of model loading, not after
    _languages(settings)
    rooms = RoomDirectory.load(settings.rooms_file)
    parser = parser or build_language_parser(settings, verbose=verbose)
    store = build_store(settings, store_file, commit)
    dispatcher = Dispatcher(store, rooms, max_length=timedelta(hours=settings.booking.max_hours), policy=policy,
                            owners_only=settings.access.own_bookings_only)
    dialogue = Dialogue(dispatcher, rooms, policy,
                        timedelta(seconds=settings.booking.conversation_idle_seconds))
    return TextPipeline(parser, dialogue, store, rooms)


def recognizer_hotwords(settings: Settings, language: str = "en") -> str | None:
    """The room directory's names and the domain's verbs, for the recognizer ([asr] hotwords). Measured on the
    spoken corpus (docs/nlu.md): it hears "Book Denali" right where tiny.en alone wrote "Booked in Ollie", and
    it put no room name into silence, the LibriVox readings or the phone call. In Chinese: requests as they are
    said and the rooms' Chinese names, in simplified characters, which also keeps Whisper's writing simplified;
    on the spoken Chinese corpus it took base from 9 to 20 of 35 transcripts exactly right, against the rooms and
    verbs alone (docs/multilingual.md)."""
    if not settings.asr.hotwords:
        return None
    rooms = RoomDirectory.load(settings.rooms_file).rooms
    if language == "zh":
        # The rooms first, in both languages, then requests as they are said, one with an English name in it:
        # ending on a whole request, not on the list, keeps "会议室：" out of transcripts; the English names and
        # the mixed request keep English words spoken inside Chinese (26 -> 29 of 35, docs/multilingual.md).
        names = "、".join(next((a for a in room.aliases if has_chinese(a)), room.name) for room in rooms)
        english = "、".join(room.name.capitalize() for room in rooms)
        return (f"会议室有{names}（{english}）。帮我订周五上午十点的会议室，开一个小时。取消预订，改到下午三点。"
                f"帮我订 {rooms[-1].name.capitalize()} 明天下午两点。")
    return f"Book, reserve, cancel, move. Rooms: {', '.join(room.name for room in rooms)}."


def stream_config(settings: Settings) -> StreamConfig:
    """[audio] and [turn]: with a turn model the endpointer reports pauses, where the turn is read or heard."""
    audio = settings.audio
    pause_ms = 0 if turn_model(settings.turn).listens == NOTHING else settings.turn.read_after_ms
    endpointer = EndpointerConfig(pre_roll_ms=audio.pre_roll_ms, hangover_ms=audio.hangover_ms,
                                  min_speech_ms=audio.min_speech_ms, max_utterance_ms=audio.max_utterance_ms,
                                  pause_ms=pause_ms)
    return StreamConfig(endpointer, audio.vad_aggressiveness, audio.partial_interval_ms, audio.quiet_below_peak_db)


def load_policy(settings: Settings) -> LoadPolicy:
    serving = settings.serving
    if min(serving.asr_max_batch, serving.nlu_max_batch, serving.asr_max_queue, serving.nlu_max_queue) < 1:
        raise ConfigError("[serving] asr/nlu max_batch and max_queue are at least 1")
    return LoadPolicy(BatchPolicy(serving.asr_max_batch, serving.asr_max_delay_us, serving.asr_max_queue),
                      BatchPolicy(serving.nlu_max_batch, serving.nlu_max_delay_us, serving.nlu_max_queue),
                      settings.audio.partial_budget_ms)


def check_serving(settings: Settings) -> None:
    """What `serve` can refuse before minutes of model loading, refused now."""
    from assistant.event_loop import loop_factory

    try:
        loop_factory(settings.serving.event_loop)
    except (ValueError, ImportError) as exc:
        raise ConfigError(f"[serving] event_loop: {exc}") from exc
    _time_policy(settings.booking)
    load_policy(settings)


@dataclass(frozen=True)
class VoiceServer:
    workers: Workers
    stream: StreamConfig


def build_recognizer(settings: Settings, asr_model: str | None = None) -> WhisperRecognizer | MoonshineRecognizer:
    """The configured English recognizer, loaded and warm (its first decode is paid here, not by someone's
    first command). On a CUDA 13-only machine this process restarts first with cuBLAS 13 linked under the CUDA
    12 names CTranslate2 loads, so call it before anything else loads CTranslate2. `asr_model`: a Whisper
    model instead of [asr] model."""
    asr = settings.asr
    if asr.engine == "moonshine":
        rooms = RoomDirectory.load(settings.rooms_file).rooms
        moonshine = MoonshineRecognizer([room.name for room in rooms] if asr.hotwords else [])
        _say("asr", f"moonshine tiny (cpu, onnxruntime; room names lifted: {'yes' if asr.hotwords else 'no'})")
        moonshine.warm_up()
        return moonshine
    if asr.device == "cuda":
        from assistant.asr.cuda_libs import reexec_with_cublas12_links

        reexec_with_cublas12_links(settings.cache_dir)
    model = asr_model or asr.model
    recognizer = WhisperRecognizer(settings.cache_dir, model, asr.device, asr.compute_type, asr.beam_size,
                                   recognizer_hotwords(settings))
    _say("asr", f"faster-whisper {model} ({asr.device}, {asr.compute_type}, beam {asr.beam_size})")
    recognizer.warm_up()
    return recognizer


def build_chinese_recognizer(settings: Settings) -> WhisperRecognizer | None:
    """The recognizer for sessions that speak Chinese: [asr] chinese_model (multilingual), when [nlu] languages
    has "zh" and the model is set; None otherwise (such sessions are refused with `language_unavailable`)."""
    asr = settings.asr
    if "zh" not in _languages(settings) or not asr.chinese_model:
        return None
    from assistant.asr.zh_transcript import ChineseTranscriptFixer

    rooms = RoomDirectory.load(settings.rooms_file).rooms
    fixer = ChineseTranscriptFixer(a for room in rooms for a in room.aliases if has_chinese(a))
    recognizer = WhisperRecognizer(settings.cache_dir, asr.chinese_model, asr.device, asr.compute_type,
                                   asr.beam_size, recognizer_hotwords(settings, "zh"), language="zh", rewrite=fixer)
    _say("asr", f"faster-whisper {asr.chinese_model} for Chinese ({asr.device}, {asr.compute_type})")
    recognizer.warm_up()
    return recognizer


def build_gateway_models(settings: Settings, models_url: str) -> tuple[RemoteRecognizer, IntentSlotParser]:
    """A gateway's models: the model servers', called over gRPC (several: one per GPU, each call to the least
    busy). The tokenizer and labels are read from the same trained model in the local cache (the model servers
    must serve that model: checked on every call)."""
    from engines.triton_client import TritonModels, TritonNLUBackend, parse_models_urls
    from engines.triton_pool import ModelServerPool

    timeout_s = settings.model_server.timeout_s
    models = ModelServerPool([TritonModels(address, timeout_s) for address in parse_models_urls(models_url)])
    model = meeting_model(settings)
    nlu = settings.nlu
    backend = TritonNLUBackend(models, model.files.num_intents, model.files.num_slot_labels)
    parser = IntentSlotParser(backend, WordPieceTokenizer(model.tokenizer_file), model.labels,
                              min_confidence=nlu.min_confidence, max_tokens=nlu.max_tokens,
                              max_chars=nlu.max_chars, batch_size=nlu.batch_size)
    meanwhile = ", its calls go to the others" if len(models.servers) > 1 else ""
    for server in models.servers:
        ready = all(server.ready(name) for name in ("asr", "nlu"))
        _say("serve", f"models on triton://{server.address}: " + (
            "ready" if ready else f"not answering yet{meanwhile}; finals are retried for up to "
                                  f"{settings.model_server.retry_s:g} s while none answers"))
    return RemoteRecognizer(models), parser


def build_voice_server(settings: Settings, store_file: Path | None = None, asr_model: str | None = None,
                       models_url: str | None = None, build_chinese: Callable[[Progress], None] | None = None
                       ) -> VoiceServer:
    """Models loaded and warm; the recognizer first (a CUDA restart, if one is needed, comes before any other
    loading). With `models_url` (triton://HOST:PORT) this process is a gateway: the models run on the model
    server, and several gateways share it.

    English is served as soon as its model is ready; Chinese ([nlu] languages) is made ready behind it, in a
    thread (its model trained first, in a process of its own, when the cache has none: minutes), and sessions
    that ask for it meanwhile are told how far along it is. `build_chinese`: how a missing Chinese model is
    built (default: `assistant train --language zh` at a lower priority)."""
    recognizer: Recognizer
    routed: LanguageRoutedParser | None = None
    if models_url is not None:
        recognizer, parser = build_gateway_models(settings, models_url)
        pipeline = build_text_pipeline(settings, store_file, commit=True, parser=parser)
        policy = replace(load_policy(settings), asr_calls=settings.model_server.gateway_calls,
                         retry_s=settings.model_server.retry_s)
    else:
        recognizer = build_recognizer(settings, asr_model)
        english = build_parser(settings, verbose=True)
        if "zh" in _languages(settings):
            routed = LanguageRoutedParser(english, None)
        pipeline = build_text_pipeline(settings, store_file, commit=True, parser=routed or english)
        policy = load_policy(settings)
    _say("serve", f"batching: asr up to {policy.asr.max_batch} (wait {policy.asr.max_delay_us} us), "
                  f"nlu up to {policy.nlu.max_batch} (wait {policy.nlu.max_delay_us} us)")
    detector = None
    if turn_model(settings.turn).listens == SOUND:
        from assistant.turn.smart_turn import SmartTurn

        detector = SmartTurn()
    turn = settings.turn
    _say("turn", f"{turn.model}: read after {turn.read_after_ms} ms of silence; end after {turn.complete_ms} ms "
                 f"(complete) / {turn.hold_ms} ms (incomplete) / {settings.audio.hangover_ms} ms (otherwise)")
    workers = Workers(recognizer, pipeline, policy, turn=turn, turn_detector=detector)
    if routed is not None:
        make_chinese_ready(settings, workers, routed, build_chinese)
    return VoiceServer(workers, stream_config(settings))


def make_chinese_ready(settings: Settings, workers: Workers, routed: LanguageRoutedParser,
                       build: Callable[[Progress], None] | None = None) -> None:
    """In the background: the Chinese model (built first when the cache has none), its parser, then its
    recognizer (multilingual: it also tells languages apart for "auto" sessions), installed into the serving
    workers and parser when all are ready."""
    from models.model_cache import cached_model

    routed.waiting = lambda: workers.unavailable("zh")
    build = build or train_in_subprocess("zh", settings.cache_dir, settings.cache_dir / "nlu" / "zh-build.log")

    def make(progress: Progress, loading: Callable[[], None]) -> tuple[IntentSlotParser, WhisperRecognizer | None]:
        if cached_model(settings.cache_dir, "zh") is None:
            _say("serve", "no Chinese model yet: building it in the background (minutes; English is served now)")
            build(progress)
        loading()
        return build_parser(settings, chinese_model(settings), verbose=True), build_chinese_recognizer(settings)

    def install(made: tuple[IntentSlotParser, WhisperRecognizer | None]) -> None:
        parser, recognizer = made
        routed.chinese = parser  # typed Chinese first: a Chinese session's first words are parsed by it
        if recognizer is not None:
            workers.add_language("zh", recognizer, recognizer)
        workers.note_models("zh", recognizer, parser.backend.info())

    workers.builds.start("zh", make, install)
