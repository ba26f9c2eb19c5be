"""The stdlib safetensors reader/writer against the safetensors package, and its damaged-file errors."""

from __future__ import annotations

import struct

import pytest
import torch
from safetensors.torch import load_file, save_file

from deploytui.core import tensorfile as tf


def test_reads_what_the_package_writes_and_back(tmp_path):
    tensors = {
        "input_0": torch.randn(2, 3, 4),
        "input_1": torch.randint(-5, 9, (5,)),
        "input_10": torch.tensor(3.5),
        "flags": torch.tensor([True, False]),
        "wide": torch.randn(3, dtype=torch.float64),
    }
    save_file(tensors, tmp_path / "a.safetensors")
    got = tf.read(tmp_path / "a.safetensors")
    for name, t in tensors.items():
        assert list(got[name].shape) == list(t.shape)
        want = t.flatten().tolist()
        assert got[name].values == ([int(v) for v in want] if name == "flags" else want)
    assert [k for k, _ in tf.ordered(got, "input_")] == ["input_0", "input_1", "input_10"]
    tf.write(tmp_path / "b.safetensors", got)
    back = load_file(tmp_path / "b.safetensors")
    assert all(torch.equal(back[k], tensors[k]) for k in tensors)


def test_half_precision_is_decoded(tmp_path):
    t = torch.tensor([1.5, -2.25], dtype=torch.float16)
    save_file({"h": t, "b": t.to(torch.bfloat16)}, tmp_path / "h.safetensors")
    got = tf.read(tmp_path / "h.safetensors")
    assert got["h"].values == [1.5, -2.25] and got["b"].values == [1.5, -2.25]


def _header(tmp_path, header: bytes, data: bytes = b"", n: int | None = None):
    p = tmp_path / "x.safetensors"
    p.write_bytes(struct.pack("<Q", len(header) if n is None else n) + header + data)
    return p


@pytest.mark.parametrize(
    ("header", "data", "n", "why"),
    [
        (b"", b"", 0, "not JSON"),
        (b"{}", b"", 10**9, "does not fit"),
        (b"[1]", b"", None, "not a JSON object"),
        (
            b'{"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}',
            b"\0" * 4,
            None,
            "outside the file",
        ),
        (
            b'{"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}',
            b"\0" * 8,
            None,
            "8 bytes for shape",
        ),
        (
            b'{"a": {"dtype": "Q9", "shape": [2], "data_offsets": [0, 8]}}',
            b"\0" * 8,
            None,
            "malformed header",
        ),
        (
            b'{"a": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}}',
            b"\0" * 8,
            None,
            "malformed shape",
        ),
    ],
)
def test_damaged_files_say_where(tmp_path, header, data, n, why):
    with pytest.raises(tf.TensorFileError, match=why):
        tf.read(_header(tmp_path, header, data, n))


def test_short_and_missing_files(tmp_path):
    (tmp_path / "s").write_bytes(b"\1\2")
    with pytest.raises(tf.TensorFileError, match="too short"):
        tf.read(tmp_path / "s")
    with pytest.raises(tf.TensorFileError, match="No such file"):
        tf.read(tmp_path / "missing")
