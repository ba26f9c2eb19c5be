"""`deploytui ship`: real bundles of every form, checked in the real sandbox (bubblewrap).

Each bundle is made once per session into a temporary folder and checked there; nothing is
written into the project (save=False keeps artifacts/ship.json as it is).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deploytui import forms, shipping
from deploytui.ship import sandbox, store
from deploytui.ship.bundler import patchelf, verify

PASS_ISOLATED = (
    "burn-file",
    "burn-embed",
    "burn-st",
    "burn-onnx-embed",
    "burn-onnx-bpk",
    "cpp-aoti-lean",
    "cpp-torchscript",
    "cpp-aoti",
)
COMPILED = tuple(f.key for f in forms.FORMS if f.compiled)


@pytest.fixture(scope="session")
def bundles_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Where this session's bundles go; removed at the end (cpp-aoti's alone is 2.5 GiB)."""
    root = tmp_path_factory.mktemp("bundles")
    yield root
    shutil.rmtree(root, ignore_errors=True)


class _Checked(dict):
    """Each compiled form bundled and checked once per session, when a test first asks for it
    (1 warm-up + 2 runs in the sandbox)."""

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    def __missing__(self, key: str) -> dict[str, Any]:
        self[key] = shipping.check(forms.get(key), self.root / key, n=2, warmup=1, save=False)
        if self[key].get("unpacked_bytes", 0) > 1 << 30:  # cpp-aoti: 2.5 GiB; its fact is enough
            shutil.rmtree(self.root / key, ignore_errors=True)
        return self[key]


@pytest.fixture(scope="session")
def checked(built_artifacts: Path, bundles_dir: Path) -> _Checked:
    return _Checked(bundles_dir)


def test_every_compiled_form_is_expected():
    assert set(COMPILED) == {*PASS_ISOLATED, "burn-onnx-file"}


@pytest.mark.parametrize("key", PASS_ISOLATED)
def test_compiled_bundle_runs_isolated(checked, key):
    fact = checked[key]
    assert fact["verdict"] == store.PASS, fact.get("reason")
    assert fact["max_abs_diff"] is not None and fact["max_abs_diff"] <= forms.get(key).tolerance
    assert fact["startup_median_s"] > 0 and fact["peak_rss_median_bytes"] > 0
    assert 0 < fact["compressed_bytes"] < fact["unpacked_bytes"] or fact["unpacked_bytes"] < 10_000_000


def test_cpp_aoti_brings_the_cuda_stack(checked):
    fact = checked["cpp-aoti"]
    assert {"libtorch_cuda.so", "libcublasLt.so.13"} <= set(fact["libraries"])
    assert fact["cuda_bytes"] > fact["unpacked_bytes"] / 2  # most of the bundle is CUDA's
    lean = checked["cpp-aoti-lean"]
    assert "libtorch_cuda.so" not in lean["libraries"] and lean["cuda_bytes"] < 20 << 20


def test_burn_onnx_file_fails_isolated_with_the_relocation_panic(checked):
    fact = checked["burn-onnx-file"]
    assert fact["verdict"] == store.FAIL
    assert "Failed to load burnpack file" in fact["reason"], fact["reason"]


def test_bundle_manifest_lists_every_file(checked, bundles_dir):
    root = bundles_dir / "cpp-aoti-lean"
    manifest = json.loads((root / "manifest.json").read_text())
    on_disk = sorted(
        str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and p.name != "manifest.json"
    )
    assert sorted(manifest["files"]) == on_disk
    assert manifest["unpacked_bytes"] == sum(r["bytes"] for r in manifest["files"].values())
    lib = manifest["files"]["lib/libc10.so"]
    from deploytui.hashing import sha256_file

    assert lib["sha256"] == sha256_file(root / "lib/libc10.so")
    assert "libc.so.6" in manifest["target_provides"]["system_libraries"]
    assert {"libtorch_cpu.so", "libc10.so"} <= set(manifest["libraries"])
    assert verify(root) == ""


def test_runpath_is_origin_relative_and_run_is_one_line(checked, bundles_dir):
    root = bundles_dir / "cpp-aoti-lean"

    def rpath(p: Path) -> str:
        return subprocess.run(
            [patchelf(), "--print-rpath", str(p)], capture_output=True, text=True, check=True
        ).stdout.strip()

    assert rpath(root / "bin/cpp-aoti") == "$ORIGIN/../lib"
    assert all(rpath(p) == "$ORIGIN" for p in (root / "lib").iterdir())
    execs = [ln for ln in (root / "run").read_text().splitlines() if "exec " in ln]
    assert execs == [
        'LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" '
        'exec "$B/bin/cpp-aoti" "$B/model/a1_aoti_lean.pt2" "$@"'
    ]
    burn = [ln for ln in (bundles_dir / "burn-embed" / "run").read_text().splitlines() if "exec " in ln]
    assert burn == ['exec "$B/bin/infer-embed" "$@"']
    # burn binaries need nothing: no lib/, the program as it was built
    assert not (bundles_dir / "burn-embed" / "lib").exists()


