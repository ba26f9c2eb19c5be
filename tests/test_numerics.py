import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deploytui.numerics import ShapeError, compare

REF = [[-0.132, -0.07, 0.127], [-0.106, 0.002, 0.105]]


def test_identical_logits_diff_zero():
    d = compare(REF, REF)
    assert d.max_abs == 0 and d.within_tol and d.n == 6


def test_worst_element_and_relative_error():
    got = [row[:] for row in REF]
    got[1][2] += 1e-3
    d = compare(got, REF, tol=1e-6)
    assert d.worst_index == [1, 2]
    assert d.max_abs == pytest.approx(1e-3, rel=1e-3)
    assert d.max_rel == pytest.approx(1e-3 / 0.105, rel=1e-3)
    assert not d.within_tol
    assert "FAIL" in d.line()


def test_compared_as_f32():
    # 1e-12 is below f32 resolution at this magnitude: the printed f32 equals the reference
    got = [[v + 1e-12 for v in row] for row in REF]
    assert compare(got, REF).max_abs == 0


@pytest.mark.parametrize(
    "bad",
    [
        [[1.0, 2.0]],
        [],
        "x",
        [[1.0, "a", 2.0], [1, 2, 3]],
        [[math.nan, 0, 0], [0, 0, 0]],
        [[1.0, 2.0, 3.0], [1.0, 2.0]],
    ],
)
def test_malformed_logits_raise_shape_error(bad):
    with pytest.raises(ShapeError):
        compare(bad, REF)


@given(st.lists(st.lists(st.floats(-1e3, 1e3), min_size=3, max_size=3), min_size=2, max_size=2))
def test_diff_is_symmetric_and_bounded(got):
    d = compare(got, REF, tol=1e9)
    back = compare(REF, got, tol=1e9)
    assert d.max_abs == back.max_abs
    assert d.mean_abs <= d.max_abs


def test_compare_output_any_rank_worst_index_and_min_atol():
    from deploytui.numerics import compare_output

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
    from deploytui.numerics import ShapeError, compare_output

    d = compare_output("o", [math.nan, 1.0], [2], [1.0, 1.0], [2])
    assert not d.within_tol and d.max_abs == math.inf
    assert compare_output("o", [math.inf], [], [math.inf], []).within_tol
    with pytest.raises(ShapeError, match=r"has shape \[3\], expected \[2\]"):
        compare_output("o", [1.0, 2.0, 3.0], [3], [1.0, 2.0], [2])
