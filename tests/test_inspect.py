"""The inspectors on the real build: every tab of every form shows something, and no error."""

import pytest

from deploytui.families import registry
from deploytui.inspectors.section import operators
from deploytui.spec import manifest
from deploytui.views import form_view
from workspaces import A1


@pytest.mark.parametrize("key", [f.key for f in registry.FORMS])
def test_every_built_form_inspects_without_error(built_artifacts, key):
    secs = form_view.sections(registry.get(key), manifest.load(A1), A1)
    errors = [(s.tab, s.title, s.error) for s in secs if s.error]
    assert not errors
    tabs = {s.tab for s in secs}
    assert "Artifact" in tabs and (len(tabs) > 1), tabs
    assert all(s.rows or s.text for s in secs), [s.title for s in secs if not (s.rows or s.text)]


def test_a_graph_title_names_a_small_graph_s_chain_and_a_large_one_s_kinds():
    assert operators(["Gemm", "Relu", "Gemm"]) == "Gemm → Relu → Gemm"
    big = ["Conv"] * 56 + ["Relu"] * 35 + ["Add"] * 3 + [f"Op{i}" for i in range(6)]
    assert operators(big) == "Conv ×56, Relu ×35, Add ×3, Op0, Op1, Op2, … 3 more kinds"
    assert operators(["Conv"] * 9 + ["Relu"]) == "Conv ×9, Relu"


def test_onnx_and_capture_graphs(built_artifacts):
    secs = form_view.sections(registry.get("burn-onnx-embed"), manifest.load(A1), A1)
    graph = next(s for s in secs if s.tab == "Graph")
    assert "Gemm → Relu → Gemm" in graph.title
    code = next(s for s in secs if s.tab == "Code")
    assert "pub struct Model" in code.text and code.language == "rust"
    secs = form_view.sections(registry.get("burn-file"), manifest.load(A1), A1)
    ops = [r[1] for r in next(s for s in secs if s.tab == "Graph").rows]
    for kind in ("Matmul", "Reshape", "Add", "Relu"):
        assert any(kind in op for op in ops), ops


def test_what_ships_checks_each_file_against_the_build_and_names_the_baked_bpk(built_artifacts):
    ships = form_view.ships(registry.get("burn-onnx-file"), manifest.load(A1), A1)
    binary, baked = ships.rows
    assert binary[0] == "a1/bin/burn-onnx-file" and binary[3] == "as built"
    assert baked[0].endswith("/out/model/a1.bpk") and "not shipped" in baked[3] and baked[1] != "missing"


def test_what_ships_flags_a_file_changed_since_the_build(artifacts_copy, copy_ws):
    (artifacts_copy / "a1" / "a1_export.pt2").write_bytes(b"PK\x03\x04 not the package any more")
    row = form_view.ships(registry.get("torch-export"), manifest.load(copy_ws), copy_ws).rows[0]
    assert row[0] == "a1/a1_export.pt2" and row[3].startswith("CHANGED since the build")
