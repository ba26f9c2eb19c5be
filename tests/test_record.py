"""The run record: JSON round trip, every field checked by name, the README's tables, its imports."""

import ast
import dataclasses
import json
import math
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deploytui import bench, jsonio, numerics, paths
from deploytui.forms import Form
from deploytui.measure import Measurement, Sample
from deploytui.record import Diff, RecordError, RunRecord, field_table

# the JSON field names, in order, that results.json and `bench --json` have always had
RECORD_FIELDS = [
    "form",
    "argv",
    "cwd",
    "status",
    "error",
    "wall_s",
    "peak_rss_bytes",
    "exit_codes",
    "stages_ms",
    "modules_added",
    "modules_added_torch",
    "modules_added_total",
    "logits",
    "diff",
    "max_abs_diff",
    "within_tol",
    "stderr_tail",
    "n",
    "warmup",
    "measured_at",
]
DIFF_FIELDS = [
    "shape",
    "n",
    "max_abs",
    "mean_abs",
    "max_rel",
    "worst_index",
    "worst_got",
    "worst_want",
    "tol",
    "within_tol",
    "abs_diffs",
]
REFERENCE = [[0.5, -0.25, 0.0], [0.125, 1.0, -2.0]]

finite = st.floats(allow_nan=False, allow_infinity=False, width=32)
samples = st.floats(min_value=0, max_value=1e4, allow_nan=False)
text = st.text(max_size=12)
counts = st.dictionaries(text, st.integers(0, 10_000), max_size=4)
matrix = st.integers(1, 4).flatmap(
    lambda w: st.lists(st.lists(finite, min_size=w, max_size=w), min_size=1, max_size=4)
)


@st.composite
def records(draw) -> RunRecord:
    n = draw(st.integers(0, 5))
    status = draw(st.sampled_from(["ok", "failed", "unavailable"]))
    if status == "ok":
        n = max(n, 1)
    runs = n if status == "ok" else draw(st.integers(0, n))
    logits = draw(st.none() | matrix)
    diff = None
    if logits is not None and draw(st.booleans()):
        want = draw(
            st.lists(
                st.lists(finite, min_size=len(logits[0]), max_size=len(logits[0])),
                min_size=len(logits),
                max_size=len(logits),
            )
        )
        diff = numerics.compare(logits, want, draw(st.sampled_from([1e-6, 1e-3])))
    return RunRecord(
        form=draw(st.none() | st.sampled_from(["torch-eager", "burn-embed", "onnxruntime"])),
        argv=draw(st.lists(text, max_size=4)),
        cwd=draw(text),
        status=status,
        error=draw(st.none() | text),
        wall_s=draw(st.lists(samples, min_size=runs, max_size=runs)),
        peak_rss_bytes=draw(st.lists(st.integers(0, 2**40), min_size=runs, max_size=runs)),
        exit_codes=draw(st.lists(st.none() | st.integers(-255, 255), min_size=runs, max_size=runs)),
        stages_ms=draw(st.none() | st.dictionaries(st.sampled_from(["import", "load", "forward"]), finite)),
        modules_added=draw(st.none() | counts),
        modules_added_torch=draw(st.none() | counts),
        modules_added_total=draw(st.none() | st.integers(0, 5000)),
        logits=logits,
        diff=diff,
        max_abs_diff=diff.max_abs if diff else None,
        within_tol=diff.within_tol if diff else None,
        stderr_tail=draw(st.lists(text, max_size=3)),
        n=n,
        warmup=draw(st.integers(0, 3)),
        measured_at=draw(st.none() | st.just("2026-01-02T03:04:05+0000")),
    )


@given(records())
def test_a_record_survives_its_json_round_trip(rec):
    data = rec.to_json()
    assert list(data) == RECORD_FIELDS
    assert data["diff"] is None or list(data["diff"]) == DIFF_FIELDS
    assert RunRecord.from_json(data) == rec
    again = RunRecord.from_json(json.loads(json.dumps(data)))  # as results.json and --json carry it
    assert again == rec and again.to_json() == data


def test_json_is_plain_data_that_does_not_share_the_records_lists():
    rec = RunRecord("burn-embed", ["x"], "/", status="ok", wall_s=[0.1], peak_rss_bytes=[1], n=1)
    data = rec.to_json()
    data["wall_s"].append(9.0)
    assert rec.wall_s == [0.1]


def test_an_infinite_relative_difference_round_trips():
    d = numerics.compare([[1.0, 2.0]], [[0.0, 2.0]])
    assert d.max_rel == math.inf
    assert Diff.from_json(json.loads(json.dumps(d.to_json()))) == d


