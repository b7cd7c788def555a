"""The app, built in one place: settings -> model, backend, parser, store, dialogue, text pipeline; recognizer,
workers and the voice stream's settings for the server.

`assistant/cli/` parses arguments and hands settings here; nothing else assembles parts. The runtime finds and
loads model files; a model the cache lacks is built by the build side (`assistant train`, models/) in a process of
its own, so torch never enters a serving process. The runtime packages (`assistant.nlu`, `assistant.server`,
`assistant.booking`) never import `models`.
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
from assistant.booking.store import BookingStore, StoreUnavailable
from assistant.config import BookingSettings, Settings
from assistant.errors import ConfigError, ModelUnavailable
from assistant.language.profile import Language
from assistant.language.registry import DEFAULT, LANGUAGES
from assistant.nlu.model_folder import NLUModel
from assistant.nlu.parser import IntentSlotParser
from assistant.nlu.routing import LanguageRoutedParser
from assistant.nlu.tokenizer import WordPieceTokenizer
from assistant.server.languages import Progress, train_in_subprocess
from assistant.server.workers import LoadPolicy, Recognizer, Workers
from assistant.text_pipeline import TextPipeline
from assistant.turn.models import NOTHING, SOUND, turn_model
from engines.base import BackendOptions, NLUBackend
from engines.registry import create_backend, create_best_backend

__all__ = ["VoiceServer", "build_recognizer", "meeting_model", "language_model", "build_backend",
           "build_parser", "build_language_parser", "build_language_recognizer", "recognizer_hotwords",
           "build_store", "build_text_pipeline", "stream_config", "load_policy",
           "build_gateway_models", "build_voice_server"]


def _say(part: str, message: str) -> None:
    print(f"[{part}] {message}", file=sys.stderr, flush=True)


def language_model(settings: Settings, language: Language, progress: Progress | None = None,
                   build: Callable[[Language, Progress], None] | None = None, whole: bool | None = None
                   ) -> NLUModel:
    """The trained model of a language: the one shipped with the project (models/shipped), or the cache's
    whole build when the configured backend needs more than the INT8 file. One that is missing is built first, by
    `build` (language, progress) or else by `assistant train` in a process of its own (minutes, with progress):
    torch and the training's memory never enter this process, which only finds and loads model files.
    `whole`: the build with FP32 ONNX and weights wanted (default: whether the configured backend reads them)."""
    from models.model_cache import cached_model  # finds the shipped folder or the recipe's key; imports no trainer

    whole = needs_whole_model(settings) if whole is None else whole
    code, name = language.code, language.name  # the build side knows languages by their codes
    model = cached_model(settings.cache_dir, code, whole, settings.models_dir)
    if model is not None:
        return model
    log = settings.cache_dir / "nlu" / f"{code}-build.log"
    _say("nlu", f"no {name} model in {settings.cache_dir / 'nlu'} yet: building it in its own process "
                f"(`assistant train --language {code}`, minutes; its log: {log})")
    if build is None:
        train_in_subprocess(code, settings.cache_dir, log)(progress or _tenths(name))
    else:
        build(language, progress or _tenths(name))
    model = cached_model(settings.cache_dir, code, whole, settings.models_dir)
    if model is None:
        raise ModelUnavailable(f"the {name} model build ended without a model; see {log}")
    return model


def needs_whole_model(settings: Settings) -> bool:
    """Whether the configured backend reads more than a shipped model's INT8 file: the FP32 ONNX (TensorRT's
    precision files, ONNX Runtime in FP32) or the PyTorch weights. "auto" takes the shipped file on a CPU; on a
    GPU, `assistant train` first builds the whole model into the cache, where it is found before the shipped."""
    return settings.nlu.backend not in ("auto", "onnxruntime") or settings.nlu.precision not in ("auto", "int8")


def _tenths(name: str) -> Progress:
    """A build's progress on stderr, every stage and every tenth of it."""
    said: list[tuple[str, int]] = []

    def progress(stage: str, done: float) -> None:
        if not said or said[-1] != (stage, int(done * 10)):
            said.append((stage, int(done * 10)))
            _say("nlu", f"building the {name} model: {stage}, {done:.0%}")

    return progress


