"""File fingerprints shared by the build (outputs as they were written) and the readers of what it
stored (the Artifact tab, stored runtime facts): sha256, and "is this still the file recorded"."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def sha256_file(path: Path) -> str:
    import hashlib  # here: the app's start stats its files and hashes none (~1.5 ms of its imports)

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def file_record(path: Path) -> dict[str, Any]:
    """Size, mtime and sha256 of a file, as the manifest records them."""
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha256_file(path)}


def unchanged(path: Path, record: dict[str, Any] | None) -> bool:
    """Whether the file is still the one recorded: same size and mtime, or else the same sha256."""
    if not record:
        return False
    st = path.stat()
    if st.st_size != record.get("size"):
        return False
    return st.st_mtime_ns == record.get("mtime_ns") or sha256_file(path) == record.get("sha256")