def test_absent_fields_take_their_empty_values():
    rec = RunRecord.from_json({"form": "a", "status": "ok", "wall_s": [0.1, 0.2], "peak_rss_bytes": [1, 2]})
    assert rec == RunRecord("a", status="ok", wall_s=[0.1, 0.2], peak_rss_bytes=[1, 2], n=2, measured_at=None)
    nulls = {
        name: None for name in RECORD_FIELDS if name not in ("form", "status", "wall_s", "peak_rss_bytes")
    }
    rec = RunRecord.from_json({"form": "a", "status": "failed", "wall_s": [], "peak_rss_bytes": [], **nulls})
    assert (rec.exit_codes, rec.stderr_tail, rec.argv, rec.n, rec.warmup) == ([], [], [], 0, 0)


def test_a_new_record_is_stamped():
    assert RunRecord("a").measured_at  # local time, e.g. 2026-01-02T03:04:05+0000


def _good() -> dict:
    logits = [[0.5, -0.25, 0.0], [0.125, 1.0, -2.0]]
    diff = numerics.compare(logits, REFERENCE)
    return RunRecord(
        "torch-eager",
        ["python", "-m", "x"],
        "/p",
        status="ok",
        wall_s=[1.5],
        peak_rss_bytes=[650 << 20],
        exit_codes=[0],
        stages_ms={"import": 1.0, "load": 2.0, "forward": 0.5},
        modules_added={"torch": 300},
        modules_added_torch={"torch.fx": 40},
        modules_added_total=300,
        logits=logits,
        diff=diff,
        max_abs_diff=diff.max_abs,
        within_tol=diff.within_tol,
        stderr_tail=["warning"],
        n=1,
        warmup=1,
    ).to_json()


# one wrong value per field (a JSON value of the wrong kind, or one the app could not show)
MALFORMED = {
    "form": 7,
    "argv": "python -m x",
    "cwd": ["/p"],
    "status": None,
    "error": 1,
    "wall_s": [-0.5],
    "peak_rss_bytes": [float("nan")],
    "exit_codes": ["0"],
    "stages_ms": {"import": "fast"},
    "modules_added": {"torch": "many"},
    "modules_added_torch": [1],
    "modules_added_total": "300",
    "logits": [[1, 2], [3]],
    "diff": "0.0",
    "max_abs_diff": float("inf"),
    "within_tol": "yes",
    "stderr_tail": "warning",
    "n": "1",
    "warmup": 1.5,
    "measured_at": 12345,
}
DIFF_MALFORMED = {
    "shape": "2x3",
    "n": None,
    "max_abs": float("nan"),
    "mean_abs": "0",
    "max_rel": "inf",
    "worst_index": [0.5, 1],
    "worst_got": None,
    "worst_want": [1.0],
    "tol": -math.inf,
    "within_tol": 1,
    "abs_diffs": [[0.0, 0.0, 0.0], [0.0]],
}


def test_every_field_has_a_malformed_case():
    assert list(MALFORMED) == RECORD_FIELDS and list(DIFF_MALFORMED) == DIFF_FIELDS
    assert [f.name for f in dataclasses.fields(RunRecord)] == RECORD_FIELDS
    assert [f.name for f in dataclasses.fields(Diff)] == DIFF_FIELDS


def test_the_good_record_is_accepted():
    assert RunRecord.from_json(_good()).to_json() == _good()


@pytest.mark.parametrize("name", RECORD_FIELDS)
def test_a_malformed_field_is_rejected_by_name(name):
    data = {**_good(), name: MALFORMED[name]}
    with pytest.raises(RecordError) as e:
        RunRecord.from_json(data)
    assert e.value.field == name and isinstance(e.value, ValueError)
    if name in ("wall_s", "peak_rss_bytes"):
        assert str(e.value) == "non-numeric or negative samples"
    elif name in ("form", "status"):
        assert str(e.value) == f"field {name!r} missing or not a str"
    else:
        assert str(e.value) == f"field {name!r} is malformed"


@pytest.mark.parametrize("name", DIFF_FIELDS)
def test_a_malformed_or_missing_diff_field_is_rejected_by_name(name):
    good = _good()
    for diff in (
        {**good["diff"], name: DIFF_MALFORMED[name]},
        {k: v for k, v in good["diff"].items() if k != name},
    ):
        with pytest.raises(RecordError) as e:
            RunRecord.from_json({**good, "diff": diff})
        assert e.value.field == f"diff.{name}" and str(e.value) == "field 'diff' is malformed"


@pytest.mark.parametrize("name", ["form", "status", "wall_s", "peak_rss_bytes"])
def test_a_missing_required_field_is_rejected_by_name(name):
    data = {k: v for k, v in _good().items() if k != name}
    with pytest.raises(RecordError) as e:
        RunRecord.from_json(data)
    assert e.value.field == name and str(e.value).startswith(f"field {name!r} missing or not a")


