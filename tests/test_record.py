"""The run record: JSON round trip, every field checked by name, the README's tables, its imports."""

import ast
import dataclasses
import json
import math
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deploytui.core import jsonio, paths, tensorfile
from deploytui.core.measure import Measurement, Sample
from deploytui.core.modelref import parse
from deploytui.core.record import RunRecord
from deploytui.core.record_check import RecordError
from deploytui.core.record_docs import field_table
from deploytui.core.record_parts import (
    Accuracy,
    Forwards,
    Isolated,
    OutputAccuracy,
    OutputDiff,
    TaskScore,
    Threads,
    Where,
)
from deploytui.core.workspace import Workspace
from deploytui.judge import numerics
from deploytui.scenarios.startup import bench
from deploytui.spec.forms import Form

# the JSON field names, in order, of results.json and `bench --json`
RECORD_FIELDS = [
    "form",
    "argv",
    "cwd",
    "model",
    "status",
    "error",
    "wall_s",
    "peak_rss_bytes",
    "exit_codes",
    "stages_ms",
    "modules_added",
    "modules_added_torch",
    "modules_added_total",
    "outputs",
    "max_abs_diff",
    "within_tol",
    "stage",
    "stage_status",
    "log",
    "isolated",
    "stderr_tail",
    "n",
    "warmup",
    "measured_at",
    "forwards",
    "threads",
    "batch",
    "accuracy",
    "task",
    "target",
]
DIFF_FIELDS = [
    "name",
    "shape",
    "n",
    "max_abs",
    "mean_abs",
    "max_rel",
    "worst",
    "atol",
    "rtol",
    "min_atol",
    "failing",
    "within_tol",
]
REFERENCE = [0.5, -0.25, 0.0, 0.125, 1.0, -2.0]  # [2, 3], flat

finite = st.floats(allow_nan=False, allow_infinity=False, width=32)
samples = st.floats(min_value=0, max_value=1e4, allow_nan=False)
text = st.text(max_size=12)
counts = st.dictionaries(text, st.integers(0, 10_000), max_size=4)
flat = st.lists(finite, min_size=1, max_size=12)


@st.composite
def records(draw) -> RunRecord:
    n = draw(st.integers(0, 5))
    status = draw(st.sampled_from(["ok", "failed", "unavailable"]))
    if status == "ok":
        n = max(n, 1)
    runs = n if status == "ok" else draw(st.integers(0, n))
    outputs = None
    if draw(st.booleans()):
        outputs = []
        for i in range(draw(st.integers(1, 3))):
            got = draw(flat)
            want = draw(st.lists(finite, min_size=len(got), max_size=len(got)))
            tol = draw(st.sampled_from([1e-6, 1e-3]))
            outputs.append(
                numerics.compare_output(f"output_{i}", got, [len(got)], want, [len(got)], tol, tol)
            )
    return RunRecord(
        form=draw(st.none() | st.sampled_from(["torch-eager", "burn-embed", "onnxruntime"])),
        argv=draw(st.lists(text, max_size=4)),
        cwd=draw(text),
        status=status,
        error=draw(st.none() | text),
        wall_s=draw(st.lists(samples, min_size=runs, max_size=runs)),
        peak_rss_bytes=draw(st.lists(st.integers(0, 2**40), min_size=runs, max_size=runs)),
        exit_codes=draw(st.lists(st.none() | st.integers(-255, 255), min_size=runs, max_size=runs)),
        model=draw(st.none() | st.sampled_from(["a1", "convnet", "mlp:depth=3"])),
        stages_ms=draw(
            st.none()
            | st.dictionaries(st.sampled_from(["import", "load", "first_forward", "steady_forward"]), finite)
        ),
        modules_added=draw(st.none() | counts),
        modules_added_torch=draw(st.none() | counts),
        modules_added_total=draw(st.none() | st.integers(0, 5000)),
        outputs=outputs,
        max_abs_diff=max(d.max_abs for d in outputs) if outputs else None,
        within_tol=all(d.within_tol for d in outputs) if outputs else None,
        stage=draw(st.none() | st.sampled_from(["export", "build", "run", "numerics"])),
        stage_status=draw(st.none() | st.just({"export": "ok", "build": "failed"})),
        log=draw(st.none() | st.just("a1/logs/export-onnx.log")),
        isolated=draw(
            st.none()
            | st.builds(
                Isolated,
                passed=st.booleans(),
                reason=st.none() | text,
                compressed_bytes=st.none() | st.integers(0, 2**40),
                startup_median_s=st.none() | samples,
            )
        ),
        stderr_tail=draw(st.lists(text, max_size=3)),
        n=n,
        warmup=draw(st.integers(0, 3)),
        measured_at=draw(st.none() | st.just("2026-01-02T03:04:05+0000")),
        forwards=draw(
            st.none()
            | st.lists(st.lists(samples, min_size=1, max_size=5), min_size=1, max_size=3).map(
                lambda runs: Forwards.of(runs, 2)
            )
        ),
        threads=draw(
            st.none()
            | st.builds(
                Threads,
                requested=st.integers(1, 8),
                reported=st.none() | st.integers(1, 8),
                busy=st.none() | samples,
            )
        ),
        batch=draw(st.none() | st.integers(1, 64)),
        accuracy=draw(st.none() | accuracies()),
        task=draw(st.none() | task_scores()),
    )


