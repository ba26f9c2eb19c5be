"""The model seam: parsing --model, running factories, the zoo, every bad model's one message."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from deploytui.core import modelref as models

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
    one = {"name": "input_0", "kind": "positional"}
    assert got["a1"]["params"] == 67 and got["a1"]["inputs"] == [{**one, "dtype": "F32", "shape": [4, 4]}]
    assert got["convnet"]["inputs"] == [{**one, "dtype": "F32", "shape": [1, 3, 32, 32]}]
    assert got["tinylm"]["inputs"] == [{**one, "dtype": "I64", "shape": [1, 16]}]
    assert got["mlp"]["params"] > 1000


def test_zoo_is_deterministic_and_a1_input_is_the_formula():
    import torch

    from deploytui.models import a1
    from deploytui.models.load import load

    for name in ("mlp", "convnet", "tinylm"):
        one, two = load(models.parse(name)), load(models.parse(name))
        with torch.inference_mode():
            assert torch.equal(one.module(*one.args), two.module(*two.args)), name
    x = load(models.parse("a1")).inputs["input_0"]
    assert x.tolist() == a1.input_values()


def test_good_fixture_models_load():
    import torch

    from deploytui.models.load import load, output_tensors

    two = load(models.parse(f"{HERE / 'two_outputs.py'}:make"))
    with torch.inference_mode():
        outs = output_tensors(two.module(*two.args))
    assert list(outs) == ["0", "1"] and outs["1"].shape == (2, 3)
    ints = load(models.parse(f"{HERE / 'int_input.py'}:make"))
    assert [t.dtype for t in ints.inputs.values()] == [torch.int64, torch.float32]


def test_outputs_of_any_pytree_are_named_by_their_paths():
    """Tensors, tuples, lists, dicts, namedtuples and None entries: one name per tensor, in
    torch.export's flattening order; a leaf that is not a tensor is the model's error."""
    from collections import namedtuple

    import torch

    from deploytui.models.load import ModelError, output_tensors

    t = torch.zeros(1)
    pair = namedtuple("pair", "first second")
    assert list(output_tensors(t)) == ["output"]
    assert list(output_tensors((t, (t, t)))) == ["0", "1.0", "1.1"]
    assert list(output_tensors({"logits": t, "aux": [t, None, t]})) == ["logits", "aux.0", "aux.2"]
    assert list(output_tensors(pair(t, t))) == ["first", "second"]
    for bad, words in (
        ((t, 3), "returned a int as '1'"),
        ("text", "returned a str;"),
        ((None,), "no tensor"),
    ):
        with pytest.raises(ModelError, match=words):
            output_tensors(bad)


def test_a_factory_may_give_keyword_inputs_and_they_keep_their_order(tmp_path):
    import torch

    from deploytui.models.load import ModelError, load

    (tmp_path / "kw.py").write_text(
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def forward(self, ids, mask=None, extra=None):\n"
        "        return {'out': ids * mask}\n"
        "def make():\n"
        "    x = torch.ones(1, 3, dtype=torch.int64)\n"
        "    return M(), (x,), {'mask': x * 2, 'extra': None}\n"
        "def bad_key():\n"
        "    return M(), (), {'input_0': torch.ones(1)}\n"
        "def nothing():\n"
        "    return M(), (), {}\n"
    )
    m = load(models.parse(f"{tmp_path / 'kw.py'}:make"))
    assert list(m.inputs) == ["input_0", "mask"] and list(m.kwargs) == ["mask"]  # None left out
    assert [i["kind"] for i in m.describe()["inputs"]] == ["positional", "keyword"]
    assert torch.equal(m.module(*m.args, **m.kwargs)["out"], torch.full((1, 3), 2))
    for factory, words in (("bad_key", "other than input_N"), ("nothing", "at least one")):
        with pytest.raises(ModelError, match=words):
            load(models.parse(f"{tmp_path / 'kw.py'}:{factory}"))


def test_unique_parameter_bytes_count_a_tied_matrix_once():
    import torch

    from deploytui.models.load import LoadedModel

    class Tied(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = torch.nn.Embedding(10, 4)
            self.head = torch.nn.Linear(4, 10, bias=False)
            self.head.weight = self.embed.weight

    m = LoadedModel(models.parse("a1"), Tied(), (torch.zeros(1, dtype=torch.int64),), {})
    assert m.unique_param_bytes() == 10 * 4 * 4


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
    ("broken_factory.py:wrong_return", "must return (module, args) or (module, args, kwargs), got Identity"),
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
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    mark = "deploytui-describe: "
    lines = [json.loads(line.removeprefix(mark)) for line in out.stdout.splitlines()]
    assert len(lines) == len(BAD_MODELS)
    for (ref, message), line in zip(BAD_MODELS, lines, strict=True):
        assert line["model"].endswith(ref) and message in line["error"], (ref, line["error"])


def test_library_models_are_named_as_users_name_them(tmp_path):
    """torchvision:/timm:/hf:/hf-config: parse and spell back; their options are checked here,
    before any subprocess; --input-shape/--seq-len become options (library models only)."""
    ref = models.parse("torchvision:resnet18")
    assert (ref.kind, ref.target, ref.slug) == ("torchvision", "resnet18", "torchvision-resnet18")
    shaped = models.with_options(ref, input_shape="1,3,64,64")
    assert shaped.text == "torchvision:resnet18,input_shape=1x3x64x64"
    assert models.parse(shaped.text) == shaped and shaped.slug == "torchvision-resnet18-input_shape1x3x64x64"
    hf = models.with_options(models.parse(f"hf:{tmp_path / 'tiny_bert'}"), seq_len=8)
    assert hf.kind == "hf" and hf.slug == "hf-tiny_bert-seq_len8" and models.parse(hf.text) == hf
    cfg = models.parse(f"hf-config:{tmp_path / 'gpt2' / 'config.json'}")
    assert cfg.slug == "hf-config-gpt2"
    for bad, words in (
        ("torchvision:", "name the torchvision model"),
        ("timm:a/b", "not a timm model name"),
        ("torchvision:resnet18,seq_len=3", "take input_shape=, weights="),
        ("hf:x,input_shape=1xa", "sizes joined by x"),
    ):
        with pytest.raises(models.ModelRefError, match=words):
            models.parse(bad)
    with pytest.raises(models.ModelRefError, match="only for torchvision"):
        models.with_options(models.parse("a1"), seq_len=4)


def test_a_model_that_talks_is_described_by_its_marked_line_only():
    """Prints (JSON-looking or not) at import, in the factory, on stderr, a warning, a slow
    factory: check() reads describe's own marked line and nothing else."""
    from deploytui.models.check import check

    info, err = check(f"{HERE / 'talky.py'}:make")
    assert err == "" and info is not None, err
    assert info["class"] == "Talky" and info["params"] == 15


