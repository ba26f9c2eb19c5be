"""The precision axis without a build: the accuracy tallies and budget, the variants' registry
data, their ratios to the parent, the OpenVINO IR's layers."""

from __future__ import annotations

import math
from typing import ClassVar

import pytest

from deploytui.core import tensorfile
from deploytui.core.record import RunRecord, RunStatus
from deploytui.families import registry
from deploytui.families.openvino import openvino_ir
from deploytui.families.openvino.sections import openvino_section
from deploytui.inspectors import InspectError
from deploytui.judge.numerics import OUTPUTS_KEY
from deploytui.judge.precision import FP32, Budget, OutputTally, class_scores, cosine, top1_matches
from deploytui.scenarios.accuracy import accuracy, variants
from deploytui.spec import forms


def test_class_scores_are_batch_by_classes_or_logits():
    assert class_scores("output", [1, 10])
    assert class_scores("logits", [1, 8, 4096])
    assert not class_scores("last_hidden_state", [1, 8, 32])
    assert not class_scores("pooler_output", [1, 32]) and class_scores("1", [2, 3])
    assert not class_scores("output", [1, 1])
    assert not class_scores("output", [10])


def test_cosine_and_top1():
    assert cosine([1.0, 0.0], [1.0, 0.0]) == pytest.approx(1.0)
    assert cosine([1.0, 0.0], [0.0, 1.0]) == pytest.approx(0.0)
    assert cosine([0.0, 0.0], [0.0, 0.0]) == 1.0
    assert math.isnan(cosine([math.nan, 1.0], [1.0, 1.0]))
    assert cosine([math.nan, 1.0, 2.0], [math.nan, 1.0, 2.0]) == pytest.approx(1.0)  # eager's NaN, met
    # two rows of three classes: the first agrees, the second does not
    assert top1_matches([0, 5, 1, 9, 0, 0], [0, 4, 1, 0, 0, 3], 3) == (1, 2)


def test_a_tally_over_samples_and_its_budget():
    t = OutputTally("output", [1, 3])
    t.add([1.0, 2.0, 3.0], [1.0, 2.0, 3.1])
    t.add([3.0, 2.0, 1.0], [1.0, 2.0, 3.0])  # top-1 flips, cosine 10/14
    assert t.samples == 2 and t.n == 6
    assert t.max_abs == pytest.approx(2.0)
    assert t.mean_abs == pytest.approx((0.1 + 2 + 2) / 6)
    assert t.min_cosine == pytest.approx(10 / 14)
    assert t.top1 == 0.5
    assert t.breaks(Budget(min_cosine=0.7, min_top1=0.5)) == ""
    assert t.breaks(Budget(min_cosine=0.99)).startswith("output: cosine 0.7143 < 0.99")
    assert t.breaks(Budget(min_cosine=0.5, min_top1=0.8)) == "output: top-1 agreement 50% < 80%"
    nan = OutputTally("output", [1, 2])
    nan.add([math.nan, 1.0], [1.0, 1.0])
    assert nan.breaks(Budget()) == "output: NaN or infinity where eager's output is finite, or the reverse"
    # eager's NaN met by the variant's NaN: judged on the other elements (it said `cosine nan`)
    met = OutputTally("output", [1, 3])
    met.add([math.nan, 1.0, 2.01], [math.nan, 1.0, 2.0])
    assert met.breaks(Budget()) == "" and met.max_abs == pytest.approx(0.01) and met.min_cosine > 0.99


def _write(path, values: dict[str, list[float]]) -> None:
    import json

    tensors = {k: tensorfile.Tensor("F32", (1, len(v)), v) for k, v in values.items()}
    tensorfile.write(path, tensors, {OUTPUTS_KEY: json.dumps(list(values))})


def test_accuracy_tallies_files_by_the_references_names(tmp_path):
    form = registry.get("onnxruntime-int8")
    want, got = tmp_path / "want.safetensors", tmp_path / "got.safetensors"
    _write(want, {"logits": [0.0, 1.0, 0.5], "extra": [2.0, 2.0]})
    _write(got, {"logits": [0.0, 0.9, 0.5], "extra": [2.0, 2.0]})
    tallies: dict[str, OutputTally] = {}
    accuracy.tally(got, want, tallies)
    acc = accuracy.judged(form, tallies)
    assert acc.precision == "int8" and acc.parent == "onnxruntime" and acc.samples == 1
    assert acc.within_budget and acc.reason is None
    assert [o.name for o in acc.outputs] == ["logits", "extra"]
    assert acc.outputs[0].top1 == 1.0 and acc.outputs[0].max_abs == pytest.approx(0.1, abs=1e-6)
    assert "within budget" in variants.accuracy_text(acc)
    _write(got, {"logits": [0.0, 1.0], "extra": [2.0, 2.0]})
    with pytest.raises(ValueError, match="shape"):
        accuracy.tally(got, want, {})


