"""Runtime facts are stored by the build (its probe steps) and only read afterwards: the Artifact
tab, `deploytui inspect` and the report run nothing, and a fact goes stale with its files."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from deploytui.builder import plan, run_build
from deploytui.core import measure
from deploytui.families import registry
from deploytui.inspectors import elf
from deploytui.scenarios.startup import results
from deploytui.spec import manifest
from deploytui.spec.context import BuildContext
from deploytui.views import form_view, report
from tui_support import a1_at, make_artifacts, record
from workspaces import A1


def test_the_build_stores_runtime_facts_for_every_form(built_artifacts):
    m = manifest.load(A1)
    for form in registry.FORMS:
        facts, why = manifest.runtime_facts(form, A1, m)
        assert facts is not None, (form.key, why)
        assert facts["probed_at"] and facts["runtime_bytes"] >= 0
        if form.compiled:
            assert facts["probe"] == "libraries" and facts["libraries"], form.key
            assert set(facts["files"]) == set(form.ship_files(A1))
        else:
            names = {d["name"].lower() for d in facts["distributions"]}
            assert set(registry.RUNTIME_DISTRIBUTIONS[form.runtime]) <= names, (form.key, names)


def test_stored_runtime_sizes_show_the_cuda_pull_in(built_artifacts):
    m = manifest.load(A1)

    def size(key: str) -> int:
        facts, why = manifest.runtime_facts(registry.get(key), A1, m)
        assert facts is not None, why
        return facts["runtime_bytes"]

    lean, full, burn = size("cpp-aoti-lean"), size("cpp-aoti"), size("burn-embed")
    assert burn == 0
    assert 300 * 2**20 < lean < 1024 * 2**20 < 2 * 1024 * 2**20 < full
    libs = {lib["name"] for lib in manifest.runtime_facts(registry.get("cpp-aoti"), A1, m)[0]["libraries"]}
    assert {"libtorch.so", "libtorch_cuda.so"} <= libs
    assert size("torch-eager") == size("aoti-python") > size("onnxruntime") > 0  # one probe per runtime


def _forbid_running(monkeypatch) -> None:
    def refuse(*a, **kw):
        raise AssertionError(f"ran a program while only reading stored facts: {a[:1]}")

    for mod, name in (
        (subprocess, "Popen"),
        (subprocess, "run"),
        (os, "posix_spawn"),
        (os, "posix_spawnp"),
        (os, "fork"),
        (measure, "measure"),
        (elf, "loaded_libraries"),
    ):
        monkeypatch.setattr(mod, name, refuse)


def test_the_report_reads_stored_runtime_facts_and_runs_nothing(
    artifacts_copy, copy_ws, monkeypatch, tmp_path
):
    fixed = {
        f.key: {"form": f.key, "status": "ok", "wall_s": [0.01], "peak_rss_bytes": [5 << 20]}
        for f in registry.FORMS
    }
    (artifacts_copy / "a1" / "results.json").write_text(json.dumps({"version": 1, "forms": fixed}))
    ws = copy_ws
    store, m = results.load(ws.results_path), manifest.load(ws)
    _forbid_running(monkeypatch)
    rows = {r["form"]: r for r in report.rows(ws, store, m)}
    assert set(rows) == set(registry.BY_KEY), (set(rows), store.dropped)
    assert all(r["runtime_bytes"] is not None and r["runtime_probed_at"] for r in rows.values()), rows
    assert rows["cpp-aoti"]["runtime_bytes"] > 3 * rows["cpp-aoti-lean"]["runtime_bytes"]
    assert any("libtorch_cuda" in p["name"] for p in rows["cpp-aoti"]["runtime_parts"])
    assert rows["burn-embed"]["runtime_parts"] == [] and rows["burn-embed"]["runtime_bytes"] == 0
    for fmt in report.FORMATS:
        text = report.write_report(ws, store, m, fmt, tmp_path / f"r.{fmt}").read_text()
        assert "not probed" not in text and "stale" not in text, fmt
    data = json.loads((tmp_path / "r.json").read_text())
    assert {f["form"]: f["runtime_bytes"] for f in data["forms"]} == {
        k: r["runtime_bytes"] for k, r in rows.items()
    }
    section = form_view.runtime(registry.get("cpp-aoti"), m, ws)  # the Artifact tab's Runtime section
    assert "probed" in section.title and any("libtorch_cuda.so" in r[0] for r in section.rows)


def test_without_a_probe_the_report_and_the_tab_say_so(tmp_path, monkeypatch):
    ws = a1_at(make_artifacts(tmp_path, results={"burn-embed": record("burn-embed", [3.0], 3.0)}))
    store, m = results.load(ws.results_path), manifest.load(ws)
    (section,) = [s for s in form_view.sections(registry.get("onnxruntime"), m, ws) if s.title == "Runtime"]
    assert section.error == manifest.not_probed(ws)  # in place, in the Artifact tab
    _forbid_running(monkeypatch)
    (row,) = report.rows(ws, store, m)
    assert row["runtime_bytes"] is None and row["runtime_note"] == manifest.not_probed(ws)
    assert "not probed yet: run `deploytui build`" in report.markdown(ws, store, m)
    m.steps["probe-burn-embed"] = manifest.StepRecord(
        manifest.StepStatus.OK, facts={"runtime_bytes": 1, "libraries": ["x"]}
    )
    facts, why = manifest.runtime_facts(registry.get("burn-embed"), ws, m)
    assert facts is None and "no readable runtime facts" in why
    failed = manifest.StepStatus.FAILED
    m.steps["probe-burn-embed"] = manifest.StepRecord(failed, reason="exit 1: error: boom")
    facts, why = manifest.runtime_facts(registry.get("burn-embed"), ws, m)
    assert why == "not probed: step probe-burn-embed failed: exit 1: error: boom (run `deploytui build`)"


def test_a_stored_fact_goes_stale_with_its_files_and_the_build_probes_again(copy_ws):
    """On a copy of the artifacts (its manifest as the build left it: a copied folder is current)."""
    ws, form = copy_ws, registry.get("burn-embed")
    exe = form.executable_path(ws)
    os.utime(exe, ns=(exe.stat().st_atime_ns, exe.stat().st_mtime_ns + 10**9))  # touched, same bytes
    facts, why = manifest.runtime_facts(form, ws)
    assert facts is not None, why
    with open(exe, "ab") as f:  # changed: still runs, no longer what was probed
        f.write(b"\0")
    facts, why = manifest.runtime_facts(form, ws)
    assert (
        facts is None
        and why == f"stale: {form.ship_files(ws)[-1]} changed since it was probed (run `deploytui build`)"
    )
    row = report.runtime_fields(form, manifest.load(ws), ws)
    assert row["runtime_bytes"] is None and row["runtime_note"].startswith("stale:")
    events = []
    run_build(BuildContext.of(ws), only=[form.probe_step], on_event=events.append)  # probes again
    assert [(e.status, e.text) for e in events if e.kind == "end"] == [("ok", "")]
    assert any(e.text == "stale: command or inputs changed" for e in events if e.kind == "line")
    facts, why = manifest.runtime_facts(form, ws)
    assert facts is not None and facts["runtime_bytes"] == 0, why
    assert facts["files"][form.ship_files(ws)[-1]]["size"] == exe.stat().st_size


def test_a_probe_step_is_up_to_date_until_an_input_changes(artifacts_copy, copy_ws):
    form = registry.get("burn-st")
    events = []
    run_build(BuildContext.of(copy_ws), only=[form.probe_step], on_event=events.append)
    assert [e.status for e in events if e.kind == "end"] == ["up-to-date"]
    (step,) = [s for s in plan(BuildContext.of(copy_ws)) if s.name == form.probe_step]
    assert {artifacts_copy / f for f in form.ship_files(copy_ws)} <= set(step.inputs)
    assert step.after == form.steps


@pytest.mark.parametrize("form", [f for f in registry.FORMS if not f.compiled], ids=lambda f: f.key)
def test_python_forms_share_their_runtimes_probe(form):
    assert form.probe_step == f"probe-{form.runtime}"
    names = {s.name for s in plan(BuildContext.of(A1))}
    assert {f.probe_step for f in registry.FORMS} <= names
