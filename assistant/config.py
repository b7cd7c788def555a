"""Settings: parsed once at the edge (CLI) from configs/*.toml into frozen dataclasses, then passed down.

Each section refuses a bad value when it is built (`__post_init__` raises SettingError), however it is built: from a
file, with `--set`, or with `dataclasses.replace` in code. Loading names the file and section in the message."""

from __future__ import annotations

import ipaddress
import tomllib
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from assistant.batching import BatchPolicy
from assistant.errors import ConfigError, SettingError
from assistant.event_loop import EVENT_LOOPS
from assistant.language.profile import Language
from assistant.language.registry import CODES, DEFAULT, get, known
from assistant.turn.policy import TurnSettings
from engines.base import ShapeProfile

__all__ = ["NLUSettings", "BookingSettings", "StoreSettings", "STORE_BACKENDS", "AudioSettings", "ASRSettings",
           "SpeechSettings",
           "ServingSettings", "TurnSettings", "LimitsSettings", "AccessSettings", "ModelServerSettings", "Settings",
           "DEFAULT_CONFIG", "load_settings", "ASR_ENGINES"]

ASR_ENGINES = ("whisper", "moonshine")
STORE_BACKENDS = ("sqlite", "caldav")
DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "configs" / "default.toml"


@dataclass(frozen=True)
class NLUSettings:
    backend: str = "onnxruntime"
    precision: str = "auto"
    threads: int = 0
    min_confidence: float = 0.5
    max_tokens: int = 128
    max_chars: int = 1000
    batch_size: int = 64
    # the languages whose models are served (assistant/language/registry.py; English always): "en" MiniLM, "zh"
    # Chinese and mixed requests on multilingual-e5 (a text with a Chinese character goes there)
    languages: list[str] = field(default_factory=lambda: list(CODES))
    # GPU backends: shapes an engine is built for / CUDA graphs are captured for, as [min, opt, max]
    profile_batch: list[int] = field(default_factory=lambda: [1, 8, 64])
    profile_seq: list[int] = field(default_factory=lambda: [8, 32, 128])

    def __post_init__(self) -> None:
        if DEFAULT.code not in self.languages or not all(known(code) for code in self.languages):
            others = ", ".join(f'"{code}"' for code in CODES if code != DEFAULT.code)
            raise SettingError("languages", f'"{DEFAULT.code}", optionally with {others}; got {self.languages!r}')
        _ = self.shapes  # refused here, not when a GPU backend is first built

    @property
    def served(self) -> tuple[Language, ...]:
        """The languages whose models are served, the default first."""
        return (DEFAULT, *(get(code) for code in dict.fromkeys(self.languages) if code != DEFAULT.code))

    @property
    def later(self) -> tuple[Language, ...]:
        """The languages made ready behind the default one."""
        return self.served[1:]

    @property
    def shapes(self) -> ShapeProfile:
        """profile_batch / profile_seq as the GPU backends' shapes."""
        batch, seq = self.profile_batch, self.profile_seq
        if len(batch) != 3 or len(seq) != 3:
            raise SettingError(None, f"profile_batch and profile_seq are [min, opt, max]; got {batch!r}, {seq!r}")
        try:
            return ShapeProfile((batch[0], batch[1], batch[2]), (seq[0], seq[1], seq[2]))
        except ValueError as exc:
            raise SettingError(None, str(exc)) from None


@dataclass(frozen=True)
class BookingSettings:
    store: str = ""  # the older spelling of [store] file
    default_duration_minutes: int = 30
    morning_hours: list[int] = field(default_factory=lambda: [8, 11])  # bare hours read as am (inclusive)
    afternoon_hours: list[int] = field(default_factory=lambda: [1, 7])  # bare hours read as pm (inclusive)
    conversation_idle_seconds: int = 300
    max_hours: float = 10.0  # a longer booking is a question, never a command (the guard)

    def __post_init__(self) -> None:
        for name in ("morning_hours", "afternoon_hours"):
            hours = getattr(self, name)
            if len(hours) != 2 or not all(isinstance(h, int) and 1 <= h <= 12 for h in hours) or hours[0] > hours[1]:
                raise SettingError(name, f"must be [first, last] clock hours 1-12, got {hours!r}")
        if not 0 < self.max_hours <= 24:
            raise SettingError("max_hours", f"must be more than 0 and at most 24, got {self.max_hours!r}")


