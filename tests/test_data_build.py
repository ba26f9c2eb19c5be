"""The digits CNN (trained at load time on scikit-learn's digits) built with `--data` of its
held-out digits: eager and the int8 variants scored by top-1 on the evaluation part, each with
eager's beside it and an interval, the calibrated ones calibrated on the calibration part."""

from __future__ import annotations

from pathlib import Path

import pytest

from deploytui.core import dataref
from deploytui.families import registry
from deploytui.scenarios.startup import bench
from workspaces import built

MODELS = Path(__file__).resolve().parent / "models"
FORMS = ("torch-eager", "onnxruntime-int8", "executorch-int8", "openvino-int8")


@pytest.mark.slow
def test_digits_forms_scored_on_the_held_out_digits():
    from deploytui.builder import run_build, steps_for
    from deploytui.spec.context import BuildContext
    from deploytui.spec.steps import SAMPLES_STEP

    ws = built(f"{MODELS / 'digits_cnn.py'}:make").with_data(dataref.parse(f"{MODELS / 'digits.py'}:samples"))
    ctx = BuildContext.of(ws)
    chosen = [registry.get(k) for k in FORMS]
    manifest = run_build(ctx, only=[*steps_for(ctx, chosen), SAMPLES_STEP])
    assert not manifest.failed_steps(), {n: manifest.steps[n].reason for n in manifest.failed_steps()}
    facts = manifest.steps[SAMPLES_STEP].facts
    assert facts["labels"] and facts["calibration_samples"] >= 1 and facts["evaluation_samples"] >= 10
    scores = {}
    for form in chosen:
        rec = bench.bench_form(form, n=1, warmup=0, timeout_s=300, ws=ws)
        assert rec.status == "ok" and rec.task is not None, (form.key, rec.error)
        scores[form.key] = rec.task
    eager = scores["torch-eager"]
    assert eager.eager > 0.9 and eager.drop == 0.0  # it learned; eager against itself loses nothing
    assert eager.rows == 32 * facts["evaluation_samples"]
    for key, t in scores.items():
        assert t.eager == eager.eager and t.fingerprint == eager.fingerprint, key
        assert t.drop_low <= t.drop <= t.drop_high and t.value_low <= t.value <= t.value_high, key
        assert t.value > 0.8, (key, t)  # int8 of a model that learned still reads digits
