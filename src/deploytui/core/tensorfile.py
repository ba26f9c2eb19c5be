"""Safetensors files read and written with the standard library only.

The runner protocol's one tensor format: inputs and outputs of every runner, in every language,
are safetensors files (`input_0`, `attention_mask`, ... / `logits`, `output_0`, ...). The app never
imports numpy, so this side reads them with `array`: an 8-byte little-endian header length, a JSON header
`{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}`, then the data.
"""

from __future__ import annotations

import json
import math
import struct
import sys
from array import array
from dataclasses import dataclass
from pathlib import Path

# safetensors dtype -> (array typecode, bytes per element); F16 and BF16 are decoded to floats
_CODES: dict[str, tuple[str, int]] = {
    "F64": ("d", 8),
    "F32": ("f", 4),
    "I64": ("q", 8),
    "I32": ("i", 4),
    "I16": ("h", 2),
    "I8": ("b", 1),
    "U8": ("B", 1),
    "BOOL": ("B", 1),
    "F16": ("H", 2),
    "BF16": ("H", 2),
}
MAX_HEADER = 100 * 1024 * 1024  # as the safetensors package


class TensorFileError(ValueError):
    """The file is not a readable safetensors file; the message says where it breaks."""


@dataclass(frozen=True)
class Tensor:
    dtype: str
    shape: tuple[int, ...]
    values: list[float] | list[int]  # row-major, flat

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


def _decode(dtype: str, raw: bytes) -> list[float] | list[int]:
    code, _ = _CODES[dtype]
    a = array(code)
    a.frombytes(raw)
    if sys.byteorder == "big":
        a.byteswap()
    if dtype == "F16":
        return list(struct.unpack(f"<{len(a)}e", raw))
    if dtype == "BF16":
        return [struct.unpack("<f", struct.pack("<I", v << 16))[0] for v in a]
    return a.tolist()


def read(path: Path | str) -> dict[str, Tensor]:
    return read_all(path)[0]


def read_all(path: Path | str) -> tuple[dict[str, Tensor], dict[str, str]]:
    """The tensors and the header's `__metadata__` (string to string; {} when there is none)."""
    p = Path(path)
    try:
        blob = p.read_bytes()
    except OSError as e:
        raise TensorFileError(f"{p.name}: {e.strerror or e}") from None
    if len(blob) < 8:
        raise TensorFileError(f"{p.name}: {len(blob)} bytes is too short for a safetensors file")
    (n,) = struct.unpack("<Q", blob[:8])
    if n > MAX_HEADER or 8 + n > len(blob):
        raise TensorFileError(f"{p.name}: header length {n} does not fit in a {len(blob)}-byte file")
    try:
        header = json.loads(blob[8 : 8 + n])
    except (ValueError, UnicodeDecodeError) as e:
        raise TensorFileError(f"{p.name}: the header is not JSON ({e})") from None
    if not isinstance(header, dict):
        raise TensorFileError(f"{p.name}: the header is not a JSON object")
    data = blob[8 + n :]
    meta = header.get("__metadata__") or {}
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise TensorFileError(f"{p.name}: __metadata__ is not an object of strings")
    out: dict[str, Tensor] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype, shape, (begin, end) = info["dtype"], tuple(info["shape"]), info["data_offsets"]
            _, size = _CODES[dtype]
        except (KeyError, TypeError, ValueError):
            raise TensorFileError(f"{p.name}: tensor {name!r} has a malformed header entry") from None
        if not all(isinstance(d, int) and d >= 0 for d in shape):
            raise TensorFileError(f"{p.name}: tensor {name!r} has a malformed shape {list(shape)}")
        if not (isinstance(begin, int) and isinstance(end, int) and 0 <= begin <= end <= len(data)):
            raise TensorFileError(f"{p.name}: tensor {name!r} lies outside the file ({begin}..{end})")
        if end - begin != math.prod(shape) * size:
            raise TensorFileError(
                f"{p.name}: tensor {name!r} has {end - begin} bytes for shape {list(shape)}"
            )
        out[name] = Tensor(dtype, shape, _decode(dtype, data[begin:end]))
    return out, meta


def write(path: Path | str, tensors: dict[str, Tensor], metadata: dict[str, str] | None = None) -> None:
    """Tensors in name order, the header padded with spaces to 8 bytes (as the Python package)."""
    header: dict[str, object] = {}
    chunks: list[bytes] = []
    offset = 0
    for name in sorted(tensors):
        t = tensors[name]
        code, _ = _CODES[t.dtype]
        if t.dtype in ("F16", "BF16"):
            raise TensorFileError(f"writing {t.dtype} is not supported")
        a = array(code, t.values)
        if sys.byteorder == "big":
            a.byteswap()
        raw = a.tobytes()
        header[name] = {"dtype": t.dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    Path(path).write_bytes(struct.pack("<Q", len(text)) + text + b"".join(chunks))


def ordered(tensors: dict[str, Tensor], prefix: str) -> list[tuple[str, Tensor]]:
    """`input_0`, `input_1`, ... (or `output_`) in numeric order; other names are left out."""
    named = [
        (int(k[len(prefix) :]), k) for k in tensors if k.startswith(prefix) and k[len(prefix) :].isdigit()
    ]
    return [(k, tensors[k]) for _, k in sorted(named)]
