"""The report's A1 section: each figure of the reference page beside ours, ours read from the
store and the manifest only (nothing runs), a figure not measured yet saying so."""

from __future__ import annotations

import dataclasses
import json

from deploytui.families import registry
from deploytui.scenarios.startup import results
from deploytui.spec import manifest
from deploytui.views import report
from test_probe import _forbid_running
from tui_support import FIXED_RESULTS, a1_at, make_artifacts

BUILD_DIR_BPK = "/srv/target/release/build/burn-onnx-gen-0123/out/model/a1.bpk"  # scrubbed: /…/a1.bpk


def _fixed(tmp_path, monkeypatch):
    art = make_artifacts(tmp_path, results=FIXED_RESULTS)
    ws = a1_at(art)
    m = manifest.load(ws)
    package = {"package": "a1_aoti.pt2", "member": "x.wrapper.so", "bytes": 1617024, "aoti_symbols": 23}
    m.steps["probe-cpp-aoti"] = manifest.StepRecord(
        manifest.StepStatus.OK,
        facts={"runtime_bytes": 7, "libraries": [], "files": {}, "aoti_objects": [package]},
    )
    rs = art / "a1" / "onnx" / "a1.rs"
    rs.parent.mkdir(parents=True, exist_ok=True)
    rs.write_text(
        f'impl Default for Model {{\n    fn default() -> Self {{\n  Self::from_file("{BUILD_DIR_BPK}",\n'
    )
    m.artifacts["a1/onnx/a1.rs"] = manifest.ArtifactRecord(rs.stat().st_size, step="burn-onnx-file")
    manifest.write(ws, m)
    return ws, results.load(ws.results_path), manifest.load(ws)


def test_a1s_report_sets_every_page_figure_beside_ours(tmp_path, monkeypatch):
    ws, store, m = _fixed(tmp_path, monkeypatch)
    _forbid_running(monkeypatch)
    text = report.markdown(ws, store, m)
    section = text[text.index("## A1 beside the reference page") :]
    assert "another machine (M2 Max, macOS 27" in section
    rows = {(r["form"], r["figure"]): r for r in report.page_rows(ws, store, m)}
    assert len(rows) == len(registry.FIGURES)
    for fig in registry.FIGURES:  # the page's value, as the page writes it, in its row
        r = rows[(fig.form, fig.what)]
        assert r["page"] == fig.page and f"| {fig.form} | {fig.what} | {fig.page} | {r['ours']} |" in section
    start = rows[("torch-export", "start-up median (min)")]
    assert start["page"] == "1264.5 ms (1244.9 ms)" and start["ours"] == "3500.0 ms (3400.0 ms)"
    assert rows[("torch-export", "peak RSS")]["ours"] == "812.0 MiB"
    assert rows[("torch-export", "modules added")]["ours"] == "814"
    assert rows[("torch-export", "of them sympy")]["ours"] == "420"
    assert rows[("torch-export", "of them torch.distributed")]["ours"] == "115"
    assert rows[("torch-export", "load")]["ours"] == "380.20 ms"
    assert rows[("onnxruntime", "a1.onnx")]["ours"] == "100 B"  # what the manifest recorded
    assert rows[("cpp-aoti", "undefined aoti_torch_* symbols")]["ours"] == "23"
    assert rows[("cpp-aoti", "wrapper.so in the package")]["ours"] == "1 617 024 B (1.5 MiB)"
    # not measured yet: never run, a failed run, a probe that never ran
    assert rows[("torch-eager", "peak RSS")]["ours"] == "not measured yet: run deploytui bench torch-eager"
    failed = rows[("cpp-torchscript", "max abs diff")]["ours"]
    assert (
        failed.startswith("not measured yet (last run failed: exit 101") and "bench cpp-torchscript" in failed
    )
    assert rows[("torch-eager", "runtime: Python + torch")]["ours"] == manifest.not_probed(ws)
    reloc = rows[("burn-onnx-file", "Model::default() without its build-dir .bpk")]["ours"]
    assert "no stored run, its .bpk in place" in reloc and "/…/a1.bpk" in reloc and "/srv" not in reloc
    data = json.loads(report.as_json(ws, store, m))
    assert [r["ours"] for r in data["reference_page"]] == [r["ours"] for r in report.page_rows(ws, store, m)]


def test_the_stored_relocation_panic_is_ours_when_a_run_had_it(tmp_path, monkeypatch):
    ws, store, m = _fixed(tmp_path, monkeypatch)
    panic = f"exit 1: error: panic: Failed to load burnpack file {BUILD_DIR_BPK}: I/O error"
    failed = dataclasses.replace(
        store.forms["burn-embed"], form="burn-onnx-file", status="failed", error=panic
    )
    store.forms["burn-onnx-file"] = failed
    (row,) = [r for r in report.page_rows(ws, store, m) if r["topic"] == "relocation"]
    assert row["ours"] == "exit 1: error: panic: Failed to load burnpack file /…/a1.bpk: I/O error"


def test_other_models_have_no_page_section(tmp_path, monkeypatch):
    ws, store, m = _fixed(tmp_path, monkeypatch)
    m.model = "convnet"
    assert "reference page" not in report.markdown(ws, store, m)
    assert "reference_page" not in json.loads(report.as_json(ws, store, m))


def test_on_the_real_build_ours_counts_the_aoti_symbols(artifacts_copy, copy_ws):
    """The build's probe extracts the package's .so and counts what it leaves to libtorch."""
    ws = copy_ws
    store, m = results.load(ws.results_path), manifest.load(ws)
    rows = {(r["form"], r["figure"]): r["ours"] for r in report.page_rows(ws, store, m)}
    assert rows[("cpp-aoti", "undefined aoti_torch_* symbols")] == "23"  # as on the page
    assert rows[("cpp-aoti", "wrapper.so in the package")].endswith("MiB)")
    size = rows[("torchscript-script", "a1_script.pt")]
    assert (
        int(size.split(" B")[0].replace(" ", "")) == (artifacts_copy / "a1" / "a1_script.pt").stat().st_size
    )