def test_an_ok_record_must_hold_n_run_times():
    with pytest.raises(RecordError, match=r"holds 1 run times for n=3") as e:
        RunRecord.from_json({**_good(), "n": 3})
    assert e.value.field == "n"
    with pytest.raises(RecordError, match=r"holds 0 run times for n=1") as e:
        RunRecord.from_json({**_good(), "wall_s": []})
    assert e.value.field == "wall_s"
    failed = RunRecord.from_json({**_good(), "status": "failed", "n": 20})  # a failed run stops early
    assert failed.n == 20


def test_not_an_object():
    with pytest.raises(RecordError, match="not an object"):
        RunRecord.from_json([1, 2])


# the README's JSON section is the record's field docs ----------------------------------------------


def test_every_field_has_a_doc():
    for cls in (RunRecord, Diff):
        for f in dataclasses.fields(cls):
            doc = f.metadata.get("doc", "")
            assert doc.strip() and "|" not in doc.replace("\\|", ""), (cls.__name__, f.name)


def test_readme_holds_the_field_tables_as_rendered():
    readme = (paths.ROOT / "README.md").read_text()
    for cls in (RunRecord, Diff):
        table = field_table(cls)
        assert "\n" + table + "\n" in readme, "README.md is out of date: paste `python -m deploytui.record`"
    assert readme.count("| field | meaning |") == 2


def test_the_record_module_imports_only_the_standard_library():
    tree = ast.parse((paths.ROOT / "src" / "deploytui" / "record.py").read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert imported and imported <= set(sys.stdlib_module_names) | {"__future__"}, imported


# the one "last JSON line" reader -------------------------------------------------------------------


@pytest.mark.parametrize(
    "out, want",
    [
        ('{"logits": [[1]]}', {"logits": [[1]]}),
        ('chatter\n{"a": 1}\n{"b": 2}\nwarning: done\n\n', {"b": 2}),
        ('  {"b": 2}  \r\n', {"b": 2}),
        ("", None),
        ("no json here\n", None),
        ('{"a": 1}\n{not json', None),  # the last object line is broken: no earlier one is trusted
        ("[1, 2]", None),
    ],
)
def test_last_object(out, want):
    assert jsonio.last_object(out) == want
    assert jsonio.last_object(out.splitlines()) == want


def test_parse_output_says_what_it_saw():
    assert bench.parse_output('loading\n{"logits": [[1.0]]}\n') == {"logits": [[1.0]]}
    with pytest.raises(ValueError, match=r"printed no JSON line with logits \(last line: 'hello'\)"):
        bench.parse_output("hello\n")
    with pytest.raises(ValueError, match=r"\(stdout empty\)"):
        bench.parse_output("  \n")


# bench builds records ------------------------------------------------------------------------------


def _evaluate(stdout: str) -> RunRecord:
    form = Form(
        key="t",
        family="test",
        title="t",
        model_files=(),
        runner="deploytui.runners.torch_runner",
        runtime="none",
        argv=(),
        steps=(),
    )
    m = Measurement(["p"], "/", warmup=[], runs=[Sample(0.01, 1 << 20, 0, stdout=stdout)])
    return bench.evaluate(form, m, REFERENCE, n=1, warmup=0)


def test_evaluate_builds_a_record_that_loads_back():
    rec = _evaluate(
        json.dumps({"logits": REFERENCE, "stages_ms": {"import": 1.0}, "modules_added": {"x": 1}})
    )
    assert (rec.status, rec.error, rec.max_abs_diff, rec.within_tol) == ("ok", None, 0.0, True)
    assert rec.diff == numerics.compare(REFERENCE, REFERENCE) and rec.stages_ms == {"import": 1.0}
    assert RunRecord.from_json(json.loads(json.dumps(rec.to_json()))) == rec


@pytest.mark.parametrize(
    "logits, kept, error",
    [
        ([[1.0, 2.0]], True, "bad logits: logits have shape [1, 2], expected [2, 3]"),
        ("not logits", False, "bad logits: logits is not a 2-D list"),
        ([[1.0, None, 0.0], [1.0, 2.0, 3.0]], False, "bad logits: logits holds a non-finite"),
    ],
)
def test_logits_that_cannot_be_compared_fail_and_the_record_still_loads(logits, kept, error):
    rec = _evaluate(json.dumps({"logits": logits}))
    assert rec.status == "failed" and rec.error.startswith(error) and rec.diff is None
    assert rec.logits == (logits if kept else None)
    assert RunRecord.from_json(rec.to_json()) == rec
