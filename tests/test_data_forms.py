"""`--data` through real builds and the CLI: the character LM (tests/models/char_lm.py, trained at
load time on standard-library text) benched on its held-out text, perplexity beside top-1 for
eager and each form; and the digits CNN judged on its held-out digits written as PNG files in
class sub-folders (a folder of images with a named transform), its figures those of the factory
that yields the same digits. Each model is built in the real artifacts folder, incrementally."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from deploytui.core import paths
from workspaces import A1

HERE = Path(__file__).resolve().parent
MODELS = HERE / "models"
CHAR_LM = f"{MODELS / 'char_lm.py'}:make"
TEXT = f"{MODELS / 'text.py'}:samples"
LM_FORMS = ("torch-eager", "onnxruntime", "onnxruntime-int8", "openvino-int8")

pytestmark = pytest.mark.slow


def _bench(*args: str) -> dict:
    res = subprocess.run(
        [sys.executable, "-m", "deploytui", "bench", *args, "-n", "1", "--warmup", "0", "--json"],
        capture_output=True,
        text=True,
        timeout=1800,
        env={**os.environ, "DEPLOYTUI_ARTIFACTS": str(A1.artifacts)},
        cwd=paths.ROOT,
        check=False,
    )
    assert res.stdout.strip(), res.stderr[-3000:]
    return {f["form"]: f for f in json.loads(res.stdout)["forms"]}


def test_char_lm_perplexity_beside_top1_through_the_forms(built_artifacts):
    forms = _bench(*LM_FORMS, "--model", CHAR_LM, "--data", TEXT)
    eager = forms["torch-eager"]["task"]
    assert eager is not None and eager["perplexity"] is not None, forms["torch-eager"].get("error")
    assert eager["perplexity"] < 20 and eager["value"] > 0.3  # it learned: 96 characters, chance 1 %
    for key in LM_FORMS:
        t = forms[key]["task"]
        where = (key, forms[key].get("error"), t)
        assert t is not None and t["perplexity"] is not None and t["eager_perplexity"] is not None, where
        assert t["eager_perplexity"] == pytest.approx(eager["perplexity"], rel=1e-6), where
        assert t["rows"] == eager["rows"] and t["data"].endswith("text.py:samples"), where
        if key in ("torch-eager", "onnxruntime"):  # fp32: the same rows right, the same perplexity
            assert t["drop"] == 0 and t["perplexity"] == pytest.approx(eager["perplexity"], rel=1e-4), where
        else:  # int8: close to eager's, not equal
            assert abs(t["perplexity"] / eager["perplexity"] - 1) < 0.1, where


PNG_TRANSFORM = """import numpy as np
import torch


def to_tensor(img):
    return torch.from_numpy(np.asarray(img, dtype=np.float32) / 255.0).unsqueeze(0)
"""


def test_digits_from_png_folders_score_like_the_factory(built_artifacts, tmp_path):
    import importlib.util

    import torch
    from PIL import Image

    spec = importlib.util.spec_from_file_location("digits_for_forms", MODELS / "digits.py")
    assert spec is not None and spec.loader is not None
    digits = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(digits)
    _, _, x, y = digits.split()
    folder = tmp_path / "digits"
    for k in range(len(y)):  # 8x8 grey PNGs of the held-out digits: exact in 0..255/16 steps
        d = folder / str(int(y[k]))
        d.mkdir(parents=True, exist_ok=True)
        Image.fromarray((x[k, 0] * 255).round().to(torch.uint8).numpy(), mode="L").save(d / f"{k:04}.png")
    (tmp_path / "prep.py").write_text(PNG_TRANSFORM)
    data = f"{folder},transform={tmp_path / 'prep.py'}:to_tensor"
    forms = _bench(
        "torch-eager", "onnxruntime-int8", "--model", f"{MODELS / 'digits_cnn.py'}:make", "--data", data
    )
    for key, rec in forms.items():
        t = rec["task"]
        assert t is not None and t["value"] > 0.9 and t["drop_high"] < 0.05, (key, rec.get("error"), t)
        assert t["rows"] % 32 == 0 and t["data"].startswith(str(folder)), t
