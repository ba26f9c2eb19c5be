"""The C++ runners' protocol: safetensors inputs and outputs, stage times, any model.

    PROGRAM MODEL --inputs IN.safetensors --outputs OUT.safetensors [--repeat K]

Real builds (the session fixture `built_artifacts`) on models made here: one small module that
takes two inputs (F32 rank 3, I64 rank 1 through an embedding) and returns a nested tuple
(F32 rank 3, I64 rank 1, BOOL rank 0), exported as TorchScript and as a lean AOTInductor package
(~30 s, once per module) in a subprocess, which also saves eager PyTorch's outputs.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from cpp_support import A1_CASES, built_loaders, private_tmp_env, run_program
from deploytui.core import paths, runenv
from deploytui.models import a1
from deploytui.runners.protocol import LINE_KEYS

# Exports the test models into argv[1]; eager's outputs go to expected.safetensors.
MAKE_MODELS = r"""
import sys
from pathlib import Path

import torch
from safetensors.torch import save_file

out = Path(sys.argv[1])


class TwoInputs(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 5)
        self.lin = torch.nn.Linear(5, 3)

    def forward(self, x, idx):
        h = x + self.emb(idx)  # [2, 4, 5] + [4, 5]
        y = self.lin(torch.relu(h))
        return y, (idx * 2 + 1, y.sum() > 0)


class Counter(torch.nn.Module):
    # Counts its forward calls: its output after 1 + K calls is 1 + K.
    def __init__(self):
        super().__init__()
        self.n = 0

    def forward(self, x, idx):
        self.n += 1
        return torch.full([1], self.n, dtype=torch.int64)


torch.manual_seed(0)
model = TwoInputs().eval()
x = torch.randn(2, 4, 5)
idx = torch.tensor([1, 0, 7, 3], dtype=torch.int64)
save_file({"input_0": x, "input_1": idx}, str(out / "inputs.safetensors"))
with torch.inference_mode():
    y, (j, b) = model(x, idx)
save_file({"output_0": y, "output_1": j, "output_2": b}, str(out / "expected.safetensors"))