def test_a_library_model_that_needs_the_network_says_so_in_one_line(tmp_path):
    from deploytui.models.check import describe

    lines, err = describe(
        ["hf:some-org/some-model", f"hf-config:{tmp_path / 'none.json'}", "torchvision:nosuch"]
    )
    assert err == "" and len(lines) == 3
    assert "needs the network" in lines[0]["error"] and "downloads nothing" in lines[0]["error"]
    assert "is not a file" in lines[1]["error"]
    assert "torchvision has no model 'nosuch'" in lines[2]["error"]


def test_a_model_that_gives_nan_on_its_example_input_says_so_in_its_description(tmp_path, capsys):
    """Every form is judged against eager's outputs, NaN included (a NaN there is met by a NaN):
    the build records how many values of each output are not finite and the model's line says
    so, or a user would read `max|diff| 0 OK` and never learn their model gives NaN."""
    from deploytui.families.pytorch.exports import export_model
    from deploytui.models.load import load
    from deploytui.views.tui.session import describe_model

    (tmp_path / "logof.py").write_text(
        "import torch\n"
        "class LogOf(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return {'log': torch.log(x), 'ids': (x > 0).long()}\n"
        "def make():\n"
        "    return LogOf(), (torch.tensor([[1.0, -1.0, 0.0], [2.0, -3.0, 4.0]]),)\n"
    )
    m = load(models.parse(f"{tmp_path / 'logof.py'}:make"))
    out = tmp_path / "out"
    out.mkdir()
    export_model(m, out, "logof")
    info = json.loads((out / "model.json").read_text())
    assert [(o["name"], o["nonfinite"]) for o in info["outputs"]] == [
        ("log", 3),
        ("ids", 0),
    ]  # NaN, NaN, -inf
    assert describe_model(info).endswith("⚠ eager gives NaN or inf: log 3 of 6")
    assert "⚠" not in describe_model({**info, "outputs": [{**o, "nonfinite": 0} for o in info["outputs"]]})
    # the CLI's bench says it too, before its forms (here none is built: it says so and goes on)
    from deploytui.views.cli.main import main

    art = tmp_path / "art"
    (art / "logof-make").mkdir(parents=True)
    (art / "logof-make" / "model.json").write_text(json.dumps(info))
    ref = f"{tmp_path / 'logof.py'}:make"
    main(["bench", "tract", "--no-build", "-n", "1", "--model", ref, "--artifacts", str(art)])
    assert "warning: eager gives NaN or inf on the example input: log 3 of 6" in capsys.readouterr().err