def meeting_model(settings: Settings, progress: Progress | None = None) -> NLUModel:
    """The default language's (English) model, which every configuration serves."""
    return language_model(settings, DEFAULT, progress)


def build_backend(settings: Settings, model: NLUModel, verbose: bool = False) -> NLUBackend:
    nlu = settings.nlu
    options = BackendOptions(nlu.precision, nlu.threads, nlu.shapes)
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
    model = model or meeting_model(settings)
    return _parser(settings, model, build_backend(settings, model, verbose))


def _parser(settings: Settings, model: NLUModel, backend: NLUBackend) -> IntentSlotParser:
    """The model's tokenizer and labels around `backend` (here, or a model server's), with [nlu]'s limits."""
    nlu = settings.nlu
    return IntentSlotParser(backend, WordPieceTokenizer(model.tokenizer_file), model.labels,
                            min_confidence=nlu.min_confidence, max_tokens=nlu.max_tokens, max_chars=nlu.max_chars,
                            batch_size=nlu.batch_size)


def build_language_parser(settings: Settings, verbose: bool = False) -> IntentSlotParser | LanguageRoutedParser:
    """The configured languages' parser: English alone, or each language's model routed by the text's script.
    English loads now; another language loads on its first text when its model is built, and its texts are
    refused (`language_unavailable`, saying how to build it) when it is not: nothing waits on a language the
    texts do not need."""
    from models.model_cache import cached_model

    english = build_parser(settings, verbose=verbose)
    later = settings.nlu.later
    if not later:
        return english

    def load(language: Language) -> IntentSlotParser | None:
        model = cached_model(settings.cache_dir, language.code, needs_whole_model(settings), settings.models_dir)
        if model is None:
            return None
        if verbose:
            _say("nlu", f"loading the {language.name} model (its first text)")
        return build_parser(settings, model, verbose)

    def waiting(language: Language) -> str:
        return (f"the {language.name} model is not built yet: `assistant train --language {language.code}` builds "
                "it (minutes), as a running server does behind English")

    return LanguageRoutedParser(english, dict.fromkeys(later), waiting, load)


def _time_policy(booking: BookingSettings) -> TimePolicy:
    return TimePolicy(range(booking.morning_hours[0], booking.morning_hours[1] + 1),
                      range(booking.afternoon_hours[0], booking.afternoon_hours[1] + 1),
                      timedelta(minutes=booking.default_duration_minutes))


def build_store(settings: Settings, store_file: Path | None = None, commit: bool = True,
                rooms: RoomDirectory | None = None) -> BookingStore:
    """[store] backend's store. SQLite: with commit=False (a dry run) a store file that does not exist yet is not
    created: an empty in-memory store stands in for it. `store_file` (--store) names a SQLite file."""
    if settings.store.backend == "caldav":
        if store_file is not None:
            raise ConfigError(f"--store {store_file} names a SQLite file, but [store] backend is \"caldav\"")
        return _caldav_store(settings, rooms or RoomDirectory.load(settings.rooms_file))
    path = store_file or settings.store_file
    return SqliteStore(path if commit or path.exists() else Path(":memory:"))


def _caldav_store(settings: Settings, rooms: RoomDirectory) -> BookingStore:
    """Each room's calendar on the CalDAV server; a missing one is made ([store] create_calendars) or refused at
    start. A server that does not answer yet is no reason not to start: /healthz says so until it does."""
    from assistant.booking.caldav_config import calendar_urls, read_credentials
    from assistant.booking.caldav_store import CalDavStore  # its HTTP stack loads only for this backend

    config = settings.store
    user, password = read_credentials(config.credentials_file)
    store = CalDavStore(calendar_urls(rooms.rooms, config.url), user, password, timeout_s=config.timeout_s,
                        cache_s=config.cache_s)
    try:
        missing = store.missing_calendars()
        if missing and config.create_calendars:
            store.create_calendars(missing)
            _say("store", f"made the calendars of {', '.join(missing)}")
        elif missing:
            store.close()
            raise ConfigError(f"[store] the CalDAV server has no calendar for {', '.join(missing)}: make them "
                              f"(or map them in {settings.rooms_file}; create_calendars = true makes them)")
    except StoreUnavailable as exc:
        _say("store", f"{exc}: going on; bookings fail with a clear error (and /healthz says so) until it "
                      "answers")
    return store