torch.jit.script(model).save(str(out / "two_script.pt"))
torch.jit.script(Counter()).save(str(out / "counter_script.pt"))
ep = torch.export.export(model, (x, idx))
torch._inductor.aoti_compile_and_package(
    ep, package_path=str(out / "two_aoti_lean.pt2"), inductor_configs={"aot_inductor.link_libtorch": False}
)
"""

# program -> model file made by MAKE_MODELS
MODELS = {"cpp-torchscript": "two_script.pt", "cpp-aoti": "two_aoti_lean.pt2"}


@pytest.fixture(scope="module")
def art(built_artifacts) -> Path:
    return built_loaders(built_artifacts)


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("models")
    # the build's TMPDIR and inductor cache: AOTInductor's precompiled headers (two of ~150 MB,
    # kept under TMPDIR) are the ones the build made, not made again for this module
    env = runenv.runner_env()
    script = out / "make_models.py"  # a file, not -c: torch.jit.script reads the source
    script.write_text(MAKE_MODELS)
    proc = subprocess.run(
        [sys.executable, str(script), str(out)],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    return private_tmp_env(tmp_path)


_run = run_program


def _protocol(exe: Path, model: Path, inputs: Path, outputs: Path, env, repeat: int | None = None) -> dict:
    """Runs the protocol; checks exit 0, a quiet stderr and one JSON line; returns that line."""
    argv = [exe, model, "--inputs", inputs, "--outputs", outputs]
    if repeat is not None:
        argv += ["--repeat", str(repeat)]
    proc = _run(argv, env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert len(lines) == 1, proc.stdout
    report = json.loads(lines[0])
    assert set(report) == set(LINE_KEYS)
    assert set(report["stages_ms"]) == {"load", "first_forward", "steady_forward"}
    assert (
        len(report["forward_ms"]) == (10 if repeat is None else repeat)
        and report["threads"]["requested"] == 1
    )
    return report


def _assert_one_line_error(proc: subprocess.CompletedProcess, *fragments: str) -> None:
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ")
    for f in fragments:
        assert f in lines[0], lines[0]


@pytest.mark.parametrize("exe", list(MODELS))
def test_two_inputs_tuple_outputs_match_eager(art, models, env, tmp_path, exe):
    import torch
    from safetensors.torch import load_file, save

    expected = load_file(str(models / "expected.safetensors"))
    out = tmp_path / "out.safetensors"
    inputs = models / "inputs.safetensors"
    report = _protocol(art / "shared" / "bin" / exe, models / MODELS[exe], inputs, out, env, repeat=3)
    stages = report["stages_ms"]
    assert report["outputs"] == 3
    assert all(isinstance(v, float) and v >= 0 for v in stages.values()), stages

    got = load_file(str(out))
    assert sorted(got) == ["output_0", "output_1", "output_2"]
    for name, want in expected.items():
        assert got[name].dtype == want.dtype, name
        assert got[name].shape == want.shape, name
        assert torch.equal(got[name], want), (name, (got[name].double() - want.double()).abs().max())
    # the writer lays the file out byte for byte as the Python package does
    assert out.read_bytes() == save(got)
    # the AOTI loader's unpack folder is gone after the run
    assert os.listdir(env["TMPDIR"]) == []


def test_repeat_count(art, models, env, tmp_path):
    """--repeat K runs forward 1 + K times (a scripted counter returns its call count);
    K = 0 gives steady_forward null; without --repeat K is 10."""
    from safetensors.torch import load_file

    exe, model = art / "shared" / "bin" / "cpp-torchscript", models / "counter_script.pt"
    inputs, out = models / "inputs.safetensors", tmp_path / "out.safetensors"
    for repeat, calls in ((0, 1), (4, 5), (None, 11)):
        report = _protocol(exe, model, inputs, out, env, repeat=repeat)
        assert load_file(str(out))["output_0"].tolist() == [calls]
        steady = report["stages_ms"]["steady_forward"]
        if repeat == 0:
            assert steady is None
        else:
            assert isinstance(steady, float) and steady >= 0
        assert report["stages_ms"]["load"] >= 0 and report["stages_ms"]["first_forward"] >= 0


def _st_bytes(header: dict | str, data: bytes, length: int | None = None) -> bytes:
    text = header if isinstance(header, str) else json.dumps(header)
    raw = text.encode()
    return struct.pack("<Q", len(raw) if length is None else length) + raw + data


def _bad_inputs(models: Path, tmp: Path) -> dict[str, tuple[bytes | None, list[str]]]:
    """case -> (file bytes, or None for no file; fragments the error line must hold)."""
    good = (models / "inputs.safetensors").read_bytes()
    x = {"dtype": "F32", "shape": [2, 4, 5], "data_offsets": [0, 160]}
    idx = {"dtype": "I64", "shape": [4], "data_offsets": [160, 192]}
    data = bytes(192)
    return {
        "missing-file": (None, ["inputs file", "No such file"]),
        "empty-file": (b"", ["too short"]),
        "truncated": (good[: len(good) // 2], []),
        "truncated-header": (good[:20], ["header length"]),
        "header-length-too-large": (_st_bytes({"input_0": x}, data, length=1 << 40), ["header length"]),
        "header-length-past-end": (_st_bytes({"input_0": x}, b"", length=10_000), ["runs past the end"]),
        "bad-json": (_st_bytes('{"input_0": {"dtype": "F32", ', data), ["bad JSON header"]),
        "not-an-object": (_st_bytes("[1, 2]", data), ["not a JSON object"]),
        "offsets-out-of-range": (
            _st_bytes({"input_0": x, "input_1": {**idx, "data_offsets": [160, 10_000]}}, data),
            ["input_1", "out of range"],
        ),
        "offsets-reversed": (_st_bytes({"input_0": {**x, "data_offsets": [160, 0]}}, data), ["out of range"]),
        "shape-does-not-match-data": (
            _st_bytes({"input_0": {**x, "shape": [2, 4, 6]}, "input_1": idx}, data),
            ["input_0", "do not match"],
        ),
        "unknown-dtype": (_st_bytes({"input_0": {**x, "dtype": "Q7"}}, data), ["unknown dtype"]),
        "bytes-left-over": (good + bytes(4), ["bytes of data"]),
        "missing-input_0": (_st_bytes({"input_1": {**idx, "data_offsets": [0, 32]}}, bytes(32)), ["input_0"]),
        "gap-in-inputs": (
            _st_bytes({"input_0": x, "input_2": idx}, data),
            ["no tensor named input_1"],
        ),
        "no-tensors": (_st_bytes({"__metadata__": {"format": "pt"}}, b""), ["no tensor named input_0"]),
        "stray-name": (_st_bytes({"input_0": x, "weights": idx}, data), ['unexpected tensor "weights"']),
        "deep-json": (_st_bytes("[" * 100_000, b""), ["bad JSON header"]),
    }


@pytest.mark.parametrize("exe", list(MODELS))
def test_damaged_inputs_are_one_line_errors(art, models, env, tmp_path, exe):
    out = tmp_path / "out.safetensors"
    for case, (content, fragments) in _bad_inputs(models, tmp_path).items():
        inputs = tmp_path / f"{case}.safetensors"
        if content is not None:
            inputs.write_bytes(content)
        proc = _run(
            [art / "shared" / "bin" / exe, models / MODELS[exe], "--inputs", inputs, "--outputs", out], env
        )
        try:
            _assert_one_line_error(proc, *fragments)
        except AssertionError as e:
            raise AssertionError(f"{exe} {case}: {e}") from None
        assert not out.exists(), case
    assert os.listdir(env["TMPDIR"]) == []


@pytest.mark.parametrize("exe", list(MODELS))
def test_inputs_the_model_rejects_are_one_line_errors(art, models, env, tmp_path, exe):
    from safetensors.torch import load_file, save_file

    good = load_file(str(models / "inputs.safetensors"))
    x, idx = good["input_0"], good["input_1"]
    cases = {
        "wrong-dtype": {"input_0": x, "input_1": idx.float()},  # embedding indices must be integers
        "one-input-too-few": {"input_0": x},
        "one-input-too-many": {"input_0": x, "input_1": idx, "input_2": idx.clone()},
    }
    out = tmp_path / "out.safetensors"
    for case, tensors in cases.items():
        inputs = tmp_path / f"{case}.safetensors"
        save_file(tensors, str(inputs))
        proc = _run(
            [art / "shared" / "bin" / exe, models / MODELS[exe], "--inputs", inputs, "--outputs", out], env
        )
        try:
            _assert_one_line_error(proc)
        except AssertionError as e:
            raise AssertionError(f"{exe} {case}: {e}") from None
        assert not out.exists(), case
    assert os.listdir(env["TMPDIR"]) == []


def test_bad_arguments_are_one_line_errors(art, models, env, tmp_path):
    exe, model = art / "shared" / "bin" / "cpp-torchscript", models / MODELS["cpp-torchscript"]
    inputs, out = models / "inputs.safetensors", tmp_path / "out.safetensors"
    cases = {
        "inputs-without-outputs": [model, "--inputs", inputs],
        "outputs-without-inputs": [model, "--outputs", out],
        "repeat-without-inputs": [model, "--repeat", "3"],
        "model-alone (no legacy mode)": [model],
        "negative-repeat": [model, "--inputs", inputs, "--outputs", out, "--repeat", "-1"],
        "repeat-not-a-number": [model, "--inputs", inputs, "--outputs", out, "--repeat", "3x"],
        "repeat-without-value": [model, "--inputs", inputs, "--outputs", out, "--repeat"],
        "unknown-option": [model, "--inputs", inputs, "--outputs", out, "--fast"],
        "missing-model": [tmp_path / "nope.pt", "--inputs", inputs, "--outputs", out],
        "outputs-in-missing-folder": [model, "--inputs", inputs, "--outputs", tmp_path / "no" / "out.st"],
    }
    for case, argv in cases.items():
        try:
            _assert_one_line_error(_run([exe, *argv], env))
        except AssertionError as e:
            raise AssertionError(f"{case}: {e}") from None


@pytest.mark.parametrize("form", list(A1_CASES))
def test_a1_inputs_file_gives_eagers_logits(art, eager, env, tmp_path, form):
    """A1's inputs file (bit-identical to the page's formula input) gives eager's logits exactly."""
    import torch
    from safetensors.torch import load_file

    exe, model = A1_CASES[form]
    inputs, out = art / "a1" / "inputs.safetensors", tmp_path / "a1_out.safetensors"
    assert torch.equal(
        load_file(str(inputs))["input_0"], torch.tensor(a1.input_values(), dtype=torch.float32)
    )
    report = _protocol(art / "shared" / "bin" / exe, art / "a1" / model, inputs, out, env, repeat=2)
    assert report["outputs"] == 1
    got = load_file(str(out))["output_0"]
    assert got.dtype == torch.float32 and tuple(got.shape) == a1.OUTPUT_SHAPE
    assert torch.equal(got, torch.tensor(eager, dtype=torch.float32))
    assert os.listdir(env["TMPDIR"]) == []


