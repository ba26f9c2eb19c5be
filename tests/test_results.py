import json

import pytest

from deploytui import jsonio, results


def record(key, **kw):
    return {"form": key, "status": "ok", "wall_s": [0.1], "peak_rss_bytes": [1000], **kw}


def test_put_writes_atomically_and_loads_back(tmp_path):
    store = results.load(tmp_path / "results.json")
    store.put(record("a"))
    store.put(record("b"))
    again = results.load(tmp_path / "results.json")
    assert set(again.forms) == {"a", "b"} and not again.dropped


def test_crash_mid_write_keeps_the_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "results.json"
    store = results.load(path)
    store.put(record("a"))
    before = path.read_text()

    def dies_midway(obj, f, **kw):
        f.write('{"version": 1, "forms": {"a": ')
        raise KeyboardInterrupt("killed mid-write")

    monkeypatch.setattr(json, "dump", dies_midway)
    with pytest.raises(KeyboardInterrupt):
        store.put(record("b"))
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
        ("logits", [[1, 2], [3]]),
        ("logits", [["x"]]),
        ("measured_at", 12345),
        ("modules_added", {"torch": "many"}),
        ("within_tol", "yes"),
        ("diff", {"max_abs": 0}),
        ("exit_codes", "0"),
        ("wall_s", [True]),
        ("peak_rss_bytes", [-5]),
        ("wall_s", []),
        ("n", 20),
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


def test_a_diff_that_does_not_fit_its_logits_is_dropped(tmp_path):
    diff = {
        "max_abs": 0.0,
        "mean_abs": 0.0,
        "max_rel": 0.0,
        "tol": 1e-6,
        "within_tol": True,
        "worst_index": [0, 0],
        "abs_diffs": [[0.0, 0.0]],
    }
    path = tmp_path / "results.json"
    jsonio.write_atomic(
        path, {"version": 1, "forms": {"a": record("a", logits=[[1.0], [2.0], [3.0]], diff=diff)}}
    )
    store = results.load(path)
    assert store.forms == {} and "does not match its logits" in store.dropped[0]


def test_written_files_are_readable_by_others(tmp_path):
    results.load(tmp_path / "results.json").put(record("a"))
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


def test_a_stored_diff_that_its_logits_contradict_is_dropped(tmp_path):
    """Logits edited after the run: the stored verdict (✓ in the list, the report) would lie."""
    from deploytui import numerics

    reference = [[0.5, -0.25], [0.125, 1.0]]
    jsonio.write_atomic(tmp_path / "reference.json", {"logits": reference})
    diff = numerics.compare(reference, reference).to_dict()
    honest = record("honest", logits=reference, diff=diff, max_abs_diff=0.0, within_tol=True)
    edited = record("edited", logits=[[9.0, 9.0], [9.0, 9.0]], diff=diff, max_abs_diff=0.0, within_tol=True)
    jsonio.write_atomic(
        tmp_path / "results.json", {"version": 1, "forms": {"honest": honest, "edited": edited}}
    )
    store = results.load(tmp_path / "results.json")
    assert list(store.forms) == ["honest"]
    assert "does not match its logits against eager's" in store.dropped[0]
