"""The header of a .safetensors file: 8-byte little-endian length, then JSON (names, dtypes, shapes)."""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path

from deploytui.inspectors import InspectError

MAX_HEADER = 100 * 1024 * 1024


@dataclass(frozen=True)
class Tensor:
    name: str
    dtype: str
    shape: tuple[int, ...]
    nbytes: int


def read(path: Path) -> tuple[list[Tensor], dict[str, str]]:
    """(tensors, metadata); InspectError when the file is missing, truncated or malformed."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                raise InspectError(f"{path.name} is truncated: {size} bytes, no header length")
            (n,) = struct.unpack("<Q", head)
            if n > MAX_HEADER or 8 + n > size:
                raise InspectError(f"{path.name}: header length {n} does not fit in a {size}-byte file")
            raw = f.read(n)
    except FileNotFoundError:
        raise InspectError(f"{path.name} is missing ({path})") from None
    except OSError as e:
        raise InspectError(f"{path.name} cannot be read: {e}") from None
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise InspectError(f"{path.name}: header is not valid JSON: {e}") from None
    if not isinstance(header, dict):
        raise InspectError(f"{path.name}: header is not a JSON object")
    metadata = header.pop("__metadata__", {}) or {}
    data_len = size - 8 - n
    tensors = []
    for name, spec in header.items():
        try:
            dtype, shape, (start, end) = (
                spec["dtype"],
                tuple(int(d) for d in spec["shape"]),
                spec["data_offsets"],
            )
            if not (0 <= int(start) <= int(end) <= data_len):
                raise ValueError(f"data offsets {start}..{end} outside the {data_len}-byte data section")
        except (KeyError, TypeError, ValueError) as e:
            raise InspectError(f"{path.name}: entry {name!r} is malformed: {e}") from None
        tensors.append(Tensor(str(name), str(dtype), shape, int(end) - int(start)))
    return tensors, metadata if isinstance(metadata, dict) else {}
