import json

import pytest

from deploytui.core import jsonio
from deploytui.core.record import RunRecord
from deploytui.scenarios.startup import results


def record(key, **kw):
    """A stored record as results.json holds it (only the fields it must have, plus `kw`)."""
    return {"form": key, "status": "ok", "wall_s": [0.1], "peak_rss_bytes": [1000], **kw}


DIFF = {  # a 1×2 comparison, as numerics.compare_output stores it
    "name": "output_0",
    "shape": [1, 2],
    "n": 2,
    "max_abs": 0.0,
    "mean_abs": 0.0,
    "max_rel": 0.0,
    "worst": [{"index": [0, 0], "got": 1.0, "want": 1.0, "abs_diff": 0.0}],
    "atol": 1e-6,
    "rtol": 0.0,
    "min_atol": 0.0,
    "failing": 0,
    "within_tol": True,
}


def run(key, **kw):
    return RunRecord.from_json(record(key, **kw))


def test_put_writes_atomically_and_loads_back(tmp_path):
    store = results.load(tmp_path / "results.json")
    store.put(run("a"))
    store.put(run("b"))
    again = results.load(tmp_path / "results.json")
    assert set(again.forms) == {"a", "b"} and not again.dropped
    assert again.forms == store.forms


def test_crash_mid_write_keeps_the_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "results.json"
    store = results.load(path)
    store.put(run("a"))
    before = path.read_text()

    def dies_midway(obj, f, **kw):
        f.write('{"version": 1, "forms": {"a": ')
        raise KeyboardInterrupt("killed mid-write")

    monkeypatch.setattr(json, "dump", dies_midway)
    with pytest.raises(KeyboardInterrupt):
        store.put(run("b"))
    assert path.read_text() == before
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_damaged_file_starts_empty_keeps_a_copy_and_warns_once(tmp_path):
    path = tmp_path / "results.json"
    path.write_text('{"version": 1, "forms": {"a": ')
    store = results.load(path)
    assert store.forms == {} and "could not be read" in store.dropped[0]
    copies = [p for p in tmp_path.iterdir() if p.name.startswith("results.json.damaged-")]
    assert len(copies) == 1 and copies[0].read_text() == '{"version": 1, "forms": {"a": '
    again = results.load(path)  # rewritten: the next start is clean
    assert again.forms == {} and again.dropped == []


@pytest.mark.parametrize(
    "field, value",
    [
        ("stages_ms", {"import": "fast"}),
        ("outputs", {"output_0": DIFF}),
        ("outputs", [{**DIFF, "worst": [{"index": [0]}]}]),
        ("measured_at", 12345),
        ("modules_added", {"torch": "many"}),
        ("within_tol", "yes"),
        ("outputs", [{"max_abs": 0}]),
        ("stage_status", {"run": 1}),
        ("stage", ["run"]),
        ("exit_codes", "0"),
        ("wall_s", [True]),
        ("peak_rss_bytes", [-5]),
        ("wall_s", []),
        ("n", 20),
        ("n", None),
        ("form", None),
        ("argv", "python -c pass"),
        ("cwd", ["/"]),
        ("outputs", [{**DIFF, "shape": None}]),
    ],
)
def test_a_record_with_a_malformed_field_is_dropped_and_the_rest_kept(tmp_path, field, value):
    path = tmp_path / "results.json"
    jsonio.write_atomic(
        path, {"version": 1, "forms": {"good": record("good"), "bad": record("bad", **{field: value})}}
    )
    store = results.load(path)
    assert list(store.forms) == ["good"]
    assert any("'bad'" in d for d in store.dropped), store.dropped
    assert list(results.load(path).forms) == ["good"]


def test_a_verdict_that_its_outputs_contradict_is_dropped(tmp_path):
    """A verdict edited after the run: the stored ✓ in the list, the report, would lie."""
    path = tmp_path / "results.json"
    failing = {**DIFF, "max_abs": 0.5, "failing": 1, "within_tol": False}
    honest = record("honest", outputs=[failing], max_abs_diff=0.5, within_tol=False)
    edited = record("edited", outputs=[failing], max_abs_diff=0.5, within_tol=True)
    smaller = record("smaller", outputs=[failing], max_abs_diff=0.0, within_tol=False)
    jsonio.write_atomic(
        path, {"version": 1, "forms": {"honest": honest, "edited": edited, "smaller": smaller}}
    )
    store = results.load(path)
    assert list(store.forms) == ["honest"]
    assert all("do not match its outputs" in d for d in store.dropped[:2]), store.dropped


def test_written_files_are_readable_by_others(tmp_path):
    results.load(tmp_path / "results.json").put(run("a"))
    assert (tmp_path / "results.json").stat().st_mode & 0o044 == 0o044


def test_bad_records_are_dropped_one_by_one(tmp_path):
    path = tmp_path / "results.json"
    jsonio.write_atomic(
        path,
        {
            "version": 1,
            "forms": {"good": record("good"), "bad": {"form": "bad", "status": "ok"}, "odd": record("other")},
        },
    )
    store = results.load(path)
    assert list(store.forms) == ["good"]
    assert sum("dropped" in d for d in store.dropped) == 2 and any("'bad'" in d for d in store.dropped)
    assert "kept as results.json.damaged-" in store.dropped[-1]


def test_a_plain_commands_record_is_never_stored(tmp_path):
    with pytest.raises(ValueError, match="plain command"):
        results.load(tmp_path / "results.json").put(RunRecord(None, ["true"], "/"))


def test_what_the_store_writes_is_each_records_json(tmp_path):
    """The file keeps its shape: {"version": 1, "forms": {key: the record's JSON object}}."""
    store = results.load(tmp_path / "results.json")
    rec = run("a", outputs=[DIFF], max_abs_diff=0.0, within_tol=True, n=1, warmup=1)
    store.put(rec)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data == {"version": 1, "forms": {"a": rec.to_json()}}
    assert data["forms"]["a"]["outputs"] == [DIFF]


def test_dropped_messages_name_the_field(tmp_path):
    path = tmp_path / "results.json"
    jsonio.write_atomic(
        path,
        {
            "version": 1,
            "forms": {
                "torch-eager": record("torch-eager", outputs=[{**DIFF, "n": "2"}]),
                "burn-st": record("burn-st", wall_s=[0.1, -1.0]),
                "burn-file": record("burn-file", n=3),
                "onnxruntime": {"form": "onnxruntime", "status": "ok", "wall_s": [0.1]},
            },
        },
    )
    assert results.load(path).dropped[:-1] == [
        "result for 'torch-eager' dropped: field 'outputs' is malformed",
        "result for 'burn-st' dropped: non-numeric or negative samples",
        "result for 'burn-file' dropped: holds 1 run times for n=3",
        "result for 'onnxruntime' dropped: field 'peak_rss_bytes' missing or not a list",
    ]