@dataclass(frozen=True)
class StoreSettings:
    """Where bookings live (docs/booking.md#store). Credentials are never here: a file named here or the
    environment (ASSISTANT_CALDAV_USER, ASSISTANT_CALDAV_PASSWORD)."""

    backend: str = "sqlite"  # sqlite: a file (the default) | caldav: each room's calendar on a CalDAV server
    file: str = ""  # SQLite file; "" = $XDG_DATA_HOME/voice-assistant/bookings.sqlite
    url: str = ""  # CalDAV: where the rooms' calendars are (a room's `calendar` in rooms.toml, else ROOM/)
    credentials_file: str = ""  # CalDAV: one line USER:PASSWORD (only its owner may read it)
    timeout_s: float = 5.0  # CalDAV: a request's limit; past it the server counts as down
    cache_s: float = 2.0  # CalDAV: reads are cached this long (writes check afresh; our writes drop the cache)
    create_calendars: bool = False  # CalDAV: make a missing room calendar at start (a demo server), else refuse

    def __post_init__(self) -> None:
        if self.backend not in STORE_BACKENDS:
            raise SettingError("backend", f"{self.backend!r} is not one of {', '.join(STORE_BACKENDS)}")
        if self.url and not self.url.startswith(("http://", "https://")):
            raise SettingError("url", f"an http:// or https:// URL, got {self.url!r}")
        if urllib.parse.urlsplit(self.url).username is not None:
            raise SettingError("url", "credentials never go in the URL: use credentials_file or the environment")
        if self.timeout_s <= 0 or self.cache_s < 0:
            raise SettingError(None, "timeout_s is more than 0 and cache_s at least 0")


@dataclass(frozen=True)
class AudioSettings:
    vad_aggressiveness: int = 2  # webrtcvad 0 (least) .. 3 (most eager to call audio non-speech)
    quiet_below_peak_db: float = 40.0  # energy gate: this far under the speech before it is silence (0 = off)
    pre_roll_ms: int = 300
    hangover_ms: int = 300  # this much non-speech ends an utterance
    min_speech_ms: int = 200
    max_utterance_ms: int = 15000
    partial_interval_ms: int = 600  # 0: no partial transcripts
    partial_budget_ms: int = 100  # while others speak, partials only if decodes take at most this long

    def __post_init__(self) -> None:
        if self.vad_aggressiveness not in (0, 1, 2, 3):
            raise SettingError("vad_aggressiveness", f"webrtcvad's 0, 1, 2 or 3; got {self.vad_aggressiveness!r}")
        if not 0 <= self.quiet_below_peak_db <= 120:
            raise SettingError("quiet_below_peak_db", f"0 (off) to 120 dB; got {self.quiet_below_peak_db!r}")
        for name in ("pre_roll_ms", "hangover_ms", "min_speech_ms", "partial_interval_ms", "partial_budget_ms"):
            if not 0 <= getattr(self, name) <= 60_000:
                raise SettingError(name, f"milliseconds, 0 to 60000; got {getattr(self, name)!r}")
        if self.hangover_ms < 20:  # one 20 ms frame (the endpointer's): less ends an utterance at any unvoiced frame
            raise SettingError("hangover_ms", f"at least 20 ms (one frame); got {self.hangover_ms!r}")
        # an utterance is decoded whole: it must fit the recognizer's 30 s window
        if not self.min_speech_ms < self.max_utterance_ms <= 30_000:
            raise SettingError("max_utterance_ms", f"more than min_speech_ms ({self.min_speech_ms}) and at most "
                                                   f"30000 (Whisper's window); got {self.max_utterance_ms!r}")


