from deploytui.core.units import f32
from deploytui.models import a1


def test_input_is_the_reference_formula_in_f32():
    x = a1.input_values()
    assert [len(r) for r in x] == [4, 4, 4, 4]
    assert x[0][0] == f32(-0.5)
    assert x[3][3] == f32(0.1 * 15 - 0.5)
    assert x[1][1] == f32(0.1 * 5 - 0.5)  # computed in f64 first, then rounded once


def test_weights_have_pytorch_layout_and_closed_form():
    w = a1.weights()
    assert [len(w["fc1.weight"]), len(w["fc1.weight"][0])] == [8, 4]
    assert [len(w["fc2.weight"]), len(w["fc2.weight"][0])] == [3, 8]
    assert w["fc1.weight"][1][2] == f32(((4 * 1 + 2) % 7 - 3) * 0.1)
    assert w["fc2.bias"] == [f32(-0.1), 0.0, f32(0.1)]
    assert a1.param_count() == 67  # the page: "this model has only 67 parameters"
