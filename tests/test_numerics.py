import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deploytui.core import tensorfile
from deploytui.core.modelref import parse, tolerance
from deploytui.judge.numerics import ShapeError, compare_files, compare_output


def _file(path, *tensors):
    tensorfile.write(
        path,
        {
            f"output_{i}": tensorfile.Tensor("F32", tuple(shape), vals)
            for i, (shape, vals) in enumerate(tensors)
        },
    )
    return path


def test_compare_files_every_output_of_any_rank(tmp_path):
    want = _file(tmp_path / "want.safetensors", ([2, 3], [0.5] * 6), ([4], [1.0, 2.0, 3.0, 4.0]))
    got = _file(tmp_path / "got.safetensors", ([2, 3], [0.5] * 6), ([4], [1.0, 2.0, 3.0, 4.5]))
    d0, d1 = compare_files(got, want, 1e-5, 1e-5)
    assert (d0.name, d0.within_tol, d0.max_abs) == ("output_0", True, 0.0)
    assert (d1.name, d1.within_tol, d1.failing, d1.worst[0].index) == ("output_1", False, 1, [3])


def test_an_output_under_the_models_atol_is_judged_at_its_own_scale(tmp_path):
    """torchvision's mobilenet_v3_small with random weights peaks at 5e-10: at atol 1e-5 an
    answer of zeros was within tolerance. Its atol is 1e-3 of its largest |value| instead; an
    output of 1e-2 and more, and one of zeros, keep the model's."""
    tiny = [5e-10, -2e-10, 1e-10, 0.0]
    want = _file(tmp_path / "want.safetensors", ([4], tiny), ([2], [0.02, -1.0]), ([2], [0.0, 0.0]))
    zeros = _file(tmp_path / "zeros.safetensors", ([4], [0.0] * 4), ([2], [0.02, -1.0]), ([2], [0.0, 0.0]))
    d_tiny, d_big, d_zero = compare_files(zeros, want, 1e-5, 1e-5)
    assert not d_tiny.within_tol and d_tiny.failing == 3 and d_tiny.atol == pytest.approx(5e-13)
    assert (d_big.atol, d_zero.atol) == (1e-5, 1e-5) and d_big.within_tol and d_zero.within_tol
    close = [v * (1 + 1e-6) for v in tiny]  # a runtime's rounding: within 1e-6 of each value
    near = _file(tmp_path / "near.safetensors", ([4], close), ([2], [0.02 + 9e-6, -1.0]), ([2], [9e-6, 0.0]))
    assert all(d.within_tol for d in compare_files(near, want, 1e-5, 1e-5))


def test_a_half_precision_output_is_judged_at_its_dtypes_tolerance(tmp_path):
    """bfloat16's rounding step is 2^-8 of the value: a runtime one step from eager is within
    bfloat16's rtol (torch.testing's 1.6e-2), not a float32 one; float16's is 1e-3."""
    import torch
    from safetensors.torch import save_file

    from deploytui.judge.numerics import HALF_RTOL

    def file(name, dtype, vals):
        save_file({"output_0": vals.to(dtype)}, tmp_path / name)
        return tmp_path / name

    want = torch.tensor([0.3125, -1.5, 2.0])
    for dtype, name in ((torch.bfloat16, "BF16"), (torch.float16, "F16")):
        step = torch.nextafter(want.to(dtype), torch.tensor(9.0, dtype=dtype)).float()  # one rounding step
        (d,) = compare_files(file("got", torch.float32, step), file("want", dtype, want), 1e-5, 1e-5)
        assert d.rtol == HALF_RTOL[name] and d.max_abs > 0 and d.within_tol, (dtype, d)
    bf16_step = torch.nextafter(want.to(torch.bfloat16), torch.tensor(9.0, dtype=torch.bfloat16)).float()
    (d,) = compare_files(file("got", torch.float32, bf16_step), file("want", torch.float32, want), 1e-5, 1e-5)
    assert d.rtol == 1e-5 and not d.within_tol  # a float32 output keeps the model's rtol


def test_compare_files_says_what_does_not_fit(tmp_path):
    want = _file(tmp_path / "want.safetensors", ([2], [1.0, 2.0]), ([1], [1.0]))
    with pytest.raises(ShapeError, match="wrote 1 output"):
        compare_files(_file(tmp_path / "one.safetensors", ([2], [1.0, 2.0])), want, 1e-5, 1e-5)
    with pytest.raises(ShapeError, match=r"has shape \[3\], expected \[2\]"):
        compare_files(_file(tmp_path / "bad.safetensors", ([3], [1.0] * 3), ([1], [1.0])), want, 1e-5, 1e-5)
    (tmp_path / "junk.safetensors").write_bytes(b"junk")
    with pytest.raises(tensorfile.TensorFileError):
        compare_files(tmp_path / "junk.safetensors", want, 1e-5, 1e-5)