def test_a_bundle_missing_a_library_fails_with_the_loaders_line(checked, bundles_dir, tmp_path):
    src = bundles_dir / "cpp-aoti-lean"
    broken = tmp_path / "cpp-aoti-lean"
    shutil.copytree(src, broken, copy_function=os.link)  # hard links: no copy of 400 MB
    (broken / "lib/libc10.so").unlink()
    try:
        fact = shipping.check(forms.get("cpp-aoti-lean"), broken, n=1, warmup=0, rebuild=False, save=False)
    finally:
        shutil.rmtree(broken)
    assert fact["verdict"] == store.FAIL
    assert "libc10.so: cannot open shared object file" in fact["reason"], fact["reason"]
    assert "lib/libc10.so is missing" in fact["reason"]


def test_the_sandbox_sees_only_the_bundle_and_usr(checked, bundles_dir):
    root = bundles_dir / "burn-embed"
    before = {p: p.stat().st_mtime_ns for p in root.rglob("*")}
    probe = (
        'test ! -e /work && test ! -e /root && test ! -e /etc/passwd && test -z "$VIRTUAL_ENV" '
        "&& echo net=$(grep -c : /proc/net/dev) && grep lo: /proc/net/dev >/dev/null; "
        "touch /bundle/x 2>/dev/null; echo w=$?"
    )
    res = subprocess.run(
        sandbox.sandbox_argv(root, ["/bin/sh", "-c", probe]), capture_output=True, text=True, check=False
    )
    assert res.returncode == 0, res.stderr
    assert "net=1" in res.stdout and "w=1" in res.stdout  # no interface but lo; the bundle read-only
    assert {p: p.stat().st_mtime_ns for p in root.rglob("*")} == before


def test_python_bundles_do_not_import_deploytui(built_artifacts, bundles_dir):
    for key in ("torch-eager", "onnxruntime", "torchscript-script", "torch-export", "aoti-python"):
        spec = shipping.spec(forms.get(key))
        texts = [t for _, t in spec.texts] + [
            src.read_text() for src, rel in spec.files if rel.endswith(".py")
        ]
        assert texts and not any(
            "deploytui" in line for t in texts for line in t.splitlines() if "import" in line
        )
        assert any(r.startswith(("torch==", "onnxruntime==")) for r in spec.requirements)
    eager = shipping.spec(forms.get("torch-eager"))
    assert {"model.py", "a1.py", "units.py"} <= {rel for rel, _ in eager.texts}


@pytest.mark.slow
@pytest.mark.parametrize("key", ["onnxruntime", "torch-eager"])
def test_python_bundle_runs_isolated(built_artifacts, bundles_dir, key):
    """The venv is made inside the sandbox from the wheelhouse (pip --no-index), then run there."""
    root = bundles_dir / key
    try:
        fact = shipping.check(forms.get(key), root, n=2, warmup=1, save=False)
        assert fact["verdict"] == store.PASS, fact.get("reason")
        assert fact["max_abs_diff"] <= forms.get(key).tolerance
        reqs = (root / "requirements.txt").read_text().split()
        assert all("==" in r for r in reqs)
    finally:
        shutil.rmtree(root / "venv", ignore_errors=True)  # GBs for torch


def test_the_report_lists_each_bundle_and_its_verdict(tmp_path, monkeypatch):
    from deploytui import manifest, report, results
    from tui_support import make_artifacts, record

    art = make_artifacts(
        tmp_path,
        results={k: record(k, [3.0], 3.0) for k in ("burn-embed", "burn-onnx-file", "burn-st")},
    )
    monkeypatch.setenv("DEPLOYTUI_ARTIFACTS", str(art))
    ok = {"verdict": store.PASS, "compressed_bytes": 2_300_000, "unpacked_bytes": 6_000_000}
    ok.update(startup_median_s=0.004, peak_rss_median_bytes=4_400_000)
    store.put(art / store.NAME, "burn-embed", ok)
    bad = {"verdict": store.FAIL, "compressed_bytes": 2_000_000, "unpacked_bytes": 5_000_000}
    store.put(art / store.NAME, "burn-onnx-file", {**bad, "reason": "exit 101: Failed to load burnpack file"})
    text = report.markdown(results.load(), manifest.load())
    ships = text.split("## What ships", 1)[1].split("##", 1)[0]
    assert "| bundle (.tar.gz) | runs isolated |" in ships
    lines = {ln.split(" | ")[0].strip("| "): ln for ln in ships.splitlines() if ln.startswith("| burn")}
    assert "2.2 MiB" in lines["burn-embed"] and "✓ (4.00 ms, 4.2 MiB)" in lines["burn-embed"]
    assert "✗ exit 101: Failed to load burnpack file" in lines["burn-onnx-file"]
    assert lines["burn-st"].count("–") >= 2  # not checked: no bundle, no verdict
    row = {r["form"]: r for r in report.rows(results.load(), manifest.load())}
    assert row["burn-embed"]["isolated"] == store.PASS and row["burn-embed"]["bundle_compressed_bytes"]