@st.composite
def task_scores(draw) -> TaskScore:
    value, eager = draw(st.floats(0, 1)), draw(st.floats(0, 1))
    return TaskScore(
        metric="top1",
        output="logits",
        rows=draw(st.integers(1, 10_000)),
        value=value,
        eager=eager,
        drop=eager - value,
        drop_low=eager - value - 0.01,
        drop_high=eager - value + 0.01,
        value_low=max(0.0, value - 0.01),
        value_high=min(1.0, value + 0.01),
        confidence=0.95,
        agreement=draw(st.floats(0, 1)),
        samples=draw(st.integers(1, 100)),
        calibration=draw(st.integers(0, 8)),
        seed=draw(st.integers(0, 9)),
        data=draw(text),
        fingerprint="0123456789abcdef",
        perplexity=draw(st.none() | samples),
        eager_perplexity=None,
    )


@st.composite
def accuracies(draw) -> Accuracy:
    outputs = [
        OutputAccuracy(
            name=f"output_{i}",
            shape=[1, draw(st.integers(1, 10))],
            samples=draw(st.integers(1, 9)),
            max_abs=draw(samples),
            mean_abs=draw(samples),
            cosine=draw(st.floats(-1, 1)),
            top1=draw(st.none() | st.floats(0, 1)),
        )
        for i in range(draw(st.integers(0, 2)))
    ]
    ok = draw(st.booleans())
    return Accuracy(
        precision="int8",
        parent="onnxruntime",
        samples=9,
        min_cosine=0.99,
        min_top1=0.8,
        within_budget=ok,
        outputs=outputs,
        reason=None if ok else draw(text),
    )


@given(records())
def test_a_record_survives_its_json_round_trip(rec):
    data = rec.to_json()
    assert list(data) == RECORD_FIELDS
    assert data["outputs"] is None or all(list(d) == DIFF_FIELDS for d in data["outputs"])
    assert RunRecord.from_json(data) == rec
    again = RunRecord.from_json(json.loads(json.dumps(data)))  # as results.json and --json carry it
    assert again == rec and again.to_json() == data


def test_json_is_plain_data_that_does_not_share_the_records_lists():
    rec = RunRecord("burn-embed", ["x"], "/", status="ok", wall_s=[0.1], peak_rss_bytes=[1], n=1)
    data = rec.to_json()
    data["wall_s"].append(9.0)
    assert rec.wall_s == [0.1]


def test_an_infinite_relative_difference_round_trips():
    d = numerics.compare_output("output_0", [1.0, 2.0], [1, 2], [0.0, 2.0], [1, 2])
    assert d.max_rel == math.inf
    assert OutputDiff.from_json(json.loads(json.dumps(d.to_json()))) == d


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
    got = [0.5, -0.25, 0.0, 0.125, 1.0, -2.5]
    diff = numerics.compare_output("output_0", got, [2, 3], REFERENCE, [2, 3], 1e-5, 1e-5)
    return RunRecord(
        "torch-eager",
        ["python", "-m", "x"],
        "/p",
        model="a1",
        status="ok",
        wall_s=[1.5],
        peak_rss_bytes=[650 << 20],
        exit_codes=[0],
        stages_ms={"import": 1.0, "load": 2.0, "first_forward": 0.5, "steady_forward": 0.25},
        modules_added={"torch": 300},
        modules_added_torch={"torch.fx": 40},
        modules_added_total=300,
        outputs=[diff],
        max_abs_diff=diff.max_abs,
        within_tol=diff.within_tol,
        stage="numerics",
        stage_status={"export": "ok", "build": "ok", "run": "ok", "numerics": "failed"},
        log=None,
        stderr_tail=["warning"],
        n=1,
        warmup=1,
    ).to_json()


