"""Integration tests of the Rust (burn) forms of a1, on a built artifacts folder.

Needs the session fixture `built_artifacts` (tests/conftest.py): the full build, run once. Every
binary speaks the runner protocol on a1's inputs file (the legacy A1 mode is gone).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

TOL = 1e-6

# binary -> (its path, model-file arguments), relative to the artifacts root
RUNNERS = {
    "burn-file": ("shared/bin/burn-file", ("a1/a1.bpk",)),
    "burn-embed": ("a1/bin/burn-embed", ()),
    "burn-st": ("shared/bin/burn-st", ("a1/a1.safetensors",)),
    "burn-onnx-file": ("a1/bin/burn-onnx-file", ()),
    "burn-onnx-embed": ("a1/bin/burn-onnx-embed", ()),
    "burn-onnx-bpk": ("a1/bin/burn-onnx-bpk", ("a1/bin/a1_onnx.bpk",)),
}

SYSTEM_LIBS = re.compile(
    r"^(linux-vdso|linux-gate|ld-linux[-\w.]*|libc|libm|libgcc_s|libpthread|libdl|librt|libutil)(\.so[.\d]*)?$"
)


@pytest.fixture(scope="module")
def art(built_artifacts) -> Path:
    art = built_artifacts
    missing = [b for b, (exe, _) in RUNNERS.items() if not (art / exe).is_file()]
    if missing and shutil.which("cargo") is None:
        pytest.skip("no cargo on this machine: the burn forms are unavailable")
    assert not missing, f"burn binaries not built: {missing}"
    return art


def _run(argv: list[str], **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "RUST_BACKTRACE": "1"}
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env, **kw, check=False)


def _io(art: Path, tmp: Path) -> list[str]:
    return ["--inputs", str(art / "a1" / "inputs.safetensors"), "--outputs", str(tmp / "out.safetensors")]


def _logits(proc: subprocess.CompletedProcess, tmp: Path) -> list[list[float]]:
    """The [4, 3] output the protocol run wrote, as rows."""
    from deploytui.core import tensorfile

    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["outputs"] == 1, proc.stdout
    (out,) = tensorfile.read(tmp / "out.safetensors").values()
    assert out.shape == (4, 3)
    return [out.values[r * 3 : r * 3 + 3] for r in range(4)]


def _max_diff(a: list[list[float]], b: list[list[float]]) -> float:
    assert len(a) == len(b) == 4 and all(len(r) == 3 for r in a + b)
    return max(abs(x - y) for ra, rb in zip(a, b, strict=False) for x, y in zip(ra, rb, strict=False))


@pytest.mark.parametrize("exe", list(RUNNERS))
def test_logits_match_eager(art, eager, exe, tmp_path):
    path, files = RUNNERS[exe]
    proc = _run([str(art / path), *(str(art / f) for f in files), *_io(art, tmp_path)])
    assert _max_diff(_logits(proc, tmp_path), eager) <= TOL


@pytest.mark.parametrize("exe", list(RUNNERS))
def test_links_only_system_libraries(art, exe):
    if shutil.which("ldd") is None:
        pytest.skip("no ldd")
    out = subprocess.run(
        ["ldd", str(art / RUNNERS[exe][0])], capture_output=True, text=True, check=False
    ).stdout
    names = [line.split()[0].rsplit("/", 1)[-1] for line in out.splitlines() if line.strip()]
    assert names, out
    foreign = [n for n in names if not SYSTEM_LIBS.match(n)]
    assert not foreign, f"{exe} links {foreign}"


def test_embed_binaries_ship_alone(art, eager, tmp_path):
    """The embed forms carry their weights: a lone copy elsewhere still runs."""
    for exe in ("burn-embed", "burn-onnx-embed"):
        lone = tmp_path / exe
        shutil.copy2(art / RUNNERS[exe][0], lone)
        assert (
            _max_diff(_logits(_run([str(lone), *_io(art, tmp_path)], cwd=tmp_path), tmp_path), eager) <= TOL
        )


def test_capture_lists_the_forward_ops(art):
    doc = json.loads((art / "a1" / "capture.json").read_text())
    kinds = [op["kind"].lower() for op in doc["operations"]]
    for op in ("matmul", "reshape", "add", "relu"):
        assert any(op in k for k in kinds), f"{op} not in {kinds}"
    assert len(doc["inputs"]) == 1 and len(doc["outputs"]) == 1
    ids = {t["id"] for op in doc["operations"] for t in op["inputs"] + op["outputs"]}
    assert set(doc["inputs"]) <= ids and set(doc["outputs"]) <= ids
    first_matmul = next(op for op in doc["operations"] if "matmul" in op["kind"].lower())
    assert [t["shape"] for t in first_matmul["inputs"]] == [[4, 4], [4, 8]]
    assert sorted(v["shape"] for v in doc["values"]) == sorted([[4, 8], [8], [8, 3], [3], [4, 4]])


def test_generated_onnx_code_is_shown(art):
    file_rs = (art / "a1" / "onnx" / "a1.rs").read_text()
    embed_rs = (art / "a1" / "onnx" / "a1_embed.rs").read_text()
    assert "pub struct Model" in file_rs and "pub struct Model" in embed_rs
    assert "from_file" in file_rs and "from_embedded" in embed_rs
    assert (art / "a1" / "onnx" / "a1.bpk").stat().st_size > 0


def test_onnx_file_bakes_the_build_directory_path(art):
    """LoadStrategy::File: Model::default() reads the .bpk at the absolute OUT_DIR path of the build
    (the page's lesson: the binary only works where it was built)."""
    m = re.search(r'Self::from_file\(\s*"([^"]+)"', (art / "a1" / "onnx" / "a1.rs").read_text())
    assert m, "no from_file(<path>) in the generated Default"
    baked = Path(m.group(1))
    assert baked.is_absolute() and baked.name == "a1.bpk" and baked.is_file()
    assert str(art) not in str(baked)  # not the artifacts copy: the cargo build directory
    assert m.group(1).encode() in (art / "a1" / "bin" / "burn-onnx-file").read_bytes()
    assert m.group(1).encode() not in (art / "a1" / "bin" / "burn-onnx-embed").read_bytes()


def _assert_one_line_error(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr


def test_infer_file_missing_bpk(art, tmp_path):
    infer_file = str(art / "shared" / "bin" / "burn-file")
    _assert_one_line_error(_run([infer_file, str(tmp_path / "nope.bpk"), *_io(art, tmp_path)]))


def test_infer_file_truncated_bpk(art, tmp_path):
    data = (art / "a1" / "a1.bpk").read_bytes()
    for n, cut in enumerate((0, 16, len(data) // 2, len(data) - 1)):
        bad = tmp_path / f"cut{n}.bpk"
        bad.write_bytes(data[:cut])
        _assert_one_line_error(
            _run([str(art / "shared" / "bin" / "burn-file"), str(bad), *_io(art, tmp_path)])
        )


def test_infer_st_damaged_safetensors(art, tmp_path):
    data = (art / "a1" / "a1.safetensors").read_bytes()
    bad = tmp_path / "a1.safetensors"
    bad.write_bytes(data[: len(data) // 2])
    infer_st = str(art / "shared" / "bin" / "burn-st")
    _assert_one_line_error(_run([infer_st, str(bad), *_io(art, tmp_path)]))
    _assert_one_line_error(_run([infer_st, str(tmp_path / "missing.safetensors"), *_io(art, tmp_path)]))


def test_bad_arguments(art, tmp_path):
    _assert_one_line_error(_run([str(art / "shared" / "bin" / "burn-file")]))
    _assert_one_line_error(_run([str(art / "a1" / "bin" / "burn-embed"), "extra", *_io(art, tmp_path)]))
    # no --inputs: an error now (the legacy A1 mode is gone)
    _assert_one_line_error(_run([str(art / "shared" / "bin" / "burn-file"), str(art / "a1" / "a1.bpk")]))
    _assert_one_line_error(_run([str(art / "a1" / "bin" / "burn-embed")]))


def test_cargo_lock_pins_burn_versions():
    """burn's inner crates depend on each other with caret requirements: the lock must hold 0.22.1."""
    import tomllib

    root = Path(__file__).resolve().parents[1]
    lock = tomllib.loads((root / "rust" / "Cargo.lock").read_text())
    versions = {p["name"]: p["version"] for p in lock["package"] if "source" in p}  # not ours
    burn = {n: v for n, v in versions.items() if n.startswith("burn")}
    assert versions["burn"] == "0.22.1" and versions["burn-capture"] == "0.22.1"
    assert versions["burn-onnx"] == "0.22.0" and versions["onnx-ir"] == "0.22.0"
    wrong = {n: v for n, v in burn.items() if n != "burn-onnx" and v != "0.22.1"}
    assert not wrong, wrong


def test_every_package_is_in_one_cargo_group_and_every_program_has_one():
    """Each cargo command selects one group (rust/Cargo.toml): every member in exactly one, and
    every program the build steps ask for found in its group, as make's helper lists them."""
    import subprocess
    import sys
    import tomllib

    from deploytui.families.common import cargo_build as rust_cmd

    rust = Path(__file__).resolve().parents[1] / "rust"
    members = tomllib.loads((rust / "Cargo.toml").read_text())["workspace"]["members"]
    grouped = [p for g in rust_cmd.groups(rust) for p in g]
    assert sorted(grouped) == sorted(members)
    for program in (
        "burn-convert",
        "burn-file",
        "burn-st",
        "burn-embed",
        "burn-onnx-default",
        "burn-onnx-bpk",
    ):
        assert rust_cmd.group_of(rust, program) == ["runner-io", "burn-mlp", "burn-onnx-gen"]
    assert rust_cmd.group_of(rust, "tract-run") == ["tract-run"]  # no burn in it
    with pytest.raises(rust_cmd.StepError):
        rust_cmd.group_of(rust, "infer-file")
    tool = Path(__file__).resolve().parents[1] / "tools" / "cargo_groups.py"
    early = subprocess.run([sys.executable, str(tool), "early"], capture_output=True, text=True, check=True)
    lines = early.stdout.splitlines()
    assert len(lines) == len(rust_cmd.groups(rust)) and "--bin burn-onnx-default" not in early.stdout
    assert lines[0] == "-p tract-run --bin tract-run" and "--bin burn-file" in lines[1]
