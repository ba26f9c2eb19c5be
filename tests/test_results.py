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


def test_damaged_file_starts_empty_and_keeps_a_copy(tmp_path):
    path = tmp_path / "results.json"
    path.write_text('{"version": 1, "forms": {"a": ')
    store = results.load(path)
    assert store.forms == {} and "could not be read" in store.dropped[0]
    assert any(p.name.startswith("results.json.damaged-") for p in tmp_path.iterdir())


def test_bad_records_are_dropped_one_by_one(tmp_path):
    path = tmp_path / "results.json"
    jsonio.write_atomic(path, {"version": 1, "forms": {
        "good": record("good"), "bad": {"form": "bad", "status": "ok"}, "odd": record("other")}})
    store = results.load(path)
    assert list(store.forms) == ["good"]
    assert len(store.dropped) == 2 and any("'bad'" in d for d in store.dropped)
