"""The runner protocol of the burn binaries, end to end, on models other than A1.

PROGRAM [MODEL_FILE] --inputs IN.safetensors --outputs OUT.safetensors [--repeat K]: inputs
`input_0..`, outputs `output_0..` (F32, I64 for ints), one JSON line with `stages_ms` and `outputs`.

Two small models are exported here with torch.onnx.export(dynamo=True) and built with the same
command the build steps run (deploytui.families.common.cargo_cmd, --out a temp model folder holding
<name>.onnx, --stem <name>); the MLP binaries are the built ones, fed MLPs of other sizes.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from deploytui.runners.protocol import LINE_KEYS

ATOL = RTOL = 1e-5
ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def _torch():
    import torch

    return torch


def _run(argv: list[str], **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "RUST_BACKTRACE": "1"}
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env, **kw, check=False)


def _save_inputs(path: Path, inputs: list) -> Path:
    from safetensors.torch import save_file

    save_file({f"input_{i}": t.contiguous().clone() for i, t in enumerate(inputs)}, str(path))
    return path


def _protocol(argv: list[str], inputs: list, tmp: Path, repeat: int = 3) -> tuple[dict, list]:
    """Runs one protocol invocation; returns (the JSON line, the outputs in order)."""
    from safetensors.torch import load_file

    src, dst = tmp / "in.safetensors", tmp / "out.safetensors"
    _save_inputs(src, inputs)
    dst.unlink(missing_ok=True)
    proc = _run([*argv, "--inputs", str(src), "--outputs", str(dst), "--repeat", str(repeat)])
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1, proc.stdout
    doc = json.loads(lines[0])
    assert set(doc) == set(LINE_KEYS)
    assert set(doc["stages_ms"]) == {"load", "first_forward", "steady_forward"}
    assert len(doc["forward_ms"]) == repeat and doc["threads"] == {"requested": 1, "reported": None}
    loaded = load_file(str(dst))
    assert sorted(loaded) == sorted(f"output_{i}" for i in range(doc["outputs"]))
    return doc, [loaded[f"output_{i}"] for i in range(doc["outputs"])]


def _assert_matches(got: list, want: list) -> None:
    torch = _torch()
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape, (g.shape, w.shape)
        if w.dtype.is_floating_point:
            assert g.dtype == torch.float32
            torch.testing.assert_close(g, w.float(), atol=ATOL, rtol=RTOL)
        else:
            assert g.dtype == torch.int64
            assert torch.equal(g, w.long())


def _one_line_error(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


# ---- models ------------------------------------------------------------------------------------


def conv_net():
    torch = _torch()
    nn = torch.nn

    class ConvNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
            self.bn1 = nn.BatchNorm2d(8)
            self.pool = nn.MaxPool2d(2)
            self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
            self.bn2 = nn.BatchNorm2d(8)
            self.gap = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(8, 10)

        def forward(self, x):
            x = self.pool(torch.relu(self.bn1(self.conv1(x))))
            y = torch.relu(self.bn2(self.conv2(x)))
            x = torch.relu(x + y)  # residual add
            return self.fc(torch.flatten(self.gap(x), 1))

    torch.manual_seed(0)
    m = ConvNet()
    with torch.no_grad():  # batch norm statistics that are not the identity
        for bn in (m.bn1, m.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.2, 0.2)
    return m.eval(), (torch.randn(1, 3, 32, 32),)


def embed_net():
    torch = _torch()
    nn = torch.nn

    class TwoHeads(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = nn.Embedding(20, 6)
            self.head = nn.Linear(6, 4)

        def forward(self, tokens):
            e = self.emb(tokens)  # [2, 5, 6]
            return self.head(e.mean(dim=1)), torch.argmax(e, dim=-1)

    torch.manual_seed(1)
    return TwoHeads().eval(), (torch.randint(0, 20, (2, 5), dtype=torch.int64),)


# not named like a zoo model: a File binary reads its .bpk from the shared cargo OUT_DIR, by stem
MODELS = {"protoconv": conv_net, "twoheads": embed_net}
ONNX_STEPS = ("burn-onnx-file", "burn-onnx-bpk", "burn-onnx-embed")


@pytest.fixture(scope="module")
def cargo_ok(built_artifacts) -> Path:
    if shutil.which("cargo") is None:
        pytest.skip("no cargo on this machine: the burn forms are unavailable")
    return built_artifacts


def _build_onnx(name: str, work: Path) -> dict:
    """Exports the model, then builds the three burn-onnx forms of it into work/art."""
    torch = _torch()
    from deploytui.spec.context import BuildContext
    from workspaces import A1

    model, inputs = MODELS[name]()
    art = work / "art"
    art.mkdir()
    onnx = art / f"{name}.onnx"
    torch.onnx.export(model, inputs, str(onnx), dynamo=True)
    with torch.inference_mode():
        want = model(*inputs)
    want = list(want) if isinstance(want, tuple) else [want]
    ctx = BuildContext.of(A1)  # the real build's burn tools and cargo target
    facts = {}
    for step in ONNX_STEPS:
        argv = [
            sys.executable,
            "-m",
            "deploytui.families.common.cargo_cmd",
            step,
            "--out",
            str(art),
            "--rust",
            str(ROOT / "rust"),
            "--target",
            str(ctx.cargo_target),
            "--stem",
            name,
            "--tools",
            str(ctx.bin),
        ]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=1800, check=False)
        assert proc.returncode == 0, proc.stderr[-4000:]
        facts[step] = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"art": art, "onnx": onnx, "inputs": list(inputs), "want": want, "facts": facts, "name": name}


@pytest.fixture(scope="module")
def convnet(cargo_ok, tmp_path_factory) -> dict:
    return _build_onnx("protoconv", tmp_path_factory.mktemp("protoconv"))


@pytest.fixture(scope="module")
def twoheads(cargo_ok, tmp_path_factory) -> dict:
    return _build_onnx("twoheads", tmp_path_factory.mktemp("twoheads"))


def _argv(built: dict, step: str) -> list[str]:
    exe = str(built["art"] / "bin" / step)
    if step == "burn-onnx-bpk":
        return [exe, str(built["art"] / built["facts"][step]["bpk"])]
    return [exe]


# ---- burn-onnx forms of the two models ---------------------------------------------------------


@pytest.mark.parametrize("step", ONNX_STEPS)
def test_conv_net_matches_eager(convnet, step, tmp_path):
    assert convnet["onnx"].with_name(convnet["onnx"].name + ".data").is_file()  # weights as external data
    doc, got = _protocol(_argv(convnet, step), convnet["inputs"], tmp_path)
    assert doc["outputs"] == 1 and all(v >= 0 for v in doc["stages_ms"].values())
    _assert_matches(got, convnet["want"])


@pytest.mark.parametrize("step", ONNX_STEPS)
def test_int_input_and_two_outputs_match_eager(twoheads, step, tmp_path):
    doc, got = _protocol(_argv(twoheads, step), twoheads["inputs"], tmp_path)
    assert doc["outputs"] == 2
    _assert_matches(got, twoheads["want"])


def test_generated_code_is_named_after_the_onnx_file(convnet, twoheads):
    for built in (convnet, twoheads):
        name, art = built["name"], built["art"]
        assert (art / "onnx" / f"{name}.rs").is_file() and (art / "onnx" / f"{name}_embed.rs").is_file()
        assert built["facts"]["burn-onnx-file"]["baked_bpk_path"].endswith(f"/out/model/{name}.bpk")
        assert built["facts"]["burn-onnx-bpk"]["bpk"] == f"bin/{name}_onnx.bpk"
    code = (twoheads["art"] / "onnx" / "twoheads.rs").read_text()
    assert "Tensor<2, Int>" in code  # the int64 input


def test_bpk_form_runs_from_anywhere(convnet, tmp_path):
    """burn-onnx-bpk + its .bpk copied elsewhere still run: nothing is read from the build dir."""
    lone = tmp_path / "ship"
    lone.mkdir()
    shutil.copy2(convnet["art"] / "bin" / "burn-onnx-bpk", lone / "burn-onnx-bpk")
    shutil.copy2(convnet["art"] / convnet["facts"]["burn-onnx-bpk"]["bpk"], lone / "model.bpk")
    _, got = _protocol([str(lone / "burn-onnx-bpk"), str(lone / "model.bpk")], convnet["inputs"], tmp_path)
    _assert_matches(got, convnet["want"])


def test_bpk_form_errors_are_one_line(convnet, tmp_path):
    exe = str(convnet["art"] / "bin" / "burn-onnx-bpk")
    inputs = _save_inputs(tmp_path / "in.safetensors", convnet["inputs"])
    out = str(tmp_path / "out.safetensors")
    line = _one_line_error(_run([exe, str(tmp_path / "gone.bpk"), "--inputs", str(inputs), "--outputs", out]))
    assert "Failed to load burnpack file" in line
    bpk = str(convnet["art"] / convnet["facts"]["burn-onnx-bpk"]["bpk"])
    torch = _torch()
    wrong_rank = _save_inputs(tmp_path / "rank.safetensors", [torch.zeros(3, 32, 32)])
    line = _one_line_error(_run([exe, bpk, "--inputs", str(wrong_rank), "--outputs", out]))
    assert "rank-4" in line
    data = inputs.read_bytes()
    (tmp_path / "cut.safetensors").write_bytes(data[: len(data) // 2])
    _one_line_error(_run([exe, bpk, "--inputs", str(tmp_path / "cut.safetensors"), "--outputs", out]))
    two = _save_inputs(tmp_path / "two.safetensors", [*convnet["inputs"], *convnet["inputs"]])
    assert "takes 1 input" in _one_line_error(_run([exe, bpk, "--inputs", str(two), "--outputs", out]))
    _one_line_error(_run([exe, "--inputs", str(inputs), "--outputs", out]))  # no MODEL_FILE
    assert not Path(out).exists()


def test_file_form_relocation_is_one_line_with_burns_message(convnet, tmp_path):
    baked = Path(convnet["facts"]["burn-onnx-file"]["baked_bpk_path"])
    inputs = _save_inputs(tmp_path / "in.safetensors", convnet["inputs"])
    moved = baked.with_name(baked.name + ".moved-by-test")
    baked.rename(moved)
    try:
        proc = _run(
            [
                str(convnet["art"] / "bin" / "burn-onnx-file"),
                "--inputs",
                str(inputs),
                "--outputs",
                str(tmp_path / "o.safetensors"),
            ]
        )
    finally:
        moved.rename(baked)
    line = _one_line_error(proc)
    assert "Failed to load burnpack file" in line and str(baked) in line


def test_repeat_zero_has_no_steady_stage(twoheads, tmp_path):
    doc, got = _protocol(_argv(twoheads, "burn-onnx-embed"), twoheads["inputs"], tmp_path, repeat=0)
    assert doc["stages_ms"]["steady_forward"] is None
    _assert_matches(got, twoheads["want"])


# ---- the MLP binaries (burn-mlp) on MLPs of any size --------------------------------------------


def _mlp(sizes: list[int], seed: int):
    torch = _torch()
    nn = torch.nn

    class Mlp(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            for k, (i, o) in enumerate(itertools.pairwise(sizes)):
                setattr(self, f"fc{k + 1}", nn.Linear(i, o))
            self.n = len(sizes) - 1

        def forward(self, x):
            for k in range(self.n):
                x = getattr(self, f"fc{k + 1}")(x)
                if k < self.n - 1:
                    x = torch.relu(x)
            return x

    torch.manual_seed(seed)
    return Mlp().eval()


@pytest.fixture(scope="module")
def mlp_bins(cargo_ok) -> Path:
    """The shared programs (burn-convert, burn-file, burn-st); a1's own are in a1/bin."""
    bins = cargo_ok / "shared" / "bin"
    for b in ("burn-convert", "burn-file", "burn-st"):
        assert (bins / b).is_file(), b
    for b in ("burn-embed", "burn-onnx-bpk"):
        assert (cargo_ok / "a1" / "bin" / b).is_file(), b
    return bins


