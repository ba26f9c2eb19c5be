"""ZIP archives (.pt TorchScript, .pt2 export/AOTI packages), read as archives only: never unpickled."""

from __future__ import annotations

import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from deploytui.inspectors import InspectError

MAX_TEXT = 200_000
# what reading a damaged archive can raise (zlib.error: a corrupt deflate stream)
ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    OSError,
    ValueError,
    EOFError,
    RuntimeError,
    NotImplementedError,
    zlib.error,
    UnicodeDecodeError,
)


@dataclass(frozen=True)
class Member:
    name: str
    size: int
    compressed: int


def members(path: Path) -> list[Member]:
    with _open(path) as z:
        return [Member(i.filename, i.file_size, i.compress_size) for i in z.infolist() if not i.is_dir()]


def read_text(path: Path, name: str, limit: int = MAX_TEXT) -> str:
    """One member as text (truncated to `limit` characters)."""
    with _open(path) as z:
        try:
            with z.open(name) as f:
                data = f.read(limit + 1)
        except KeyError:
            raise InspectError(f"{path.name} has no member {name}") from None
        except ZIP_ERRORS as e:
            raise InspectError(f"{path.name}: member {name} is damaged: {e}") from None
    text = data[:limit].decode("utf-8", errors="replace")
    return text + ("\n… (truncated)" if len(data) > limit else "")


def extract(path: Path, name: str, dest: Path) -> Path:
    """Copy one member to `dest` (a file path); verifies its CRC."""
    with _open(path) as z:
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            with z.open(name) as src, open(dest, "wb") as out:
                while chunk := src.read(1 << 20):
                    out.write(chunk)
        except KeyError:
            raise InspectError(f"{path.name} has no member {name}") from None
        except ZIP_ERRORS as e:
            raise InspectError(f"{path.name}: member {name} is damaged: {e}") from None
    return dest


def _open(path: Path) -> zipfile.ZipFile:
    if not path.exists():
        raise InspectError(f"{path.name} is missing ({path})")
    try:
        return zipfile.ZipFile(path)
    except ZIP_ERRORS as e:
        raise InspectError(f"{path.name} is not a readable ZIP archive: {e}") from None
