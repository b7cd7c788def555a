import tomllib
from dataclasses import asdict
from pathlib import Path

import pytest

from assistant.config import (
    DEFAULT_CONFIG,
    AccessSettings,
    ASRSettings,
    AudioSettings,
    BookingSettings,
    LimitsSettings,
    NLUSettings,
    ServingSettings,
    StoreSettings,
    load_settings,
)
from assistant.errors import ConfigError


def test_default_toml_states_the_code_defaults() -> None:
    data = tomllib.loads(DEFAULT_CONFIG.read_text())
    assert data["nlu"] == asdict(NLUSettings())
    older = {"store"}  # [booking] store: the older spelling of [store] file, left out of the file
    assert data["booking"] == {k: v for k, v in asdict(BookingSettings()).items() if k not in older}
    assert data["store"] == asdict(StoreSettings())
    assert data["audio"] == asdict(AudioSettings())
    assert data["asr"] == asdict(ASRSettings())
    assert data["serving"] == asdict(ServingSettings())
    assert data["limits"] == asdict(LimitsSettings())
    assert data["access"] == asdict(AccessSettings())


def test_cache_dir_follows_xdg(tmp_path: Path) -> None:
    settings = load_settings(None, {"XDG_CACHE_HOME": str(tmp_path)})
    assert settings.cache_dir == tmp_path / "voice-assistant"
    assert settings.rooms_file == DEFAULT_CONFIG.parent / "rooms.toml"
    assert load_settings(None, {"HOME": str(tmp_path)}).cache_dir == tmp_path / ".cache" / "voice-assistant"