def build_text_pipeline(settings: Settings, store_file: Path | None = None, *, commit: bool = True,
                        parser: IntentSlotParser | LanguageRoutedParser | None = None,
                        verbose: bool = False) -> TextPipeline:
    """`parser`: an already built one (tests and benchmarks share one); by default, the configured languages'."""
    policy = _time_policy(settings.booking)
    rooms = RoomDirectory.load(settings.rooms_file)
    parser = parser or build_language_parser(settings, verbose=verbose)
    store = build_store(settings, store_file, commit, rooms)
    dispatcher = Dispatcher(store, rooms, max_length=timedelta(hours=settings.booking.max_hours), policy=policy,
                            owners_only=settings.access.own_bookings_only)
    dialogue = Dialogue(dispatcher, rooms, policy,
                        timedelta(seconds=settings.booking.conversation_idle_seconds))
    return TextPipeline(parser, dialogue, store, rooms)


def recognizer_hotwords(settings: Settings, language: Language = DEFAULT) -> str | None:
    """The room directory's names and the domain's verbs, for the recognizer ([asr] hotwords). Measured on the
    spoken corpus (docs/nlu.md): it hears "Book Denali" right where tiny.en alone wrote "Booked in Ollie", and
    it put no room name into silence, the LibriVox readings or the phone call. In Chinese: requests as they are
    said and the rooms' Chinese names, in simplified characters, which also keeps Whisper's writing simplified;
    on the spoken Chinese corpus it took base from 9 to 20 of 35 transcripts exactly right, against the rooms and
    verbs alone (docs/multilingual.md)."""
    if not settings.asr.hotwords:
        return None
    return language.hotwords(RoomDirectory.load(settings.rooms_file).rooms)


def stream_config(settings: Settings) -> StreamConfig:
    """[audio] and [turn]: with a turn model the endpointer reports pauses, where the turn is read or heard."""
    audio = settings.audio
    pause_ms = 0 if turn_model(settings.turn).listens == NOTHING else settings.turn.read_after_ms
    endpointer = EndpointerConfig(pre_roll_ms=audio.pre_roll_ms, hangover_ms=audio.hangover_ms,
                                  min_speech_ms=audio.min_speech_ms, max_utterance_ms=audio.max_utterance_ms,
                                  pause_ms=pause_ms)
    return StreamConfig(endpointer, audio.vad_aggressiveness, audio.partial_interval_ms, audio.quiet_below_peak_db)


def load_policy(settings: Settings) -> LoadPolicy:
    return LoadPolicy(settings.serving.asr, settings.serving.nlu, settings.audio.partial_budget_ms)


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
                                   recognizer_hotwords(settings), hypotheses=asr.hypotheses)
    _say("asr", f"faster-whisper {model} ({asr.device}, {asr.compute_type}, beam {asr.beam_size}, "
                f"{asr.hypotheses} hypotheses for finals and reads)")
    recognizer.warm_up()
    return recognizer