def _mutations(seed: int = 7, per_base: int = 300) -> list[bytes]:
    """Damaged variants of a few real safetensors files (written by the Python package)."""
    import random
    import re

    import numpy as np
    from safetensors.numpy import save

    rng = random.Random(seed)
    x = np.arange(40, dtype=np.float32).reshape(2, 4, 5)
    bases = [
        save({"input_0": x, "input_1": np.arange(4, dtype=np.int64)}),
        save({"a": np.zeros((), dtype=np.bool_), "b": np.ones((0, 3), dtype=np.float16), "c": np.int8([1])}),
        save({"w": np.linspace(0, 1, 7, dtype=np.float64)}, metadata={"format": "pt", "k\u00e9y": 'v"1'}),
    ]
    out: list[bytes] = list(bases)
    for base in bases:
        (n,) = struct.unpack("<Q", base[:8])
        header, data = base[8 : 8 + n].decode(), base[8 + n :]
        for _ in range(per_base):
            kind = rng.randrange(6)
            if kind == 0:  # truncated anywhere
                out.append(base[: rng.randrange(len(base))])
            elif kind == 1:  # a few bytes changed anywhere, mostly in the header
                b = bytearray(base)
                for _ in range(rng.randint(1, 3)):
                    at = rng.randrange(8, 8 + n) if rng.random() < 0.9 else rng.randrange(len(b))
                    b[at] = rng.randrange(256)
                out.append(bytes(b))
            elif kind == 2:  # another header length
                length = rng.choice([0, 1, 2, n - 1, n + 1, len(base), 2**32, 2**63, 2**64 - 1])
                length = rng.choice([length, rng.randrange(2 * n)])
                out.append(struct.pack("<Q", length) + base[8:])
            elif kind == 3:  # numbers in the header replaced (shapes, offsets)
                numbers = list(re.finditer(r"\d+", header))
                m = rng.choice(numbers)
                value = rng.choice(["-1", "-0", "0", "1", "1.5", "1e3", str(2**63), str(2**64)])
                value = rng.choice([value, str(rng.randrange(400))])
                h = (header[: m.start()] + value + header[m.end() :]).encode()
                out.append(struct.pack("<Q", len(h)) + h + data)
            elif kind == 4:  # a JSON token inserted
                pos = rng.randrange(len(header))
                tokens = ['"', "{", "}", "[", "]", ",", ":", "\\", "\\u12", "\\ud800", "null", " ", "\x01"]
                tok = rng.choice(tokens)
                h = (header[:pos] + tok + header[pos:]).encode()
                out.append(struct.pack("<Q", len(h)) + h + data)
            else:  # data cut or grown
                if rng.random() < 0.5:
                    out.append(base[: 8 + n] + data[: rng.randrange(len(data) + 1)])
                else:
                    out.append(base + bytes(rng.randrange(1, 9)))
    return out


