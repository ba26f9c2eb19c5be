"""A wheelhouse: the wheels (and the odd sdist) Python bundles' venvs are made from, offline.

`fill` downloads a set of exact pins once; `pinned` picks the files for the pins; `pinned_set`
links them into a folder of their own — all the local check's sandbox sees at /wheels, as a target
is sent only them (scenarios/remote), so a pin the closure missed fails here first;
`installed_bytes` is what the files take once installed (a venv's size, before it is made).
"""

from __future__ import annotations

import hashlib
import os
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from deploytui.core import defaults, procs


def _key(requirements: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(requirements)).encode()).hexdigest()[:16]


def fill(requirements: list[str], house: Path, pip_env: dict[str, str] | None = None) -> str:
    """Download the exact pins (and anything they need) into `house`, once per set of pins;
    "" or why not."""
    stamp = house / f".filled-{_key(requirements)}"
    if stamp.exists():
        return ""
    house.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PIP_CONFIG_FILE": "/dev/null", **(pip_env or {})}
    # wheels where there are; a pin that has only an sdist (executorch's antlr4-python3-runtime)
    # comes as one, and setuptools + wheel with it, so the offline install can build it
    argv = [sys.executable, "-m", "pip", "download", "--prefer-binary", "-q", "-d", str(house)]
    build = ["setuptools", "wheel"]
    child = procs.run([*argv, *requirements, *build], env=env, timeout_s=defaults.BUILD_TIMEOUT_S)
    if not child.ok:
        last = [ln for ln in child.stderr if ln.strip()] or [child.why]
        return f"pip download failed: {last[-1][:300]}"
    stamp.write_text("\n".join(requirements) + "\n")
    return ""


@dataclass(frozen=True)
class Pinned:
    """The wheelhouse's files for a set of pins, and the pins it has no file for."""

    files: list[Path]
    missing: list[str]


def pinned(requirements: list[str], house: Path) -> Pinned:
    """The files (wheels, sdists) for the exact pins (name==version), names and versions read
    by `packaging` as pip reads them (ruamel.yaml is ruamel_yaml-…whl, antlr4-python3-runtime an
    sdist of that name)."""
    by_pin: dict[tuple[str, Version], list[Path]] = {}
    for f in sorted(house.iterdir()) if house.is_dir() else []:
        try:
            if f.name.endswith(".whl"):
                name, version = parse_wheel_filename(f.name)[:2]
            elif f.name.endswith(".tar.gz"):
                name, version = parse_sdist_filename(f.name)
            else:
                continue
        except (InvalidWheelFilename, InvalidSdistFilename):
            continue
        by_pin.setdefault((name, version), []).append(f)
    files, missing = [], []
    for pin in requirements:
        pin_name, _, pin_version = pin.partition("==")
        try:
            got = by_pin.get((canonicalize_name(pin_name), Version(pin_version)), [])
        except InvalidVersion:
            got = []
        files += got
        if not got:
            missing.append(pin)
    return Pinned(files, missing)


def pinned_set(requirements: list[str], house: Path) -> Path:
    """A folder holding only the pins' files (hard links into `house`, once per set of pins).
    ValueError naming the pins the wheelhouse has no file for."""
    got = pinned(requirements, house)
    if got.missing:
        raise ValueError(f"the wheelhouse {house} has no file for {', '.join(got.missing[:5])}")
    folder = house / ".sets" / _key(requirements)
    if not (folder / ".complete").exists():
        folder.mkdir(parents=True, exist_ok=True)
        for f in got.files:
            link = folder / f.name
            if not link.exists():
                os.link(f, link)
        (folder / ".complete").write_text("\n".join(requirements) + "\n")
    return folder


def installed_bytes(files: list[Path]) -> int:
    """The bytes the files unpack to: a wheel's members as recorded in the zip, an sdist's as in
    the tar (what pip installs, near enough; a venv adds pip itself)."""
    total = 0
    for f in files:
        if f.name.endswith(".whl"):
            with zipfile.ZipFile(f) as z:
                total += sum(i.file_size for i in z.infolist())
        elif f.name.endswith(".tar.gz"):
            with tarfile.open(f) as t:
                total += sum(m.size for m in t.getmembers() if m.isfile())
    return total