# one wrong value per field (a JSON value of the wrong kind, or one the app could not show)
MALFORMED = {
    "form": 7,
    "argv": "python -m x",
    "cwd": ["/p"],
    "model": 1,
    "status": None,
    "error": 1,
    "wall_s": [-0.5],
    "peak_rss_bytes": [float("nan")],
    "exit_codes": ["0"],
    "stages_ms": {"import": "fast"},
    "modules_added": {"torch": "many"},
    "modules_added_torch": [1],
    "modules_added_total": "300",
    "outputs": {"output_0": 1},
    "max_abs_diff": "0",
    "within_tol": "yes",
    "stage": 2,
    "stage_status": {"export": True},
    "log": ["a1/logs/x.log"],
    "isolated": {"passed": True, "compressed_bytes": "1 MiB"},
    "stderr_tail": "warning",
    "n": "1",
    "warmup": 1.5,
    "measured_at": 12345,
    "forwards": {"n": 3, "p50_ms": 1.0},
    "threads": {"requested": "2"},
    "batch": "8",
    "accuracy": {"precision": "int8", "parent": "onnxruntime", "within_budget": "yes"},
    "task": {"metric": "top1", "value": "high"},
    "target": {"target": "box", "cores": "two"},
}
DIFF_MALFORMED = {
    "name": 0,
    "shape": "2x3",
    "n": None,
    "max_abs": "0",
    "mean_abs": None,
    "max_rel": "inf",
    "worst": [{"index": [0.5, 1], "got": 1.0, "want": 1.0, "abs_diff": 0.0}],
    "atol": [1e-5],
    "rtol": "0",
    "min_atol": None,
    "failing": 0.5,
    "within_tol": 1,
}


def test_every_field_has_a_malformed_case():
    assert list(MALFORMED) == RECORD_FIELDS and list(DIFF_MALFORMED) == DIFF_FIELDS
    assert [f.name for f in dataclasses.fields(RunRecord)] == RECORD_FIELDS
    assert [f.name for f in dataclasses.fields(OutputDiff)] == DIFF_FIELDS


def test_the_good_record_is_accepted():
    good = _good()  # once: it is stamped with the time, and two calls may straddle a second
    assert RunRecord.from_json(good).to_json() == good


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
def test_a_malformed_or_missing_output_diff_field_is_rejected_by_name(name):
    good = _good()
    (out,) = good["outputs"]
    for diff in ({**out, name: DIFF_MALFORMED[name]}, {k: v for k, v in out.items() if k != name}):
        with pytest.raises(RecordError) as e:
            RunRecord.from_json({**good, "outputs": [diff]})
        assert e.value.field == f"outputs.{name}" and str(e.value) == "field 'outputs' is malformed"


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


# docs/json.md and docs/record.schema.json are the record's field docs and types ------------------


def test_every_field_has_a_doc():
    for cls in (
        RunRecord,
        OutputDiff,
        Isolated,
        Forwards,
        Threads,
        Accuracy,
        OutputAccuracy,
        TaskScore,
        Where,
    ):
        for f in dataclasses.fields(cls):
            doc = f.metadata.get("doc", "")
            assert doc.strip() and "|" not in doc.replace("\\|", ""), (cls.__name__, f.name)


def test_the_json_doc_holds_the_field_tables_as_rendered():
    doc = (paths.ROOT / "docs" / "json.md").read_text()
    for cls in (
        RunRecord,
        OutputDiff,
        Isolated,
        Forwards,
        Threads,
        Accuracy,
        OutputAccuracy,
        TaskScore,
        Where,
    ):
        table = field_table(cls)
        assert "\n" + table + "\n" in doc, (
            "docs/json.md is out of date: paste `python -m deploytui.core.record_docs`"
        )
    assert doc.count("| field | meaning |") == 9


def _matches(value, schema, defs) -> bool:
    """The subset of JSON Schema json_schema() writes: type, anyOf, items, additionalProperties,
    properties + required, $ref."""
    if "$ref" in schema:
        return _matches(value, defs[schema["$ref"].rsplit("/", 1)[1]], defs)
    if "anyOf" in schema:
        return any(_matches(value, s, defs) for s in schema["anyOf"])
    kind = schema["type"]
    if kind == "object":
        if not isinstance(value, dict):
            return False
        props = schema.get("properties")
        if props is not None:
            return set(value) == set(schema["required"]) == set(props) and all(
                _matches(value[k], props[k], defs) for k in props
            )
        return all(
            isinstance(k, str) and _matches(v, schema["additionalProperties"], defs) for k, v in value.items()
        )
    if kind == "array":
        return isinstance(value, list) and all(_matches(v, schema["items"], defs) for v in value)
    checks = {"string": str, "boolean": bool, "null": type(None)}
    if kind in checks:
        return isinstance(value, checks[kind])
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return number and (kind == "number" or isinstance(value, int))


def test_the_schema_file_is_generated():
    from deploytui.core.record_docs import json_schema

    stored = json.loads((paths.ROOT / "docs" / "record.schema.json").read_text())
    assert stored == json_schema(), (
        "docs/record.schema.json is out of date: python -m deploytui.core.record_docs --schema"
    )


@given(records())
def test_every_record_matches_the_schema(rec):
    from deploytui.core.record_docs import json_schema

    schema = json_schema()
    assert _matches(rec.to_json(), schema, schema["$defs"])