@pytest.mark.skipif(shutil.which("g++") is None, reason="no g++")
def test_safetensors_reader_survives_damaged_files(tmp_path):
    """cpp/safetensors.h under AddressSanitizer + UBSan on ~900 damaged files: each is read or
    refused with one line, never a crash; it refuses exactly what the Python package refuses,
    and reads the rest as that package does."""
    from safetensors import SafetensorError
    from safetensors.numpy import load

    exe = tmp_path / "st_check"
    build = subprocess.run(
        [
            os.environ.get("CXX", "g++"),
            "-std=c++20",
            "-O1",
            "-g",
            "-fsanitize=address,undefined",
            "-fno-sanitize-recover=all",
            f"-I{paths.ROOT / 'cpp'}",
            str(paths.ROOT / "tests" / "cpp" / "st_check.cpp"),
            "-o",
            str(exe),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    files = []
    for i, content in enumerate(_mutations()):
        f = tmp_path / f"m{i:04d}.safetensors"
        f.write_bytes(content)
        files.append(f)
    proc = _run([exe, *files], {**os.environ, "ASAN_OPTIONS": "detect_leaks=1"})
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert len(lines) == len(files)
    refused = 0
    for f, line in zip(files, lines, strict=True):
        assert line.startswith(("ok ", "error ")), line
        try:
            tensors = load(f.read_bytes())
        except (SafetensorError, ValueError, TypeError):
            assert line.startswith("error "), (f.name, line)
            refused += 1
            continue
        assert line.startswith("ok "), (f.name, line)
        got = json.loads(line[3:])
        assert {k: v[1] for k, v in got.items()} == {k: list(v.shape) for k, v in tensors.items()}, f.name
        assert all(v[2] == tensors[k].nbytes for k, v in got.items()), f.name
    assert refused > len(files) // 2  # the mutations are mostly real damage
