"""The benchmark harness itself: structure and correctness of its report, never its speed."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.bench.report import LatencyStats, format_table
from assistant.nlu.model_folder import NLUModel


def test_latency_stats_percentiles() -> None:
    stats = LatencyStats.from_seconds([i / 1000 for i in range(1, 101)])  # 1..100 ms
    assert stats.n == 100
    assert stats.p50_ms == pytest.approx(50.5)
    assert stats.p99_ms == pytest.approx(99.01)
    assert stats.mean_ms == pytest.approx(50.5)


def test_table_is_markdown() -> None:
    table = format_table(["a", "bb"], [[1, "x"], [22, "yyy"]])
    assert table.splitlines() == ["| a  | bb  |", "| -- | --- |", "| 1  | x   |", "| 22 | yyy |"]


@pytest.mark.usefixtures("meeting_model")
def test_bench_nlu_reports_every_backend_and_batch(tmp_path: Path) -> None:
    out = tmp_path / "nlu.json"
    proc = subprocess.run(
        [sys.executable, "-m", "assistant", "bench", "nlu", "--seconds", "0.05", "--batch-sizes", "1,4",
         "--backends", "onnxruntime:fp32,torch-eager,no-such-backend", "--json", str(out),
         "--plot", str(tmp_path / "nlu.png"), "--whole-path"],
        capture_output=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    report = json.loads(out.read_text())
    rows = {(r["backend"], r["batch_size"]) for r in report["rows"]}
    assert rows == {("onnxruntime", 1), ("onnxruntime", 4), ("torch-eager", 1), ("torch-eager", 4)}
    assert all(r["n"] >= 20 and 0 < r["p50_ms"] <= r["p99_ms"] for r in report["rows"])
    assert "unknown backend" in report["skipped"]["no-such-backend:auto"]
    assert report["machine"]["cores"] >= 1
    path = report["whole_path"]  # the first backend measured, one request at a time
    assert path["backend"] == "onnxruntime" and path["requests"] >= 20
    assert 0 < path["model_call"]["p50_ms"] < path["whole_text_path"]["p50_ms"]  # the path includes the call
    assert "speed-up vs torch-eager" in proc.stdout.decode()
    assert (tmp_path / "nlu.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_encoders_sets_the_chinese_network_beside_the_english_one(tmp_path: Path, meeting_model: NLUModel,
                                                                        chinese_model: NLUModel) -> None:
    """Both trained models, and a Chinese folder without weights (as copied to a GPU machine): untrained weights
    of the same shapes, and the report says so."""
    shapes_only = tmp_path / "zh"
    shapes_only.mkdir()
    for name in ("encoder_config.json", "labels.json", "tokenizer.json"):
        shutil.copy(chinese_model.folder / name, shapes_only / name)
    out = tmp_path / "encoders.json"
    proc = subprocess.run(
        [sys.executable, "-m", "assistant", "bench", "encoders", "--seconds", "0.05", "--batch-sizes", "1,2",
         "--folder", f"en={meeting_model.folder}", "--folder", f"zh={shapes_only}",
         "--backends", "torch-eager:fp32,onnxruntime:fp32", "--json", str(out)],
        capture_output=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    report = json.loads(out.read_text())
    rows = {(r["language"], r["backend"], r["batch_size"]) for r in report["rows"]}
    assert rows == {("en", "torch-eager", 1), ("en", "torch-eager", 2), ("en", "onnxruntime", 1),
                    ("en", "onnxruntime", 2), ("zh", "torch-eager", 1), ("zh", "torch-eager", 2)}
    assert report["weights_trained"] == {"en": True, "zh": False}
    assert "zh onnxruntime:fp32" in report["skipped"]  # no ONNX file was copied
    assert "p50 vs English" in proc.stdout.decode()


@pytest.mark.usefixtures("meeting_model")
def test_bench_expressions_counts_every_row_and_sets_duckling_beside_it(tmp_path: Path) -> None:
    from assistant.bench.expression_table import expressions

    out = tmp_path / "expressions.json"
    proc = subprocess.run([sys.executable, "-m", "assistant", "bench", "expressions", "--json", str(out)],
                          capture_output=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    report = json.loads(out.read_text())
    rows = len(expressions())
    assert report["rows"] == rows and sum(report["ours"]["counts"].values()) == rows
    assert len(report["misses"]) == rows - report["ours"]["counts"]["exact"]
    duckling = report["duckling"]  # installed by `make test` (requirements/bench.txt)
    assert sum(duckling["counts"].values()) == rows and duckling["per_call"]["n"] == rows


@pytest.mark.usefixtures("meeting_model")
def test_bench_turns_scores_every_policy_on_the_same_turns(tmp_path: Path) -> None:
    """Two turns of the pause corpus ('Book Everest tomorrow at' [600 ms] ...; 'Book Denali for' [500 ms] ...):
    a 300 ms hangover cuts both pauses, the reading holds both; each policy says what it booked."""
    out = tmp_path / "turns.json"
    proc = subprocess.run([sys.executable, "-m", "assistant", "bench", "turns", "--limit", "2", "--no-plain",
                           "--policies", "hangover-300,hangover-800,smart-turn,reading", "--json", str(out),
                           "--plot", str(tmp_path / "turns.png")], capture_output=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    points = {p["policy"]: p for p in json.loads(out.read_text())["points"]}
    assert list(points) == ["hangover-300", "hangover-800", "smart-turn", "reading"]
    for point in points.values():
        assert point["turns"] == 2 and point["pauses"] == 2 and point["wait"]["n"] == 2
    assert points["hangover-300"]["false_cutoffs"] == 2 and points["hangover-800"]["false_cutoffs"] == 0
    assert points["reading"]["false_cutoffs"] == 0 and points["reading"]["right"] == 2
    assert points["hangover-300"]["reads_per_turn"] == 0 and points["reading"]["reads_per_turn"] >= 2
    assert (tmp_path / "turns.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


JUDGED = {"intent": "book_meeting", "room": "denali", "start": "2026-12-03T09:00:00+01:00",
          "end": "2026-12-03T10:00:00+01:00"}


@pytest.mark.parametrize(("intent", "result", "verdict"), [
    ("book_meeting", {"type": "command", "committed": True, "command": {
        "action": "book_meeting", "room": "denali", "start": JUDGED["start"], "end": JUDGED["end"]}}, "exact"),
    ("book_meeting", {"type": "command", "committed": True, "command": {
        "action": "book_meeting", "room": "olympus", "start": JUDGED["start"], "end": JUDGED["end"]}},
     "wrong_booking"),
    ("book_meeting", {"type": "command", "committed": True, "command": {
        "action": "book_meeting", "room": "denali", "start": JUDGED["start"], "end": "2026-12-03T09:19:00+01:00"}},
     "wrong_booking"),
    ("book_meeting", {"type": "clarify", "missing": ["room"]}, "asked"),
    ("out_of_scope", {"type": "rejected"}, "wrong"),
    (None, None, "wrong"),
])
def test_the_voice_bench_judges_what_a_request_left_behind(intent: str | None, result: dict[str, object] | None,
                                                           verdict: str) -> None:
    from assistant.bench.voice import judge

    assert judge(JUDGED, intent, result) == verdict


def test_the_voice_bench_judges_a_booking_from_no_booking_request_wrong() -> None:
    from assistant.bench.voice import judge

    booked = {"type": "command", "committed": True, "command": {"action": "book_meeting", "room": "fuji"}}
    assert judge({"intent": "out_of_scope"}, "book_meeting", booked) == "wrong_booking"
    assert judge({"intent": "out_of_scope"}, "out_of_scope", {"type": "rejected"}) == "exact"
    assert judge({"intent": "cancel_meeting"}, "cancel_meeting", {"type": "command", "command": {
        "action": "cancel_meeting"}}) == "exact"


@pytest.mark.usefixtures("meeting_model")
def test_bench_voice_reports_each_voice_with_its_split_on_each_engine(tmp_path: Path) -> None:
    out, plot = tmp_path / "voice.json", tmp_path / "voice.png"
    proc = subprocess.run([sys.executable, "-m", "assistant", "bench", "voice", "--voices", "hibari,espeak",
                           "--engines", "whisper,moonshine", "--set", 'nlu.languages=["en"]',
                           "--limit", "2", "--json", str(out), "--plot", str(plot)],
                          capture_output=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    report = json.loads(out.read_text())
    assert report["engines"] == ["whisper", "moonshine"] and report["overrides"] == ['nlu.languages=["en"]']
    voices = report["voices"]
    assert [(v["asr"], v["voice"], v["split"], v["requests"]) for v in voices] == [
        ("whisper", "hibari", "tune", 2), ("whisper", "espeak", "untuned", 2),
        ("moonshine", "hibari", "tune", 2), ("moonshine", "espeak", "untuned", 2)]
    for voice in voices:
        assert sum(voice[k] for k in ("exact", "asked", "wrong", "wrong_booking")) == 2
        assert [u["file"] for u in voice["utterances"]] == ["r01.wav", "r02.wav"] and voice["latency"]["n"] >= 2
        memory = voice["server_memory"]
        assert 50 < memory["idle_rss_mb"] <= memory["peak_rss_mb"]
    assert plot.stat().st_size > 10_000


def _booked(booking_id: str, end: str, amends: str | None = None, action: str = "book_meeting") -> dict[str, object]:
    command: dict[str, object] = {"action": action, "room": "denali", "start": JUDGED["start"], "end": end,
                                  "booking_id": booking_id}
    if action == "reschedule_meeting":
        command.update(new_start=JUDGED["start"], new_end=end)
    if amends:
        command["amends"] = amends
    return {"type": "command", "committed": True, "command": command}


def test_a_reopened_request_is_judged_by_what_it_left_behind() -> None:
    from assistant.bench.voice import judge_request

    short = _booked("b1", "2026-12-03T09:30:00+01:00")  # "book Denali tomorrow at 9" [pause] "for an hour"
    moved = _booked("b1", JUDGED["end"], amends="b1", action="reschedule_meeting")
    replaced = _booked("b2", JUDGED["end"], amends="b1")
    assert judge_request(JUDGED, [("book_meeting", short), ("book_meeting", moved)]) == "exact"
    assert judge_request(JUDGED, [("book_meeting", short), ("book_meeting", replaced)]) == "exact"
    # the short booking left behind beside the right one: two bookings
    assert judge_request(JUDGED, [("book_meeting", short), ("book_meeting", _booked("b2", JUDGED["end"]))]) \
        == "wrong_booking"
    withdrawn = {"type": "clarify", "missing": ["duration"], "amends": "b1"}
    assert judge_request(JUDGED, [("book_meeting", short), ("book_meeting", withdrawn)]) == "asked"
    assert judge_request(JUDGED, [("out_of_scope", {"type": "rejected"}), ("book_meeting", replaced)]) == "exact"
    assert judge_request(JUDGED, []) == "wrong"


@pytest.mark.usefixtures("meeting_model")
def test_bench_store_sets_caldav_beside_sqlite_for_every_operation_and_spoken_request(tmp_path: Path) -> None:
    out = tmp_path / "store.json"
    proc = subprocess.run(
        [sys.executable, "-m", "assistant", "bench", "store", "--rounds", "4", "--json", str(out),
         "--plot", str(tmp_path / "store.png"), "--voice", "hibari", "--limit", "2"],
        capture_output=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    report = json.loads(out.read_text())
    from assistant.bench.store import OPERATIONS

    assert set(report["operations"]) == {"sqlite", "caldav"}
    for operations in report["operations"].values():
        assert list(operations) == list(OPERATIONS)
        assert all(s["n"] == 4 and 0 < s["p50_ms"] <= s["p99_ms"] for s in operations.values())
    assert "CalDAV/SQLite p50" in proc.stdout.decode()
    # the same two spoken requests through a voice server on each store: both heard, and judged the same
    voice = report["voice_to_action"]
    assert set(voice) == {"sqlite", "caldav"} and all(v["requests"] == 2 for v in voice.values())
    assert voice["sqlite"]["latency"]["n"] >= 2 and voice["caldav"]["latency"]["n"] >= 2
    assert {k: voice["caldav"][k] for k in ("exact", "asked", "wrong_booking")} == \
        {k: voice["sqlite"][k] for k in ("exact", "asked", "wrong_booking")}
    assert (tmp_path / "store.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_forwarded_args_leave_out_this_runs_outputs_and_name_files_absolutely(tmp_path: Path) -> None:
    from assistant.bench.before import forwarded_args

    args = ["--voices", "hibari", "--before", "/tmp/x", "--json", "a.json", "--plot=b.png", "--corpus", "tests/data",
            "--set", 'nlu.languages=["en"]', "--config=configs/default.toml"]
    assert forwarded_args(args) == ["--voices", "hibari", "--corpus", str(Path("tests/data").resolve()), "--set",
                                    'nlu.languages=["en"]', "--config", str(Path("configs/default.toml").resolve())]


def test_bench_turns_runs_the_code_before_in_the_same_run(tmp_path: Path) -> None:
    """--before CHECKOUT runs the same benchmark there first and keeps its report; this checkout stands in for the
    code before (a worktree of an older commit in real use)."""
    out = tmp_path / "turns.json"
    repo = Path(__file__).resolve().parent.parent
    proc = subprocess.run([sys.executable, "-m", "assistant", "bench", "turns", "--limit", "1", "--no-plain",
                           "--policies", "hangover-300", "--before", str(repo), "--json", str(out)],
                          capture_output=True, timeout=600, check=False, text=True)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    before = report["before"]
    assert before["checkout"] == str(repo) and [p["policy"] for p in before["points"]] == ["hangover-300"]
    assert before["points"][0]["turns"] == report["points"][0]["turns"] == 1
    assert "before: hangover-300" in proc.stdout