@dataclass(frozen=True)
class ASRSettings:
    engine: str = "whisper"  # whisper (faster-whisper: any device, English and Chinese) | moonshine (English, CPU)
    model: str = "tiny.en"
    device: str = "cpu"
    compute_type: str = "int8"
    beam_size: int = 1
    hypotheses: int = 4  # readings of a final or a read that understanding chooses from (1: the greedy text alone)
    hotwords: bool = True  # prime the recognizer with the room names and the domain's verbs
    # the multilingual Whisper that hears each language other than English, by code ({ zh = "small" }); a language
    # left out gets its profile's (assistant/language); "" hears none (its sessions are refused)
    models: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for code, model in self.models.items():
            if not known(code) or code == DEFAULT.code or not isinstance(model, str):
                others = ", ".join(code for code in CODES if code != DEFAULT.code)
                raise SettingError("models", f"a Whisper model name for each of {others} (English is [asr] model); "
                                             f"got {code} = {model!r}")
        if self.engine not in ASR_ENGINES:
            raise SettingError("engine", f"{self.engine!r} is not one of {', '.join(ASR_ENGINES)}")
        if self.engine == "moonshine" and self.device != "cpu":
            raise SettingError(None, "engine \"moonshine\" runs on the CPU (device = \"cpu\"); on a GPU use whisper")
        if isinstance(self.hypotheses, bool) or not isinstance(self.hypotheses, int) or not 1 <= self.hypotheses <= 8:
            raise SettingError("hypotheses", f"{self.hypotheses!r} is not a whole number from 1 to 8")

    def model_for(self, language: Language) -> str:
        """The Whisper model that hears the language ("": none)."""
        if language is DEFAULT:
            return self.model
        return self.models.get(language.code, language.recognizer)


@dataclass(frozen=True)
class ServingSettings:
    """The voice server's dynamic batchers, one per model worker (like Triton's max batch and queue delay)."""

    nlu_max_batch: int = 64
    nlu_max_delay_us: int = 0  # an idle NLU worker waits this long for more requests before running one
    asr_max_batch: int = 1  # final decodes per call; >1 decodes utterances that end together in one call (GPU)
    asr_max_delay_us: int = 0
    asr_max_queue: int = 256  # decodes waiting, all sessions; past it a request is refused ("overloaded")
    nlu_max_queue: int = 1024
    event_loop: str = "auto"  # auto (uvloop when installed) | uvloop | asyncio

    def __post_init__(self) -> None:
        if min(self.asr_max_batch, self.nlu_max_batch, self.asr_max_queue, self.nlu_max_queue) < 1:
            raise SettingError(None, "asr/nlu max_batch and max_queue are at least 1")
        if self.event_loop not in EVENT_LOOPS:  # (whether uvloop is installed is the serve command's to check)
            raise SettingError("event_loop", f"event loop must be one of {', '.join(EVENT_LOOPS)}, "
                                             f"not {self.event_loop!r}")

    @property
    def asr(self) -> BatchPolicy:
        return BatchPolicy(self.asr_max_batch, self.asr_max_delay_us, self.asr_max_queue)

    @property
    def nlu(self) -> BatchPolicy:
        return BatchPolicy(self.nlu_max_batch, self.nlu_max_delay_us, self.nlu_max_queue)


@dataclass(frozen=True)
class LimitsSettings:
    """What one client may take of the server (docs/reliability.md). A client is an identity: the token's name on
    a server with tokens, else the remote address ([access] trusted_proxies: the address a proxy forwarded)."""

    max_connections: int = 256  # websocket connections at once, all clients; more are refused (HTTP 503)
    max_connections_per_client: int = 32  # ... of one client identity
    start_timeout_s: float = 10.0  # a connection that sends no start within this is closed
    idle_timeout_s: float = 120.0  # a session that sends nothing for this long is closed
    max_session_s: float = 3600.0  # a session is closed after this long; the client reconnects to go on
    max_queued_utterances: int = 3  # utterances of one session waiting to be recognized; more are refused
    max_queued_utterances_per_client: int = 6  # ... of all one client's sessions together
    audio_speed: float = 4.0  # audio is admitted at most this many times real time, over the session ...
    audio_burst_s: float = 30.0  # ... plus this much ahead at once (a recording sent whole)
    client_audio_speed: float = 32.0  # all one client's sessions together: this many times real time ...
    client_audio_burst_s: float = 60.0  # ... plus this much ahead
    # A token server: handshakes that carry no token (a client that sends it in `start` instead) wait apart, in a
    # small pool of their own, and must authenticate this soon; they never take an authenticated client's place.
    max_unauthenticated: int = 16
    max_unauthenticated_per_address: int = 4
    unauthenticated_timeout_s: float = 0.5  # a client sends start as soon as it connects: half a second is ample
    wrong_tokens_before_backoff: int = 5  # wrong tokens from one address before it must wait (HTTP 429) ...
    max_backoff_s: float = 60.0  # ... 1 s, doubling with every further wrong token, up to this

    def __post_init__(self) -> None:
        for name in ("max_connections", "max_connections_per_client", "max_queued_utterances",
                     "max_queued_utterances_per_client", "max_unauthenticated", "max_unauthenticated_per_address",
                     "wrong_tokens_before_backoff"):
            if getattr(self, name) < 1:
                raise SettingError(name, "at least 1")
        for name in ("start_timeout_s", "idle_timeout_s", "max_session_s", "audio_speed", "audio_burst_s",
                     "client_audio_speed", "client_audio_burst_s", "unauthenticated_timeout_s", "max_backoff_s"):
            if not getattr(self, name) > 0:
                raise SettingError(name, "more than 0")
        for name in ("audio_speed", "client_audio_speed"):
            if getattr(self, name) < 1:
                raise SettingError(name, "at least 1 (real time)")


