"""The model seam: parsing --model, running factories, the zoo, every bad model's one message."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from deploytui import models

HERE = Path(__file__).parent / "models"


def test_parse_zoo_and_canonical_text():
    ref = models.parse("mlp:hidden=512, depth=4")
    assert (ref.kind, ref.target, ref.kwargs) == ("zoo", "mlp", {"depth": 4, "hidden": 512})
    assert ref.text == "mlp:depth=4,hidden=512" and ref.slug == "mlp-depth4-hidden512"
    assert models.parse(ref.text) == ref
    assert models.parse(None) == models.parse("a1") and models.parse("a1").slug == "a1"


def test_parse_module_and_file(tmp_path):
    ref = models.parse("my_pkg.nets:make")
    assert (ref.kind, ref.target, ref.factory, ref.slug) == (
        "module",
        "my_pkg.nets",
        "make",
        "my_pkg-nets-make",
    )
    f = tmp_path / "my_model.py"
    ref = models.parse(f"{f}:build")
    assert (ref.kind, ref.target, ref.slug) == ("file", str(f), "my_model-build")


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("nope", "is not a zoo model"),
        ("mlp:hidden", "name=value"),
        ("pkg.mod:", "is not a zoo model"),
        ("pkg.mod:make-it", "is not a Python name"),
        ("a b:make", "neither a .py file nor a dotted module path"),
    ],
)
def test_parse_rejects_with_a_reason(text, why):
    with pytest.raises(models.ModelRefError, match=why):
        models.parse(text)


def test_models_module_is_light():
    code = "import sys, deploytui.models; print([m for m in ('torch', 'numpy') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_zoo_describes_itself():
    from deploytui.models.load import load

    got = {name: load(models.parse(name)).describe() for name in models.ZOO}
    assert got["a1"]["params"] == 67 and got["a1"]["inputs"] == [{"dtype": "F32", "shape": [4, 4]}]
    assert got["convnet"]["inputs"] == [{"dtype": "F32", "shape": [1, 3, 32, 32]}]
    assert got["tinylm"]["inputs"] == [{"dtype": "I64", "shape": [1, 16]}]
    assert got["mlp"]["params"] > 1000


def test_zoo_is_deterministic_and_a1_input_is_the_formula():
    import torch

    from deploytui import a1
    from deploytui.models.load import load

    for name in ("mlp", "convnet", "tinylm"):
        one, two = load(models.parse(name)), load(models.parse(name))
        with torch.inference_mode():
            assert torch.equal(one.module(*one.inputs), two.module(*two.inputs)), name
    x = load(models.parse("a1")).inputs[0]
    assert x.tolist() == a1.input_values()


def test_good_fixture_models_load():
    import torch

    from deploytui.models.load import load, output_tensors

    two = load(models.parse(f"{HERE / 'two_outputs.py'}:make"))
    with torch.inference_mode():
        outs = output_tensors(two.module(*two.inputs))
    assert list(outs) == ["output_0", "output_1"] and outs["output_1"].shape == (2, 3)
    ints = load(models.parse(f"{HERE / 'int_input.py'}:make"))
    assert [t.dtype for t in ints.inputs] == [torch.int64, torch.float32]


BAD_MODELS = [
    (
        "broken_import.py:make",
        "broken_import.py does not import: ModuleNotFoundError: No module named "
        "'this_package_does_not_exist' (broken_import.py:1)",
    ),
    (
        "broken_factory.py:raises",
        "raised RuntimeError: checkpoint not found: weights.bin (broken_factory.py:5)",
    ),
    ("broken_factory.py:wrong_return", "must return (module, inputs), got Identity"),
    ("broken_factory.py:not_a_module", "returned str where an nn.Module was expected"),
    ("broken_factory.py:bad_dtype", "example input 0 has dtype torch.float16; supported: float32, int64"),
    ("broken_factory.py:not_callable", "is not callable"),
    ("broken_factory.py:missing", "has no 'missing'"),
    ("no_such_file.py:make", "does not exist"),
]


def test_bad_models_give_one_message_each():
    """One subprocess (torch imports once) describes every broken model: one line each, no traceback."""
    out = subprocess.run(
        [sys.executable, "-m", "deploytui.models.describe", *(str(HERE / ref) for ref, _ in BAD_MODELS)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 1 and out.stderr == "", out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(lines) == len(BAD_MODELS)
    for (ref, message), line in zip(BAD_MODELS, lines, strict=True):
        assert line["model"].endswith(ref) and message in line["error"], (ref, line["error"])
