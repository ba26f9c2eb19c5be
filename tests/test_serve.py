"""Serving cells without a build: batch files made from the example, the cells a request
makes, the dynamic-export forms, the store that keeps the cells, throughput."""

from __future__ import annotations

import json

import pytest

from deploytui.builder import steps_for
from deploytui.core import tensorfile
from deploytui.core.modelref import parse
from deploytui.core.record import RunRecord, RunStatus
from deploytui.core.record_parts import Forwards, Threads
from deploytui.core.workspace import Workspace
from deploytui.families import registry
from deploytui.scenarios.serving import serve
from deploytui.scenarios.serving import store as serve_store
from deploytui.spec.context import BuildContext


def test_batch_files_repeat_the_first_item_along_dim_0(tmp_path):
    src = tmp_path / "in.safetensors"
    x = tensorfile.Tensor("F32", (2, 3), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    mask = tensorfile.Tensor("I64", (2, 1), [7, 8])
    scalar = tensorfile.Tensor("F32", (), [0.5])
    tensorfile.write(
        src, {"input_0": x, "attention_mask": mask, "s": scalar}, {"inputs": "input_0,attention_mask,s"}
    )
    dst = tmp_path / "b3" / "in.safetensors"
    serve.repeat_first(src, dst, 3)
    got, meta = tensorfile.read_all(dst)
    assert meta == {"inputs": "input_0,attention_mask,s"}
    assert got["input_0"].shape == (3, 3) and got["input_0"].values == [1.0, 2.0, 3.0] * 3
    assert got["attention_mask"].values == [7, 7, 7] and got["s"].values == [0.5]
    assert serve.example_batch(src) == 2 and serve.example_batch(dst) == 3
    empty = tmp_path / "empty.safetensors"
    tensorfile.write(empty, {"input_0": tensorfile.Tensor("F32", (0, 2), [])})
    with pytest.raises(tensorfile.TensorFileError, match="no item to repeat"):
        serve.repeat_first(empty, tmp_path / "x.safetensors", 4)


def test_a_batch_runs_the_dynamic_exports_where_the_exporter_makes_one():
    conv = Workspace.at(parse("convnet"))
    todo = serve.cells([registry.get("cpp-aoti"), registry.get("torchscript-script")], [1, 8], [1, 2])
    assert [c.key for c in todo][:4] == [
        "cpp-aoti@b1@t1",
        "cpp-aoti@b1@t2",
        "cpp-aoti@b8@t1",
        "cpp-aoti@b8@t2",
    ]
    aoti = todo[0].form
    assert aoti.key == "cpp-aoti" and aoti.ship_files(conv)[0] == "convnet/convnet_aoti_dyn.pt2"
    assert aoti.steps == ("export-dyn-aoti", "cpp-build")
    assert todo[-1].form is registry.get("torchscript-script")  # runs as built
    as_built = serve.cells([registry.get("cpp-aoti")], [], [2])
    assert [c.key for c in as_built] == ["cpp-aoti@b-@t2"] and as_built[0].form is registry.get("cpp-aoti")
    tract = registry.for_batch(registry.get("tract"))
    assert tract.optional_files == ("{m}/{m}_dyn.onnx.data",) and "export-dyn-onnx" in tract.steps
    lean = registry.for_batch(registry.get("cpp-aoti-lean"))
    assert lean.model_files == ("{m}/{m}_aoti_lean_dyn.pt2",) and lean.steps[0] == "export-dyn-aoti-lean"


def test_dynamic_exports_are_built_on_demand_only():
    ctx = BuildContext.of(Workspace.at(parse("a1")))
    assert steps_for(ctx, list(registry.FORMS)) is None  # a whole build: no dynamic export
    wanted = steps_for(ctx, [registry.for_batch(f) for f in registry.FORMS])
    assert wanted is not None
    assert {"export-dyn-aoti", "export-dyn-onnx", "export-dyn-executorch", "export-dyn-torch-export"} <= set(
        wanted
    )


def test_a_target_builds_the_probes_its_bundles_need():
    """A form's bundle lists what its probe found: measuring on a target builds the probe too."""
    ctx = BuildContext.of(Workspace.at(parse("a1")))
    chosen = [registry.get("tract"), registry.get("onnxruntime")]
    here, there = steps_for(ctx, chosen), steps_for(ctx, chosen, shipped=True)
    assert here is not None and there is not None
    assert not any(s.startswith("probe-") for s in here)
    assert {"probe-tract", "probe-python-onnxruntime"} <= set(there) and set(here) < set(there)


def _cell(form: str, batch: int, p50: float) -> RunRecord:
    return RunRecord(
        form,
        status=RunStatus.OK,
        wall_s=[0.5],
        peak_rss_bytes=[1],
        n=1,
        batch=batch,
        forwards=Forwards.of([[p50, p50 * 1.1, p50 * 2]], 5),
        threads=Threads(2, 2, 30.0, 20.0, 1.5),
    )


def test_cells_are_stored_and_read_back_and_a_damaged_one_is_dropped(tmp_path):
    path = tmp_path / "serve.json"
    store = serve_store.ServeStore(path).load()
    store.put("onnxruntime@b8@t2", _cell("onnxruntime", 8, 2.0))
    again = serve_store.ServeStore(path).load()
    rec = again.forms["onnxruntime@b8@t2"]
    assert rec.batch == 8 and rec.threads == Threads(2, 2, 30.0, 20.0, 1.5)
    assert rec.forwards is not None and rec.forwards.p50_ms == pytest.approx(2.2)
    assert serve_store.items_per_s(rec) == pytest.approx(8 * 1000 / rec.forwards.mean_ms)
    data = json.loads(path.read_text())
    data["forms"]["tract@b8@t1"] = {**data["forms"]["onnxruntime@b8@t2"]}  # names another form
    data["forms"]["onnxruntime@b1@t1"] = {**data["forms"]["onnxruntime@b8@t2"], "forwards": {"n": 1}}
    path.write_text(json.dumps(data))
    read = serve_store.ServeStore(path).load()
    assert list(read.forms) == ["onnxruntime@b8@t2"] and len(read.dropped) == 3
    assert "names form" in read.dropped[0] and "forwards" in read.dropped[1]


def test_throughput_needs_times_and_a_batch():
    assert serve_store.items_per_s(RunRecord("x")) is None
    assert serve_store.items_per_s(_cell("x", 4, 1.0)) == pytest.approx(4000 / ((1.0 + 1.1 + 2.0) / 3))


def test_the_sweep_fits_steady_state_latency_per_mparam_from_the_same_runs():
    from deploytui.scenarios.sweep import fit
    from deploytui.scenarios.sweep.store import Point

    points = []
    for mparams in (1, 2, 4):
        rec = _cell("onnxruntime", 1, 0.5 + 0.25 * mparams)  # p50 = 1.1 x the first sample
        points.append(Point(f"mlp:m{mparams}", int(mparams * 1e6), {"onnxruntime": rec}))
    line = fit.fit_form(points, "onnxruntime").lines["steady"]
    assert line is not None and line.n == 3
    assert line.per_mparam == pytest.approx(0.25 * 1.1 / 1000) and line.fixed == pytest.approx(0.55 / 1000)
    old = RunRecord("onnxruntime", status=RunStatus.OK, wall_s=[1.0], peak_rss_bytes=[1], n=1)
    old.stages_ms = {"steady_forward": 3.0}  # stored before the timed forwards: its median
    assert fit.cost(Point("m", 10, {"onnxruntime": old}), "onnxruntime", "steady") == pytest.approx(0.003)


def test_the_cli_shows_the_stored_cells_as_json_and_refuses_bad_sizes(tmp_path, monkeypatch, capsys):
    from deploytui.views.cli import main as cli

    monkeypatch.setenv("DEPLOYTUI_ARTIFACTS", str(tmp_path))
    store = serve_store.ServeStore(tmp_path / "a1" / "serve.json").load()
    store.put("onnxruntime@b8@t1", _cell("onnxruntime", 8, 0.5))
    refused = RunRecord(
        "tract", status=RunStatus.FAILED, error="exit 1: error: tract run failed", stage="run"
    )
    store.put("tract@b8@t1", refused)
    code = cli.main(["bench", "onnxruntime", "tract", "--batch", "8", "--threads", "1", "--show", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1  # a refused cell
    assert [c["cell"] for c in out["cells"]] == ["onnxruntime@b8@t1", "tract@b8@t1"]
    assert out["cells"][0]["items_per_s"] > 0 and out["cells"][0]["forwards"]["p99_ms"] > 0
    assert out["cells"][1]["error"] == "exit 1: error: tract run failed" and out["batches"] == [8]
    assert cli.main(["bench", "onnxruntime", "--batch", "8", "--threads", "1", "--show"]) == 0
    shown = capsys.readouterr().out
    assert "onnxruntime@b8@t1" in shown and "items/s" in shown
    assert cli.main(["bench", "--batch", "0,8", "--show"]) == 2
    assert "--batch wants whole numbers >= 1" in capsys.readouterr().err


def test_a_form_that_cannot_exist_for_the_model_is_left_out_of_the_table():
    from deploytui.scenarios.serving import text as serve_text

    na = RunRecord("burn-embed", status=RunStatus.NOT_APPLICABLE, error="not applicable: Mlp only", batch=8)
    cells = {"burn-embed@b8@t1": na, "tract@b8@t1": _cell("tract", 8, 1.0)}
    assert [k for k, _ in serve_text.rows(cells)] == ["tract@b8@t1"]
    assert serve_text.accepted(cells) == {"tract": ([8], [])}


def test_an_int8_cell_is_judged_by_its_budget_at_any_batch_size():
    """A variant's outputs are off eager's tolerance by design: its cell passes by its accuracy
    budget (the batch's reference), as its bench run does."""
    from deploytui.core.record_parts import Accuracy
    from deploytui.scenarios.serving import text as serve_text

    def variant(within: bool) -> RunRecord:
        rec = _cell("onnxruntime-int8", 8, 0.5)
        rec.within_tol = False
        rec.accuracy = Accuracy(
            "int8", "onnxruntime", 1, 0.99, 0.8, within, reason=None if within else "cosine"
        )
        return rec

    cells = {"onnxruntime-int8@b8@t1": variant(True), "onnxruntime-int8@b1@t1": variant(False)}
    ran, refused = serve_store.by_batch(cells, "onnxruntime-int8")
    assert list(ran) == [8] and list(refused) == [1]
    assert serve_text.why(cells["onnxruntime-int8@b8@t1"]) == "ok"
    assert serve_text.why(cells["onnxruntime-int8@b1@t1"]).startswith("FAIL")


def test_aoti_and_executorch_accept_batch_1_to_64_from_one_artifact(copy_ws):
    """The dynamic-batch exports keep 1..64 through AOTInductor and ExecuTorch (their compilers
    narrowed it to 2..15 before: mkldnn's batch >= 16 test, 0/1 specialisation), in Python and
    C++, and compute eager's outputs there; 65 is refused in the runtime's words where it checks."""
    from deploytui.builder import run_build
    from deploytui.spec import manifest
    from deploytui.spec.context import BuildContext

    chosen = [
        registry.get(k) for k in ("aoti-python", "cpp-aoti", "cpp-aoti-lean", "executorch", "cpp-executorch")
    ]
    todo = serve.cells(chosen, [1, 64, 65], [1])
    run_build(BuildContext.of(copy_ws), only=serve.dynamic_steps(todo, copy_ws))
    store = serve_store.load(copy_ws)
    done = dict(
        serve.run_cells(
            todo,
            repeat=2,
            warmup=0,
            timeout_s=120,
            manifest=manifest.load(copy_ws),
            ws=copy_ws,
            store=store,
        )
    )
    for form in chosen:
        for b in (1, 64):
            rec = done[serve_store.key(form.key, b, 1)]
            assert rec.status == RunStatus.OK and rec.within_tol, (form.key, b, rec.error)
            assert rec.batch == b
        if form.key != "aoti-python":  # its runner checks no input (AOTI_RUNTIME_CHECK_INPUTS)
            too_big = done[serve_store.key(form.key, 65, 1)]
            assert too_big.status != RunStatus.OK and too_big.error, form.key