@pytest.mark.parametrize("sizes", [[4, 8, 3], [5, 16, 16, 2], [12, 7]])
def test_mlp_binaries_read_sizes_from_the_weights(mlp_bins, sizes, tmp_path):
    torch = _torch()
    from safetensors.torch import save_file

    model = _mlp(sizes, seed=len(sizes))
    st = tmp_path / "mlp.safetensors"
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(st))
    bpk = tmp_path / "mlp.bpk"
    proc = _run([str(mlp_bins / "burn-convert"), str(st), str(bpk)])
    assert proc.returncode == 0, proc.stderr
    x = torch.randn(6, sizes[0])
    with torch.inference_mode():
        want = [model(x)]
    for argv in ([str(mlp_bins / "burn-st"), str(st)], [str(mlp_bins / "burn-file"), str(bpk)]):
        doc, got = _protocol(argv, [x], tmp_path)
        assert doc["outputs"] == 1
        _assert_matches(got, want)


def test_a1_binaries_speak_the_protocol(mlp_bins, built_artifacts, tmp_path):
    """The shipped A1 forms, including the compiled-in one, on an input other than the formula."""
    torch = _torch()
    from deploytui.models.a1_module import a1_model

    x = torch.randn(9, 4)
    with torch.inference_mode():
        want = [a1_model()(x)]
    a1 = built_artifacts / "a1"
    for argv in (
        [str(a1 / "bin" / "burn-embed")],
        [str(mlp_bins / "burn-file"), str(a1 / "a1.bpk")],
        [str(mlp_bins / "burn-st"), str(a1 / "a1.safetensors")],
        [str(a1 / "bin" / "burn-onnx-bpk"), str(a1 / "bin" / "a1_onnx.bpk")],
    ):
        _, got = _protocol(argv, [x], tmp_path)
        _assert_matches(got, want)
    bad = _save_inputs(tmp_path / "bad.safetensors", [torch.zeros(9, 5)])
    line = _one_line_error(
        _run([str(a1 / "bin" / "burn-embed"), "--inputs", str(bad), "--outputs", str(tmp_path / "o")])
    )
    assert "[..., 4]" in line