@dataclass(frozen=True)
class AccessSettings:
    """Who may use the server. Loopback binds need no set-up; any other bind needs a token."""

    tokens_file: str = ""  # lines "NAME TOKEN": each name is an identity that owns its bookings
    allowed_origins: list[str] = field(default_factory=list)  # web origins besides the page's own
    allowed_hosts: list[str] = field(default_factory=list)  # Host names a loopback bind answers besides localhost
    own_bookings_only: bool = True  # cancel, move and undo act only on the caller's own bookings
    # Proxies whose X-Forwarded-For is believed: behind one, every client would otherwise be the proxy's address
    trusted_proxies: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        for proxy in self.trusted_proxies:
            try:
                ipaddress.ip_address(proxy)
            except ValueError:
                raise SettingError("trusted_proxies", f"{proxy!r} is no IP address") from None
        for origin in self.allowed_origins:
            parts = urllib.parse.urlsplit(origin.rstrip("/"))
            if parts.scheme not in ("http", "https") or not parts.hostname or parts.path or parts.query:
                raise SettingError("allowed_origins", f"{origin!r} is no web origin (https://host[:port])")
        for host in self.allowed_hosts:
            if not host or any(mark in host for mark in "/:@ "):
                raise SettingError("allowed_hosts", f"{host!r} is no host name (a name, no scheme or port)")


@dataclass(frozen=True)
class ModelServerSettings:
    """`assistant model-server` (Triton through nvidia-pytriton), and the gateways that use it
    (`assistant serve --models triton://HOST:PORT`). Its batching is [serving]'s: the same keys, now Triton's."""

    address: str = "127.0.0.1"  # the model server binds here (HTTP, gRPC, metrics)
    http_port: int = 8000
    grpc_port: int = 8001  # the port gateways call: --models triton://HOST:8001
    metrics_port: int = 8002  # Triton's Prometheus metrics (queue times, batch sizes, GPU utilization)
    port_stride: int = 10  # `--servers N`: server i listens on each port + i * port_stride (8001, 8011, ...)
    python: str = ".venv-triton/bin/python"  # its own environment (pytriton pins numpy<2), relative to the cwd
    asr_instances: int = 1  # copies of the recognizer (each its own thread; on a GPU, its own CUDA stream)
    gateway_calls: int = 4  # a gateway's recognition calls in flight at once; Triton merges them into batches
    retry_s: float = 60.0  # a gateway retries a final's calls this long while the model server is unavailable
    timeout_s: float = 30.0  # one call's limit before it counts as unavailable

    def __post_init__(self) -> None:
        for name in ("http_port", "grpc_port", "metrics_port"):
            if not 0 <= getattr(self, name) <= 65535:
                raise SettingError(name, "a port number, 0-65535")
        if self.port_stride < 3:  # a server's three ports must not run into the next server's
            raise SettingError("port_stride", "at least 3")
        if self.asr_instances < 1 or self.gateway_calls < 1:
            raise SettingError(None, "asr_instances and gateway_calls are at least 1")
        if self.retry_s < 0 or self.timeout_s <= 0:
            raise SettingError(None, "retry_s is at least 0 and timeout_s more than 0")