def build_language_recognizer(settings: Settings, language: Language) -> WhisperRecognizer | None:
    """The recognizer for sessions that speak a language other than English: its [asr] models entry (a
    multilingual Whisper; default: the profile's) told that language, with its prompt and its transcripts put
    right for the rooms; None when that is "" (such sessions are refused with `language_unavailable`)."""
    asr = settings.asr
    model = asr.model_for(language)
    if language not in settings.nlu.later or not model:
        return None
    rooms = RoomDirectory.load(settings.rooms_file).rooms
    rewrite = language.rewrite_for_rooms(rooms) if language.rewrite_for_rooms is not None else None
    recognizer = WhisperRecognizer(settings.cache_dir, model, asr.device, asr.compute_type, asr.beam_size,
                                   recognizer_hotwords(settings, language), language=language.code, rewrite=rewrite)
    _say("asr", f"faster-whisper {model} for {language.name} ({asr.device}, {asr.compute_type})")
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
    parser = _parser(settings, model, TritonNLUBackend(models, model.files.num_intents, model.files.num_slot_labels))
    meanwhile = ", its calls go to the others" if len(models.servers) > 1 else ""
    for server in models.servers:
        ready = all(server.ready(name) for name in ("asr", "nlu"))
        _say("serve", f"models on triton://{server.address}: " + (
            "ready" if ready else f"not answering yet{meanwhile}; finals are retried for up to "
                                  f"{settings.model_server.retry_s:g} s while none answers"))
    return RemoteRecognizer(models), parser


def build_voice_server(settings: Settings, store_file: Path | None = None, asr_model: str | None = None,
                       models_url: str | None = None, build_missing: Callable[[Language, Progress], None] | None = None
                       ) -> VoiceServer:
    """Models loaded and warm; the recognizer first (a CUDA restart, if one is needed, comes before any other
    loading). With `models_url` (triton://HOST:PORT) this process is a gateway: the models run on the model
    server, and several gateways share it.

    English is served as soon as its model is ready; the other languages of [nlu] languages (Chinese) are made
    ready behind it, in a thread (each model trained first, in a process of its own, when the cache has none:
    minutes), and sessions that ask for one meanwhile are told how far along it is. `build_missing(language,
    progress)`: how a missing model is built (default: `assistant train --language CODE` at a lower priority)."""
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
        later = settings.nlu.later
        if later:
            routed = LanguageRoutedParser(english, dict.fromkeys(later))
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
    add_speech(settings, workers)
    if routed is not None:
        routed.waiting = workers.unavailable
        for language in settings.nlu.later:
            make_language_ready(settings, workers, routed, language, build_missing)
    return VoiceServer(workers, stream_config(settings))


def add_speech(settings: Settings, workers: Workers) -> None:
    """Spoken replies: every language's voice loaded now (a second or less each), or none where [speech] is off."""
    from assistant.server.speech import load_speech

    voices = {language: settings.speech.voice_for(language) for language in LANGUAGES}
    workers.speech_settings = settings.speech
    workers.speech = load_speech(voices, workers.metrics)
    spoken = [f"{language.code} {spec}" for language, spec in voices.items() if spec]
    _say("speech", f"replies spoken ({', '.join(spoken)}); echo cancelling "
                   f"{'on' if settings.speech.echo_cancel else 'off'}" if workers.speech is not None
         else "replies are shown, not spoken ([speech] enabled = false, or no voice loaded)")


def make_language_ready(settings: Settings, workers: Workers, routed: LanguageRoutedParser, language: Language,
                        build: Callable[[Language, Progress], None] | None = None) -> None:
    """In the background: the language's model (built first when the cache has none), its parser, then its
    recognizer (multilingual: it also tells languages apart for "auto" sessions), installed into the serving
    workers and parser when all are ready."""
    def make(progress: Progress, loading: Callable[[], None]) -> tuple[IntentSlotParser, WhisperRecognizer | None]:
        model = language_model(settings, language, progress, build)  # built first, in this thread, when missing
        loading()
        return (build_parser(settings, model, verbose=True),
                build_language_recognizer(settings, language))

    def install(made: tuple[IntentSlotParser, WhisperRecognizer | None]) -> None:
        parser, recognizer = made
        routed.install(language, parser)  # typed text first: a session's first words are parsed by it
        if recognizer is not None:
            workers.add_language(language, recognizer, recognizer)
        workers.note_models(language, recognizer, parser.backend.info())

    workers.builds.start(language, make, install)