def test_variants_are_registry_data_with_a_measured_parent():
    vs = [f for f in registry.FORMS if f.variant]
    assert {f.key for f in vs} >= {"onnxruntime-int8", "onnxruntime-native-int8", "tract-int8"}
    for f in vs:
        parent = registry.get(f.parent)
        assert parent.precision == FP32 and parent.family == f.family and parent.runtime == f.runtime
        assert f.budget is not None and "export-samples" in f.steps
    with pytest.raises(ValueError, match="variant"):
        forms.Form("x", "f", "t", (), forms.NO_RUNTIME, (), (), runner="m", precision="int8")


def test_ratios_to_the_parent_are_of_stored_figures():
    child = RunRecord(
        "onnxruntime-int8", status=RunStatus.OK, wall_s=[0.2, 0.2], stages_ms={"steady_forward": 2}
    )
    parent = RunRecord("onnxruntime", status=RunStatus.OK, wall_s=[0.4, 0.4], stages_ms={"steady_forward": 1})
    sizes = {"onnxruntime-int8": 25, "onnxruntime": 100}
    r = variants.ratios(child, "onnxruntime", parent, sizes.get)
    assert r == {"size": 0.25, "startup": 0.5, "steady": 2.0}
    assert variants.ratios(child, "onnxruntime", None, sizes.get) == {
        "size": 0.25,
        "startup": None,
        "steady": None,
    }
    assert variants.ratios_text(r, "onnxruntime").startswith("vs onnxruntime: ship size 0.25×")


IR = """<?xml version="1.0"?>
<net name="m" version="11"><layers>
<layer id="0" name="x" type="Parameter" version="opset1"><output><port id="0" precision="FP32">
<dim>1</dim><dim>4</dim></port></output></layer>
<layer id="1" name="w" type="Const" version="opset1"><output><port id="0" precision="FP32">
<dim>4</dim><dim>2</dim></port></output></layer>
<layer id="2" name="mm" type="MatMul" version="opset1"><output><port id="2" precision="FP32">
<dim>1</dim><dim>2</dim></port></output></layer>
<layer id="3" name="y" type="Result" version="opset1"/>
</layers></net>"""


def test_the_openvino_ir_layers_are_read_as_xml(tmp_path):
    path = tmp_path / "m.xml"
    path.write_text(IR)
    rows = openvino_ir.layers(path)
    assert rows[2] == ("2", "MatMul", "mm", "[1,2] FP32")
    assert openvino_section(path).title == "OpenVINO IR: 4 layers (MatMul)"
    path.write_text("<net><nolayers/></net>")
    with pytest.raises(InspectError, match="no <net><layers>"):
        openvino_ir.layers(path)
    path.write_text("not xml")
    with pytest.raises(InspectError, match="not an OpenVINO IR"):
        openvino_ir.layers(path)
    with pytest.raises(InspectError, match="missing"):
        openvino_ir.layers(tmp_path / "absent.xml")


def test_openvino_and_nncf_telemetry_is_off_in_our_processes():
    """With `openvino_telemetry` made unimportable first (what every deploytui process that
    imports openvino does), the converter and NNCF fall back on their stubs, which send nothing."""
    import subprocess
    import sys

    code = (
        "from deploytui.families.openvino.exports import no_openvino_telemetry; "
        "no_openvino_telemetry(); "
        "import openvino.tools.ovc.telemetry_utils as ovc; import nncf.telemetry.wrapper as w; "
        "print(ovc.tm.__name__, isinstance(w.telemetry, w.NNCFTelemetryStub))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.split() == ["openvino.tools.ovc.telemetry_stub", "True"]


def test_drawn_samples_are_like_the_examples_and_fixed():
    import torch

    from deploytui.families.common.samples import draw_samples

    class M:
        inputs: ClassVar = {
            "input_0": torch.randn(2, 64) * 3 + 1,
            "ids": torch.tensor([[3, 9, 5, 7]]),
            "mask": torch.ones(1, 4, dtype=torch.long),
            "scale": torch.full((3, 1), 0.5),
        }

    a, b = draw_samples(M, 7, 2), draw_samples(M, 7, 2)
    assert all(torch.equal(a[k][n], b[k][n]) for k in range(2) for n in M.inputs)  # fixed seeds
    assert not torch.equal(a[0]["input_0"], a[1]["input_0"])
    x = a[0]["input_0"]
    assert x.shape == (2, 64) and 1.5 < float(x.std()) < 5 and abs(float(x.mean()) - 1) < 1.5
    assert int(a[0]["ids"].min()) >= 3 and int(a[0]["ids"].max()) <= 9 and a[0]["ids"].dtype == torch.long
    assert torch.equal(a[0]["mask"], M.inputs["mask"]) and torch.equal(a[0]["scale"], M.inputs["scale"])
