"""Nested inputs: a call's dicts, lists and tuples of tensors flattened into named inputs (as
torch's pytree flattens them), the call rebuilt from an inputs file, each bad input one message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deploytui.core import modelref as models

HERE = Path(__file__).parent / "models"
TWO_TOWER = f"{HERE / 'two_tower.py'}"


def _model(tmp_path: Path, body: str, factory: str = "make"):
    from deploytui.models.load import load

    (tmp_path / "nested.py").write_text("import collections\nimport torch\n" + body)
    return load(models.parse(f"{tmp_path / 'nested.py'}:{factory}"))


def test_a_dict_argument_is_named_by_its_parameter_and_keys():
    import torch

    from deploytui.models.load import load

    m = load(models.parse(f"{TWO_TOWER}:make"))
    assert list(m.inputs) == ["batch.user_ids", "batch.item_ids", "batch.user_features"]
    assert [i["kind"] for i in m.describe()["inputs"]] == ["positional"] * 3
    assert m.nested and json.loads(m.describe()["call"]) == json.loads(m.call_spec() or "")
    args, kwargs = m.call(m.inputs.values())  # the call rebuilt from the flat tensors
    assert list(args[0]) == ["user_ids", "item_ids", "user_features"] and kwargs == {}
    with torch.inference_mode():
        assert torch.equal(m.module(*args)["score"], m.module(*m.args)["score"])
    kw = load(models.parse(f"{TWO_TOWER}:with_kwargs"))
    assert list(kw.inputs)[-1] == "temperature"
    assert [i["kind"] for i in kw.describe()["inputs"]][-2:] == ["positional", "keyword"]
    assert models.inputs_text(kw.describe()["inputs"]).startswith("batch.user_ids I64[4], ")


def test_lists_tuples_and_star_args_are_named_by_position(tmp_path):
    m = _model(
        tmp_path,
        "class M(torch.nn.Module):\n"
        "    def forward(self, x, images, pairs=None, **rest):\n"
        "        return x + images[0] + pairs[1][0] + rest['extra']['a']\n"
        "class Star(torch.nn.Module):\n"
        "    def forward(self, *xs):\n"
        "        return xs[0][0] + xs[1]\n"
        "t = torch.zeros(2)\n"
        "def make():\n"
        "    return M(), (t, [t, t]), {'pairs': ((t,), (t, t)), 'extra': {'a': t}}\n"
        "def star():\n"
        "    return Star(), ([t], t)\n",
    )
    assert list(m.inputs) == [
        "input_0",
        "images.0",
        "images.1",
        "pairs.0.0",
        "pairs.1.0",
        "pairs.1.1",
        "extra.a",
    ]
    meta = m.inputs_metadata()
    assert meta["inputs"] == ",".join(m.inputs) and "call" in meta
    star = _model(tmp_path, (tmp_path / "nested.py").read_text().split("\n", 2)[2], "star")
    assert list(star.inputs) == ["input_0.0", "input_1"]


def test_plain_inputs_keep_their_names_and_files():
    """Nothing existing changes: plain tensors are input_N and keywords, with no call stored."""
    from deploytui.models.load import load

    m = load(models.parse(f"{HERE / 'int_input.py'}:make"))
    assert list(m.inputs) == ["input_0", "input_1"] and not m.nested
    assert m.call_spec() is None and m.inputs_metadata() == {"inputs": "input_0,input_1"}
    assert "call" not in m.describe()


@pytest.mark.parametrize(
    ("factory", "words"),
    [
        ("an_int", "example input batch.k is a int, not a tensor"),
        ("a_string", "example input 1 is a str, not a tensor"),
        ("bad_key", "example input 'batch.a,b' cannot be named"),
        ("a_half", "example input batch.x has dtype torch.float16"),
        ("a_namedtuple", "structure cannot be stored"),
        ("twice", "two example inputs are named 'batch.0'"),
    ],
)
def test_each_bad_nested_input_is_one_message(tmp_path, factory, words):
    from deploytui.models.load import ModelError

    body = (
        "class M(torch.nn.Module):\n"
        "    def forward(self, batch, other=None):\n"
        "        return torch.zeros(1)\n"
        "t = torch.zeros(2)\n"
        "P = collections.namedtuple('P', 'a b')\n"
        "def an_int():\n    return M(), ({'x': t, 'k': 3},)\n"
        "def a_string():\n    return M(), ({'x': t}, 'text')\n"
        "def bad_key():\n    return M(), ({'a,b': t},)\n"
        "def a_half():\n    return M(), ({'x': t.half()},)\n"
        "def a_namedtuple():\n    return M(), (P(t, t),)\n"
        "def twice():\n    return M(), ({0: t, '0': t},)\n"
    )
    with pytest.raises(ModelError, match=words.replace("(", r"\(").replace(".", r"\.")):
        _model(tmp_path, body, factory)


def test_a_runner_rebuilds_the_call_from_the_inputs_file(tmp_path):
    import torch
    from safetensors.torch import save_file

    from deploytui.models.load import load
    from deploytui.runners.torch_bundle import read_call

    m = load(models.parse(f"{TWO_TOWER}:with_kwargs"))
    path = tmp_path / "inputs.safetensors"
    save_file(m.inputs, str(path), metadata=m.inputs_metadata())
    args, kwargs = read_call(str(path))
    assert list(kwargs) == ["temperature"] and set(args[0]) == {"user_ids", "item_ids", "user_features"}
    with torch.inference_mode():
        assert torch.equal(m.module(*args, **kwargs)["score"], m.module(*m.args, **m.kwargs)["score"])
    plain = load(models.parse(f"{HERE / 'int_input.py'}:make"))  # no call stored: by name, as before
    save_file(plain.inputs, str(path), metadata=plain.inputs_metadata())
    args, kwargs = read_call(str(path))
    assert len(args) == 2 and kwargs == {}


def test_a_call_that_does_not_fit_its_tensors_is_one_line(tmp_path):
    import subprocess
    import sys

    from safetensors.torch import save_file

    from deploytui.models.load import load

    m = load(models.parse(f"{TWO_TOWER}:make"))
    inputs = dict(m.inputs)
    inputs.pop("batch.user_features")
    meta = m.inputs_metadata()
    meta["inputs"] = ",".join(inputs)
    path = tmp_path / "inputs.safetensors"
    save_file(inputs, str(path), metadata=meta)
    code = f"from deploytui.runners.torch_bundle import read_call; read_call({str(path)!r})"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 1 and out.stderr.startswith("error: could not rebuild the call"), out.stderr
    assert "Traceback" not in out.stderr


def test_torch_onnx_gets_a_trailing_dict_as_an_argument():
    """torch.onnx.export reads a trailing dict of args as the keywords when none are given: a
    `forward(batch)` model's dict is kept an argument by an empty dict after it."""
    from deploytui.families.onnxruntime.exports import onnx_args

    batch = {"ids": 1}
    assert onnx_args((batch,), {}) == (batch, {})
    assert onnx_args((batch,), {"mask": 2}) == (batch,)
    assert onnx_args((3, 4), {}) == (3, 4)
