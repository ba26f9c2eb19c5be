"""The precision axis on the real build of a1: the OpenVINO forms match eager within a1's
tolerance, every int8 variant runs on the accuracy set and is judged by its budget (its record
holds the figures, apart from the tolerance check), and a missing sample stops it at numerics
in words that say how to get it back."""

from __future__ import annotations

import pytest

from deploytui.families import registry
from deploytui.judge.precision import SAMPLES
from deploytui.scenarios.startup import bench
from workspaces import A1

VARIANTS = [f.key for f in registry.FORMS if f.variant]


@pytest.mark.parametrize("key", ["openvino", "openvino-native"])
def test_openvino_runs_a1_within_its_tolerance(built_artifacts, key):
    rec = bench.bench_form(registry.get(key), n=1, warmup=0, repeat=2, ws=A1)
    assert rec.status == "ok" and rec.within_tol is True and rec.accuracy is None, rec.error
    assert set(rec.stages_ms) >= {"load", "first_forward", "steady_forward"}


@pytest.mark.parametrize("key", VARIANTS)
def test_an_int8_variant_of_a1_is_judged_by_its_budget(built_artifacts, key):
    rec = bench.bench_form(registry.get(key), n=1, warmup=0, repeat=2, ws=A1)
    acc = rec.accuracy
    assert rec.status == "ok" and acc is not None, (rec.status, rec.stage, rec.error)
    assert acc.parent == registry.get(key).parent and acc.samples == SAMPLES + 1
    assert [o.name for o in acc.outputs] == [o.name for o in rec.outputs]
    assert all(0 <= o.mean_abs <= o.max_abs and -1 <= o.cosine <= 1 for o in acc.outputs)
    assert bench.judged_ok(rec) == acc.within_budget
    assert (rec.stage is None) == acc.within_budget
    assert rec.within_tol is not None  # the tolerance check is still stored, beside the budget


def test_a_missing_accuracy_sample_stops_a_variant_at_numerics(artifacts_copy, copy_ws):
    (artifacts_copy / "a1" / "accuracy" / "inputs_3.safetensors").unlink()
    rec = bench.bench_form(registry.get("onnxruntime-int8"), n=1, warmup=0, repeat=0, ws=copy_ws)
    assert rec.stage == "numerics" and rec.stage_status["numerics"] == "failed"
    assert "sample 3 of the evaluation set is missing: run deploytui build" in rec.error
    assert copy_ws.artifacts == artifacts_copy


def test_a_damaged_sample_is_named_when_a_python_runner_runs_the_set_at_once(artifacts_copy, copy_ws):
    """A Python runner answers the whole set in one process (`--samples`): a sample it cannot
    read still stops the variant at numerics, naming that sample."""
    (artifacts_copy / "a1" / "accuracy" / "inputs_5.safetensors").write_bytes(b"not a tensor file")
    rec = bench.bench_form(registry.get("onnxruntime-int8"), n=1, warmup=0, repeat=0, ws=copy_ws)
    assert rec.stage == "numerics" and rec.stage_status["numerics"] == "failed"
    assert rec.error.startswith("evaluation set: sample 5: exit 1: error: could not read inputs"), rec.error