def test_outputs_are_matched_by_the_references_names_or_by_position(tmp_path):
    """A reference names its outputs (its metadata lists them in the model's order); a form's
    file matches by name (Python, ONNX, TorchScript dicts) or, all output_N, by position."""
    import json

    t = tensorfile.Tensor
    want = tmp_path / "want.safetensors"
    tensorfile.write(
        want,
        {"logits": t("F32", (2,), [1.0, 2.0]), "aux.0": t("F32", (1,), [3.0])},
        metadata={"outputs": json.dumps(["logits", "aux.0"])},
    )
    by_name = tmp_path / "named.safetensors"
    tensorfile.write(by_name, {"aux.0": t("F32", (1,), [3.0]), "logits": t("F32", (2,), [1.0, 2.0])})
    by_pos = tmp_path / "flat.safetensors"
    tensorfile.write(by_pos, {"output_0": t("F32", (2,), [1.0, 2.0]), "output_1": t("F32", (1,), [3.0])})
    for got in (by_name, by_pos):
        diffs = compare_files(got, want, 1e-5, 1e-5)
        assert [(d.name, d.max_abs) for d in diffs] == [("logits", 0.0), ("aux.0", 0.0)]
    wrong = tmp_path / "wrong.safetensors"
    tensorfile.write(wrong, {"logits": t("F32", (2,), [1.0, 2.0]), "other": t("F32", (1,), [3.0])})
    with pytest.raises(ShapeError, match="eager's are"):
        compare_files(wrong, want, 1e-5, 1e-5)
    swapped = tmp_path / "swapped.safetensors"
    tensorfile.write(swapped, {"output_0": t("F32", (1,), [3.0]), "output_1": t("F32", (2,), [1.0, 2.0])})
    with pytest.raises(ShapeError, match="has shape"):  # by position, the order is checked by shape
        compare_files(swapped, want, 1e-5, 1e-5)


@given(
    st.lists(st.floats(-1e3, 1e3), min_size=6, max_size=6),
    st.lists(st.floats(-1e3, 1e3), min_size=6, max_size=6),
)
def test_diff_is_symmetric_and_bounded(got, want):
    d = compare_output("o", got, [2, 3], want, [2, 3], atol=1e9, rtol=0)
    back = compare_output("o", want, [2, 3], got, [2, 3], atol=1e9, rtol=0)
    assert d.max_abs == back.max_abs
    assert d.mean_abs <= d.max_abs and d.within_tol


def test_a1_keeps_the_pages_absolute_tolerance_others_polygraphys():
    assert tolerance(parse("a1")) == (1e-6, 0.0)
    assert tolerance(parse("convnet")) == (1e-5, 1e-5)


def test_compare_output_any_rank_worst_index_and_min_atol():
    from deploytui.judge.numerics import compare_output

    want = [float(v) for v in range(24)]
    got = list(want)
    got[17] += 0.5  # index (1, 1, 1) in [2, 3, 4]
    got[3] += 1e-7
    d = compare_output("output_0", got, [2, 3, 4], want, [2, 3, 4], atol=1e-5, rtol=1e-5)
    assert not d.within_tol and d.failing == 1 and d.n == 24
    assert d.worst[0].index == [1, 1, 1] and d.worst[0].abs_diff == 0.5
    assert d.min_atol == pytest.approx(0.5 - 1e-5 * 17)
    ok = compare_output("output_0", got, [2, 3, 4], want, [2, 3, 4], atol=d.min_atol + 1e-9, rtol=1e-5)
    assert ok.within_tol


def test_compare_output_nan_and_shape():
    from deploytui.judge.numerics import ShapeError, compare_output

    d = compare_output("o", [math.nan, 1.0], [2], [1.0, 1.0], [2])
    assert not d.within_tol and d.max_abs == math.inf
    assert compare_output("o", [math.inf], [], [math.inf], []).within_tol
    # eager's NaN: a form's NaN there agrees, anything else there does not (it used to pass, with
    # max|diff| inf: a NaN want made every element's check NaN, and NaN > atol is false)
    same = compare_output("o", [math.nan, 1.0], [2], [math.nan, 1.0], [2])
    assert same.within_tol and same.max_abs == 0 and same.max_rel == 0
    for got in ([5.0, 1.0], [math.inf, 1.0]):
        d = compare_output("o", got, [2], [math.nan, 1.0], [2])
        assert not d.within_tol and d.failing == 1 and d.max_abs == math.inf and d.max_rel == math.inf, got
    assert not compare_output("o", [1.0], [], [-math.inf], []).within_tol
    with pytest.raises(ShapeError, match=r"has shape \[3\], expected \[2\]"):
        compare_output("o", [1.0, 2.0, 3.0], [3], [1.0, 2.0], [2])


def test_the_tolerance_a_record_names_is_its_failing_or_furthest_outputs():
    """The report's and Choose's `atol …, rtol …`: each output has its own, so the one named is
    the first output outside it, else the one furthest from eager (it was always the first)."""
    from deploytui.core.record_parts import tolerance_text

    exact = compare_output("logits", [1.0, 2.0], [2], [1.0, 2.0], [2], 1e-5, 1e-5)
    half = compare_output("head", [0.5, 1.004], [2], [0.5, 1.0], [2], 1e-5, 1.6e-2)
    off = compare_output("y", [1.001], [1], [1.0], [1], 1e-5, 1e-5)
    assert tolerance_text([exact, half]) == "atol 1e-05, rtol 0.016"
    assert tolerance_text([exact, half, off]) == "atol 1e-05, rtol 1e-05" and not off.within_tol
    assert tolerance_text([]) == "" and tolerance_text(None) == ""