@pytest.mark.parametrize(("text", "message"), [
    ("[nlu]\nbackedn = 'onnxruntime'\n", "unknown key(s) backedn"),
    ("[nlu]\nthreads = 'two'\n", "expected int"),
    ("[nlu]\nmin_confidence = true\n", "expected float"),
    ("[gpu]\nx = 1\n", "unknown section(s) gpu"),
    ("[nlu\n", "Expected"),
    ("[limits]\nmax_connections = 0\n", "max_connections: at least 1"),
    ("[limits]\naudio_speed = 0.5\n", "audio_speed: at least 1"),
    ("[limits]\nidle_timeout_s = -1\n", "idle_timeout_s: more than 0"),
    ("[access]\nown_bookings_only = 'yes'\n", "expected bool"),
    ("[store]\nbackend = 'postgres'\n", "backend: 'postgres' is not one of sqlite, caldav"),
    ("[store]\nurl = 'https://bot:secret@dav.example.com/'\n", "credentials never go in the URL"),
    ("[store]\nurl = 'dav.example.com'\n", "an http:// or https:// URL"),
    ("[store]\nfile = 'a.sqlite'\n[booking]\nstore = 'b.sqlite'\n", "name different files"),
    ("[audio]\nvad_aggressiveness = 5\n", "vad_aggressiveness: webrtcvad's 0, 1, 2 or 3"),
    ("[audio]\nhangover_ms = -300\n", "hangover_ms: milliseconds, 0 to 60000"),
    ("[audio]\nhangover_ms = 10\n", "hangover_ms: at least 20 ms"),
    ("[audio]\nmax_utterance_ms = 45000\n", "max_utterance_ms: more than min_speech_ms"),
    ("[access]\ntrusted_proxies = ['the proxy']\n", "trusted_proxies: 'the proxy' is no IP address"),
    ("[access]\nallowed_origins = ['intranet.example']\n", "allowed_origins: 'intranet.example' is no web origin"),
    ("[access]\nallowed_hosts = ['https://a.example']\n", "allowed_hosts: 'https://a.example' is no host name"),
    ("[asr]\nmodels = { en = 'base' }\n", "models: a Whisper model name for each of zh"),
    ("[asr]\nmodels = { xx = 'base' }\n", "models: a Whisper model name"),
    ("[asr]\nchinese_model = 'base'\n", 'chinese_model is now models = { zh = "..." }'),
])
def test_bad_config_is_explained(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_settings(path, {})


def test_each_other_language_is_heard_by_its_own_model_defaulted_from_its_profile(tmp_path: Path) -> None:
    from assistant.language.registry import DEFAULT, get

    path = tmp_path / "asr.toml"
    path.write_text("[asr]\nmodels = { zh = 'small' }\n")
    chosen = load_settings(path, {}).asr
    assert (chosen.model_for(DEFAULT), chosen.model_for(get("zh"))) == ("tiny.en", "small")
    assert load_settings(None, {}).asr.model_for(get("zh")) == get("zh").recognizer == "base"


def test_int_is_accepted_for_float(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("[nlu]\nmin_confidence = 1\nbackend = 'torch-eager'\n")
    nlu = load_settings(path, {}).nlu
    assert nlu.min_confidence == 1.0 and nlu.backend == "torch-eager"


def test_room_directory_has_the_default_rooms() -> None:
    rooms = tomllib.loads((DEFAULT_CONFIG.parent / "rooms.toml").read_text())["room"]
    assert {r["name"]: r["seats"] for r in rooms} == {
        "Everest": 12, "Kilimanjaro": 8, "Denali": 6, "Fuji": 4, "Matterhorn": 10, "Olympus": 20}
    assert all(isinstance(r["aliases"], list) for r in rooms)


def test_the_gpu_config_loads_and_asks_for_the_gpu_path() -> None:
    settings = load_settings(DEFAULT_CONFIG.parent / "gpu.toml", {"HOME": "/home/someone"})
    assert settings.nlu.backend == "auto" and settings.asr.device == "cuda"
    assert settings.asr.compute_type == "float16" and settings.serving.asr_max_batch > 1
    assert settings.rooms_file == DEFAULT_CONFIG.parent / "rooms.toml"


@pytest.mark.parametrize("hours", ["0", "-1", "25"])
def test_max_hours_out_of_range_is_refused_before_any_model_loads(tmp_path: Path, hours: str) -> None:
    from assistant.wiring import build_text_pipeline

    path = tmp_path / "c.toml"
    path.write_text(f"[booking]\nmax_hours = {hours}\n")
    with pytest.raises(ConfigError, match="max_hours"):
        build_text_pipeline(load_settings(path, {"HOME": str(tmp_path)}), tmp_path / "b.sqlite")


def test_set_overrides_one_key_for_one_run(tmp_path: Path) -> None:
    settings = load_settings(None, {}, ["limits.max_connections=1024", "asr.model=base", "turn.model=\"hangover\"",
                                        "nlu.profile_batch=[1, 4, 16]", "access.own_bookings_only=false"])
    assert settings.limits.max_connections == 1024 and settings.asr.model == "base"
    assert settings.turn.model == "hangover" and settings.nlu.profile_batch == [1, 4, 16]
    assert settings.access.own_bookings_only is False
    for bad, message in (("limits.max_connections", "SECTION.KEY=VALUE"), ("nosection=1", "SECTION.KEY=VALUE"),
                         ("limits.max_conections=5", "unknown key"), ("limits.max_connections=many", "expected int")):
        with pytest.raises(ConfigError, match=message):
            load_settings(None, {}, [bad])


def test_a_section_refuses_a_bad_value_however_it_is_built() -> None:
    # in code too, not only from a file: a settings object that exists is a valid one
    from dataclasses import replace

    from assistant.config import BookingSettings, LimitsSettings, NLUSettings, ServingSettings
    from assistant.errors import SettingError

    for build, key in ((lambda: replace(LimitsSettings(), max_connections=0), "max_connections"),
                       (lambda: BookingSettings(morning_hours=[11, 8]), "morning_hours"),
                       (lambda: NLUSettings(languages=["zh"]), "languages"),
                       (lambda: NLUSettings(profile_batch=[8, 1, 64]), None),
                       (lambda: ServingSettings(nlu_max_queue=0), None)):
        with pytest.raises(SettingError) as refused:
            build()
        assert refused.value.key == key
    assert ServingSettings(asr_max_batch=4).asr.max_batch == 4  # the one batching type, built from [serving]


def test_the_store_file_keeps_its_older_spelling_and_credentials_files_are_found_beside_the_config(
        tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("[booking]\nstore = '/data/rooms.sqlite'\n")
    assert load_settings(path, {}).store_file == Path("/data/rooms.sqlite")
    path.write_text("[store]\nbackend = 'caldav'\nurl = 'http://localhost:5232/rooms/'\n"
                    "credentials_file = 'caldav.secret'\n")
    store = load_settings(path, {}).store
    assert (store.backend, store.credentials_file) == ("caldav", str(tmp_path / "caldav.secret"))


def test_a_config_of_ones_own_needs_only_what_it_changes(tmp_path: Path) -> None:
    mine = tmp_path / "elsewhere" / "mine.toml"
    mine.parent.mkdir()
    mine.write_text("[store]\nfile = 'team.sqlite'\n[nlu]\nthreads = 2\n")
    settings, default = load_settings(mine, {}), load_settings(None, {})
    assert settings.rooms_file == DEFAULT_CONFIG.parent / "rooms.toml" and settings.rooms_file.is_file()
    assert settings.store_file == Path("team.sqlite") and settings.nlu.threads == 2
    assert settings.nlu.languages == default.nlu.languages and settings.turn == default.turn


def test_a_config_with_rooms_of_its_own_finds_them_beside_itself(tmp_path: Path) -> None:
    mine = tmp_path / "mine.toml"
    mine.write_text("[paths]\nrooms = 'our-rooms.toml'\n")
    assert load_settings(mine, {}).rooms_file == tmp_path / "our-rooms.toml"
    other = tmp_path / "caldav" / "mine.toml"  # a rooms.toml beside the file (rooms mapped to calendars)
    other.parent.mkdir()
    other.write_text("[store]\nbackend = 'sqlite'\n")
    (other.parent / "rooms.toml").write_text((DEFAULT_CONFIG.parent / "rooms.toml").read_text())
    assert load_settings(other, {}).rooms_file == other.parent / "rooms.toml"