@dataclass(frozen=True)
class SpeechSettings:
    """Spoken replies (docs/speech.md): a session that asks (`start` "speech": true; the page and `assistant mic`
    do unless told not to) hears each reply as well as seeing it."""

    enabled: bool = True  # false: replies are shown only, whatever a session asks
    # the voice of each language, by code ("piper:joe", "piper:/path/voice.onnx", "espeak:cmn"; "" = none): a
    # language left out gets its profile's (English: Piper's joe; Chinese: eSpeak NG's Mandarin)
    voices: dict[str, str] = field(default_factory=dict)
    echo_cancel: bool = True  # the server takes its own reply out of the microphone audio (AEC3)
    echo_tail_ms: int = 800  # ... and keeps doing so this long after a reply ends (reverberation, buffers)

    def __post_init__(self) -> None:
        for code, spec in self.voices.items():
            if not known(code) or not isinstance(spec, str):
                raise SettingError("voices", f"a voice for each of {', '.join(CODES)}, e.g. {{ en = \"piper:joe\" }}; "
                                             f"got {code} = {spec!r}")
        if not 0 <= self.echo_tail_ms <= 5000:
            raise SettingError("echo_tail_ms", "from 0 to 5000")

    def voice_for(self, language: Language) -> str:
        return self.voices.get(language.code, language.voice) if self.enabled else ""


@dataclass(frozen=True)
class Settings:
    cache_dir: Path
    rooms_file: Path
    store_file: Path
    timezone: str = ""
    nlu: NLUSettings = field(default_factory=NLUSettings)
    booking: BookingSettings = field(default_factory=BookingSettings)
    store: StoreSettings = field(default_factory=StoreSettings)
    audio: AudioSettings = field(default_factory=AudioSettings)
    asr: ASRSettings = field(default_factory=ASRSettings)
    serving: ServingSettings = field(default_factory=ServingSettings)
    turn: TurnSettings = field(default_factory=TurnSettings)
    limits: LimitsSettings = field(default_factory=LimitsSettings)
    access: AccessSettings = field(default_factory=AccessSettings)
    models_dir: Path | None = None  # built models by language ("en/", "zh/"); None: the project's models/shipped
    model_server: ModelServerSettings = field(default_factory=ModelServerSettings)
    speech: SpeechSettings = field(default_factory=SpeechSettings)


_RENAMED = {"chinese_model": 'models = { zh = "..." } ([asr], by language)'}


def _section(cls: type[Any], data: Mapping[str, Any], where: str) -> Any:
    known = {f.name: f for f in fields(cls)}
    unknown = set(data) - set(known)
    if unknown:
        renamed = [f"; {old} is now {new}" for old, new in _RENAMED.items() if old in unknown]
        raise ConfigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}{''.join(renamed)}")
    defaults = cls()
    values: dict[str, Any] = {}
    for key, value in data.items():
        expected = type(getattr(defaults, key))
        if isinstance(value, bool) != (expected is bool):  # bool is an int to Python, never to a config
            raise ConfigError(f"{where}.{key}: expected {expected.__name__}, got {value!r}")
        if expected is float and isinstance(value, int):
            value = float(value)
        if not isinstance(value, expected):
            raise ConfigError(f"{where}.{key}: expected {expected.__name__}, got {value!r}")
        values[key] = value
    try:
        return replace(defaults, **values)
    except SettingError as exc:
        raise ConfigError(f"{where}.{exc.key}: {exc.problem}" if exc.key else f"{where}: {exc.problem}") from None


