"""The wheelhouse (ship/wheelhouse.py): the files for a set of pins picked as pip names them, a
folder of only those (what the local check's sandbox and a target get), and what they take once
installed — told before a target's disk is filled."""

from __future__ import annotations

import tarfile
import zipfile
from pathlib import Path

import pytest

from deploytui.ship import wheelhouse


def _wheel(house: Path, name: str, members: dict[str, int]) -> Path:
    path = house / name
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for member, size in members.items():
            z.writestr(member, bytes(size))  # zeros: compressed to almost nothing
    return path


def _sdist(house: Path, name: str, size: int) -> Path:
    src = house / "src.py"
    src.write_bytes(b"#" * size)
    path = house / name
    with tarfile.open(path, "w:gz") as t:
        t.add(src, arcname=f"{name[: -len('.tar.gz')]}/setup.py")
    src.unlink()
    return path


@pytest.fixture
def house(tmp_path: Path) -> Path:
    h = tmp_path / "wheelhouse"
    h.mkdir()
    _wheel(h, "ruamel_yaml-0.19.1-py3-none-any.whl", {"ruamel/yaml/__init__.py": 1000})
    _wheel(
        h, "numpy-2.4.6-cp311-cp311-manylinux_2_28_x86_64.whl", {"numpy/core.so": 50_000, "numpy/a.py": 10}
    )
    _wheel(h, "numpy-2.3.0-cp311-cp311-manylinux_2_28_x86_64.whl", {"numpy/core.so": 40_000})
    _sdist(h, "antlr4-python3-runtime-4.9.3.tar.gz", 2000)
    (h / ".filled-0123").write_text("")
    return h


def test_the_pins_files_are_picked_as_pip_names_them(house: Path):
    got = wheelhouse.pinned(["ruamel.yaml==0.19.1", "numpy==2.4.6", "antlr4-python3-runtime==4.9.3"], house)
    assert sorted(f.name for f in got.files) == [
        "antlr4-python3-runtime-4.9.3.tar.gz",
        "numpy-2.4.6-cp311-cp311-manylinux_2_28_x86_64.whl",
        "ruamel_yaml-0.19.1-py3-none-any.whl",
    ]
    assert got.missing == []
    assert wheelhouse.pinned(["numpy==9.9", "torch==2.15.0"], house).missing == [
        "numpy==9.9",
        "torch==2.15.0",
    ]


def test_a_pinned_set_holds_only_the_pins(house: Path):
    pins = ["numpy==2.4.6", "ruamel.yaml==0.19.1"]
    folder = wheelhouse.pinned_set(pins, house)
    assert sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")) == [
        "numpy-2.4.6-cp311-cp311-manylinux_2_28_x86_64.whl",
        "ruamel_yaml-0.19.1-py3-none-any.whl",
    ]
    linked = folder / "numpy-2.4.6-cp311-cp311-manylinux_2_28_x86_64.whl"
    assert linked.stat().st_ino == (house / linked.name).stat().st_ino  # a link, not a copy
    assert wheelhouse.pinned_set(list(reversed(pins)), house) == folder  # once per set of pins
    with pytest.raises(ValueError, match=r"no file for torch==2\.15\.0"):
        wheelhouse.pinned_set([*pins, "torch==2.15.0"], house)


def test_installed_bytes_are_the_members_unpacked(house: Path):
    got = wheelhouse.pinned(["numpy==2.4.6", "antlr4-python3-runtime==4.9.3"], house)
    assert wheelhouse.installed_bytes(got.files) == 50_010 + 2000
    assert sum(f.stat().st_size for f in got.files) < 50_010  # the wheel is compressed
