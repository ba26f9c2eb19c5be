"""What the C++ loader tests share: the A1 cases and the check that the loaders were built."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

# form key -> (program, A1 model file), as in deploytui.spec.forms
A1_CASES = {
    "cpp-torchscript": ("cpp-torchscript", "a1_script.pt"),
    "cpp-aoti": ("cpp-aoti", "a1_aoti.pt2"),
    "cpp-aoti-lean": ("cpp-aoti", "a1_aoti_lean.pt2"),
}


def built_loaders(art: Path) -> Path:
    """`art` once both C++ programs are in its shared bin/; skips where no g++ could build them."""
    missing = [e for e in ("cpp-torchscript", "cpp-aoti") if not (art / "shared" / "bin" / e).is_file()]
    if missing and shutil.which("g++") is None:
        pytest.skip("no g++ on this machine: the C++ forms are unavailable")
    assert not missing, f"C++ programs not built: {missing}"
    return art


def private_tmp_env(tmp_path: Path) -> dict[str, str]:
    """The environment with a private TMPDIR: the AOTI loader unpacks the package there."""
    tmp = tmp_path / "tmpdir"
    tmp.mkdir()
    return {**os.environ, "TMPDIR": str(tmp)}


def run_program(argv: list[object], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, timeout=120, env=env, check=False
    )