def apply_overrides(data: dict[str, Any], overrides: Sequence[str]) -> None:
    """`--set SECTION.KEY=VALUE` (VALUE in TOML: 512, 2.5, true, "text", [1, 2]) over a config file's tables."""
    for item in overrides:
        name, sep, raw = item.partition("=")
        section, dot, key = name.strip().partition(".")
        if not sep or not dot or not section or not key:
            raise ConfigError(f"--set {item!r}: expected SECTION.KEY=VALUE, e.g. limits.max_connections=512")
        try:
            value = tomllib.loads(f"v = {raw.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw.strip()  # a bare word is text: --set asr.model=base
        table = data.setdefault(section, {})
        if not isinstance(table, dict):
            raise ConfigError(f"--set {item!r}: {section} is not a section")
        table[key] = value


def load_settings(path: Path | None, env: Mapping[str, str], overrides: Sequence[str] = ()) -> Settings:
    """Read a config file (default: configs/default.toml), with `--set` overrides over it; env supplies
    XDG_CACHE_HOME and HOME."""
    if path is not None and not path.is_file():  # a named file that is not there is a mistake, never the defaults
        raise ConfigError(f"--config {path}: no such file" if not path.exists() else f"--config {path}: not a file")
    path = path or DEFAULT_CONFIG
    data = _read_toml(path)
    # A file of one's own says only what it changes: every key it leaves out keeps default.toml's value. The room
    # directory is the one it names, else a rooms.toml beside it (docs/booking.md's CalDAV mapping), else
    # default.toml's: a three-line file in another folder still has rooms.
    named = "rooms" in data.get("paths", {})
    rooms_base = path.parent if named or (path.parent / "rooms.toml").is_file() else DEFAULT_CONFIG.parent
    if path != DEFAULT_CONFIG and DEFAULT_CONFIG.exists():
        data = _over(_read_toml(DEFAULT_CONFIG), data)
    apply_overrides(data, overrides)
    unknown = set(data) - {"paths", "nlu", "time", "booking", "store", "audio", "asr", "serving", "turn", "limits",
                            "access", "model_server", "speech"}
    if unknown:
        raise ConfigError(f"{path}: unknown section(s) {', '.join(sorted(unknown))}")
    paths = data.get("paths", {})
    cache = paths.get("cache_dir", "")
    if cache:
        cache_dir = Path(cache).expanduser()
    else:
        xdg = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".cache")
        cache_dir = Path(xdg) / "voice-assistant"
    rooms = rooms_base / paths.get("rooms", "rooms.toml")
    models_dir = Path(paths["models"]).expanduser() if paths.get("models") else None
    timezone = data.get("time", {}).get("timezone", "")
    booking: BookingSettings = _section(BookingSettings, data.get("booking", {}), f"{path} [booking]")
    store = _store(data.get("store", {}), booking, path)
    if store.file:
        store_file = Path(store.file).expanduser()
    else:
        xdg_data = env.get("XDG_DATA_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".local" / "share")
        store_file = Path(xdg_data) / "voice-assistant" / "bookings.sqlite"
    return Settings(cache_dir=cache_dir, rooms_file=rooms, store_file=store_file, timezone=timezone,
                    nlu=_section(NLUSettings, data.get("nlu", {}), f"{path} [nlu]"), booking=booking, store=store,
                    audio=_section(AudioSettings, data.get("audio", {}), f"{path} [audio]"),
                    asr=_section(ASRSettings, data.get("asr", {}), f"{path} [asr]"),
                    serving=_section(ServingSettings, data.get("serving", {}), f"{path} [serving]"),
                    turn=_section(TurnSettings, data.get("turn", {}), f"{path} [turn]"),
                    limits=_section(LimitsSettings, data.get("limits", {}), f"{path} [limits]"),
                    access=_access(data.get("access", {}), path), models_dir=models_dir,
                    model_server=_section(ModelServerSettings, data.get("model_server", {}), f"{path} [model_server]"),
                    speech=_section(SpeechSettings, data.get("speech", {}), f"{path} [speech]"))


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text()) if path.exists() else {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from exc


def _over(base: dict[str, Any], mine: dict[str, Any]) -> dict[str, Any]:
    """`mine`'s keys over `base`'s, table by table (a table of `mine` changes only the keys it names)."""
    merged = dict(base)
    for section, table in mine.items():
        if isinstance(table, dict) and isinstance(merged.get(section), dict):
            merged[section] = {**merged[section], **table}
        else:
            merged[section] = table
    return merged


def _store(data: Mapping[str, Any], booking: BookingSettings, path: Path) -> StoreSettings:
    store: StoreSettings = _section(StoreSettings, data, f"{path} [store]")
    if booking.store:  # the older spelling of [store] file
        if store.file and store.file != booking.store:
            raise ConfigError(f"{path}: [booking] store and [store] file name different files; keep [store] file")
        store = replace(store, file=booking.store)
    if store.credentials_file and not Path(store.credentials_file).is_absolute():  # relative to the config file
        store = replace(store, credentials_file=str(path.parent / store.credentials_file))
    return store


def _access(data: Mapping[str, Any], path: Path) -> AccessSettings:
    access: AccessSettings = _section(AccessSettings, data, f"{path} [access]")
    if access.tokens_file and not Path(access.tokens_file).is_absolute():  # relative to the config file
        access = replace(access, tokens_file=str(path.parent / access.tokens_file))
    return access