def test_the_schema_refuses_a_wrong_field():
    from deploytui.core.record_docs import json_schema

    schema = json_schema()
    good = _good()
    assert _matches(good, schema, schema["$defs"])
    for name, bad in (("n", "twenty"), ("wall_s", [1.0, "x"]), ("stray", 1)):
        assert not _matches(good | {name: bad}, schema, schema["$defs"]), name


RECORD_MODULES = ("record", "record_check", "record_parts", "record_docs")


@pytest.mark.parametrize("name", RECORD_MODULES)
def test_the_record_module_imports_only_the_standard_library(name):
    """Each record module imports the standard library and, of deploytui, only the others."""
    tree = ast.parse((paths.ROOT / "src" / "deploytui" / "core" / f"{name}.py").read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module in {f"deploytui.core.{m}" for m in RECORD_MODULES}:
                continue
            imported.add(module.split(".")[0])
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
    assert bench.parse_output('loading\n{"outputs": 1}\n') == {"outputs": 1}
    with pytest.raises(ValueError, match=r"printed no JSON line with stages \(last line: 'hello'\)"):
        bench.parse_output("hello\n")
    with pytest.raises(ValueError, match=r"\(stdout empty\)"):
        bench.parse_output("  \n")


# bench builds records ------------------------------------------------------------------------------


def _tensors(path, values, shape=(2, 3)):
    tensorfile.write(path, {"output_0": tensorfile.Tensor("F32", tuple(shape), values)})


def _evaluate(tmp_path, monkeypatch, stdout: str, got: list | None, shape=(2, 3)) -> RunRecord:
    ws = Workspace.at(parse("convnet"), tmp_path)
    (tmp_path / ws.slug / "outputs").mkdir(parents=True)
    _tensors(ws.reference_path, REFERENCE)
    if got is not None:
        _tensors(ws.outputs_path("t"), got, shape)
    form = Form(
        key="t",
        family="test",
        title="t",
        model_files=(),
        runner="deploytui.families.pytorch.torch_runner",
        runtime="none",
        argv=(),
        steps=(),
    )
    m = Measurement(["p"], "/", warmup=[], runs=[Sample(0.01, 1 << 20, 0, stdout=stdout)])
    return bench.evaluate(form, m, ws, n=1, warmup=0)


def test_evaluate_builds_a_record_that_loads_back(tmp_path, monkeypatch):
    line = {"stages_ms": {"import": 1.0, "load": 2.0, "first_forward": 0.5, "steady_forward": None}}
    rec = _evaluate(tmp_path, monkeypatch, json.dumps({**line, "modules_added": {"x": 1}}), REFERENCE)
    assert (rec.status, rec.error, rec.max_abs_diff, rec.within_tol) == ("ok", None, 0.0, True)
    assert (rec.stage, rec.model) == (None, "convnet")
    assert rec.stage_status == {"export": "ok", "build": "ok", "run": "ok", "numerics": "ok"}
    assert rec.outputs[0].name == "output_0" and rec.outputs[0].rtol == 1e-5
    assert rec.stages_ms == {"import": 1.0, "load": 2.0, "first_forward": 0.5}
    assert RunRecord.from_json(json.loads(json.dumps(rec.to_json()))) == rec


def test_outputs_beyond_tolerance_fail_at_the_numerics_stage(tmp_path, monkeypatch):
    got = [*REFERENCE[:-1], -2.1]
    rec = _evaluate(tmp_path, monkeypatch, json.dumps({"stages_ms": {}}), got)
    assert rec.status == "ok" and rec.within_tol is False and rec.stage == "numerics"
    assert rec.error.startswith("output_0 differs from eager by 0.1 (1 of 6 elements outside")
    assert rec.outputs[0].worst[0].index == [1, 2]


@pytest.mark.parametrize(
    "got, shape, error",
    [
        ([1.0, 2.0], (1, 2), "bad outputs: output_0 has shape [1, 2], expected [2, 3]"),
        (None, None, "bad outputs: t.safetensors:"),
    ],
)
def test_outputs_that_cannot_be_compared_fail_and_the_record_still_loads(
    tmp_path, monkeypatch, got, shape, error
):
    rec = _evaluate(tmp_path, monkeypatch, json.dumps({"stages_ms": {}}), got, shape)
    assert rec.status == "failed" and rec.error.startswith(error) and rec.outputs is None
    assert rec.stage == "numerics" and rec.stage_status["run"] == "ok"
    assert RunRecord.from_json(rec.to_json()) == rec


def test_a_run_without_its_json_line_fails_at_the_run_stage(tmp_path, monkeypatch):
    rec = _evaluate(tmp_path, monkeypatch, "hello\n", REFERENCE)
    assert rec.status == "failed" and rec.stage == "run" and "printed no JSON line" in rec.error
