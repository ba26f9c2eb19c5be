"""One measured run of a form (or of any command): the record that every output serialises.

`bench` builds a RunRecord per form, `artifacts/<model>/results.json` stores them, `bench --json`
and `measure --json` print them, the report and the app read their attributes. `to_json()` is
the JSON object documented in docs/json.md (whose field tables `field_table()` renders from the
field docs below, and docs/record.schema.json the schema `json_schema()` derives from the fields'
types; tests compare both); `from_json()` checks every field and raises RecordError, a
ValueError naming the first field that is wrong, so a damaged results.json drops that record.

Standard library only: the app imports this before its first frame.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import time
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar

T = TypeVar("T")


class RunStatus(StrEnum):
    """A record's `status` (its JSON holds the value)."""

    OK = "ok"
    FAILED = "failed"
    UNAVAILABLE = "unavailable"
    NOT_APPLICABLE = "not-applicable"


class StageStatus(StrEnum):
    """One stage's status in `stage_status`."""

    OK = "ok"
    FAILED = "failed"
    SKIPPED = "skipped"
    NOT_APPLICABLE = "not-applicable"


STAGES = ("export", "build", "run", "numerics")  # a form's way, in order


@dataclass(frozen=True)
class Stats:
    """min / median / max / mean / stdev / 90th and 99th percentiles of a list of samples (run
    times, peak RSS, per-forward times): the one place a median or a percentile of samples is
    taken (`RunRecord.wall`, `.rss`, `Forwards.of`; the measuring core's `Measurement`).
    Percentiles are `statistics.quantiles(..., method="inclusive")`: linear between the sorted
    samples, the 50th the median."""

    n: int
    min: float
    median: float
    max: float
    mean: float
    stdev: float
    p90: float = 0.0
    p99: float = 0.0

    @classmethod
    def of(cls, values: Sequence[float]) -> Stats | None:
        """None for no samples."""
        if not values:
            return None
        stdev = statistics.stdev(values) if len(values) > 1 else 0.0
        cuts = (
            statistics.quantiles(values, n=100, method="inclusive") if len(values) > 1 else [values[0]] * 99
        )
        return cls(
            len(values),
            min(values),
            statistics.median(values),
            max(values),
            statistics.fmean(values),
            stdev,
            cuts[89],
            cuts[98],
        )


def median(values: Sequence[float] | None) -> float | None:
    """The median of `values`, None when there are none."""
    s = Stats.of(values or [])
    return s.median if s else None


class RecordError(ValueError):
    """A record (or one of its output diffs) that cannot be used; `field` names the first wrong field."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field = field_name


def _num(v: object) -> bool:
    """A finite int or float (not a bool)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _int(v: object) -> bool:
    return isinstance(v, int)


def _ints(v: object) -> bool:
    return isinstance(v, list) and all(isinstance(x, int) for x in v)


def _str(v: object) -> bool:
    return isinstance(v, str)


def _strs(v: object) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _bool(v: object) -> bool:
    return isinstance(v, bool)


def _counts(v: object) -> bool:
    return isinstance(v, dict) and all(isinstance(k, str) and isinstance(n, int) for k, n in v.items())


def is_matrix(v: object) -> bool:
    """A non-empty rectangular list of rows of finite numbers (logits, per-element diffs)."""
    return (
        isinstance(v, list)
        and bool(v)
        and all(isinstance(r, list) and len(r) == len(v[0]) for r in v)
        and all(_num(x) for r in v for x in r)
    )


def _doc(doc: str, check: Callable[[object], bool]) -> dict[str, Any]:
    """A field's metadata: its meaning (for the README table) and what its JSON value must be when
    it is not null."""
    return {"doc": doc, "check": check}


def stamp() -> str:
    """Local time with its UTC offset, to the second, as `measured_at` holds it."""
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def _float(v: object) -> bool:
    """Any number, infinities and NaN included (a form's output may hold them)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


@dataclass
class Element:
    """One element of an output, where it differs most from eager."""

    index: list[int] = field(metadata=_doc("its index in the output (any rank)", _ints))
    got: float = field(metadata=_doc("the form's value", _float))
    want: float = field(metadata=_doc("eager's value", _float))
    abs_diff: float = field(metadata=_doc("their absolute difference (`Infinity` for NaN)", _float))


def _elements(v: object) -> bool:
    return isinstance(v, list) and all(
        isinstance(e, dict)
        and all(f.name in e and f.metadata["check"](e[f.name]) for f in dataclasses.fields(Element))
        for e in v
    )


@dataclass
class OutputDiff:
    """One output against eager's, elementwise `|got − want| ≤ atol + rtol·|want|` (Polygraphy's
    check; `numerics.compare_output`)."""

    name: str = field(
        metadata=_doc(
            "the output's name: its path in eager's result (`logits`, `last_hidden_state`, `0.1`; "
            "`output` for a bare tensor), in the model's order",
            _str,
        )
    )
    shape: list[int] = field(metadata=_doc("its shape (eager's)", _ints))
    n: int = field(metadata=_doc("number of elements compared", _int))
    max_abs: float = field(metadata=_doc("largest absolute difference", _float))
    mean_abs: float = field(metadata=_doc("mean absolute difference", _float))
    max_rel: float = field(
        metadata=_doc(
            "largest relative difference, absolute difference / eager's absolute value "
            "(`Infinity` where eager's is 0 and they differ)",
            _float,
        )
    )
    worst: list[Element] = field(
        metadata=_doc(
            "the largest absolute differences, worst first (at most 10): `index`, `got`, `want`, `abs_diff`",
            _elements,
        )
    )
    atol: float = field(metadata=_doc("absolute tolerance (the model's: 1e-5, a1 1e-6)", _float))
    rtol: float = field(metadata=_doc("relative tolerance (the model's: 1e-5, a1 0)", _float))
    min_atol: float = field(metadata=_doc("the smallest `atol` that would pass at this `rtol`", _float))
    failing: int = field(metadata=_doc("elements outside the tolerance", _int))
    within_tol: bool = field(metadata=_doc("`failing` is 0", _bool))

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: object) -> OutputDiff:
        """The diff a JSON object holds; RecordError (field `outputs.<name>`) when one is wrong."""
        if not isinstance(data, dict):
            raise RecordError("outputs", "field 'outputs' is malformed")
        for f in dataclasses.fields(cls):
            if f.name not in data or not f.metadata["check"](data[f.name]):
                raise RecordError(f"outputs.{f.name}", "field 'outputs' is malformed")
        values = {f.name: data[f.name] for f in dataclasses.fields(cls)}
        values["worst"] = [
            Element(**{k: e[k] for k in ("index", "got", "want", "abs_diff")}) for e in values["worst"]
        ]
        return cls(**values)

    def line(self) -> str:
        verdict = "OK" if self.within_tol else f"FAIL ({self.failing} of {self.n} outside)"
        where = tuple(self.worst[0].index) if self.worst else ()
        return (
            f"{self.name} {self.shape} max|diff|={self.max_abs:.3g} max rel={self.max_rel:.3g} "
            f"worst={where} atol={self.atol:g} rtol={self.rtol:g} {verdict}"
        )


def read_fields(cls: type, data: object, where: str) -> dict[str, Any]:
    """The values of a record type's fields in a JSON object (absent ones left out, other keys
    ignored), each checked by its field's `check`; RecordError when one is wrong, naming `where`
    (the record's field in its parent) or else the wrong field itself."""
    if not isinstance(data, dict):
        raise RecordError(where, f"{where or 'entry'!r} is not an object")
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        v = data.get(f.name)
        if v is None:
            continue
        if not f.metadata["check"](v):
            name = where or f.name
            raise RecordError(name, f"field {name!r} is malformed")
        values[f.name] = v
    return values


def from_checked(cls: type[T], data: object, required: str, **convert: Callable[[Any], Any]) -> T:
    """A flat record (manifest step or artifact, ship check) from a JSON object: its fields checked
    (`read_fields`), `required` present, `convert` applied to the named values."""
    values = read_fields(cls, data, "")
    if required not in values:
        raise RecordError(required, f"field {required!r} missing")
    for name, conv in convert.items():
        if name in values:
            values[name] = conv(values[name])
    return cls(**values)


def legacy_verdict(data: dict[str, Any]) -> dict[str, Any]:
    """ship.json and results.json written before verdicts were booleans held `"verdict": "✓"`."""
    if "passed" not in data and data.get("verdict") in ("✓", "✗"):
        return {**data, "passed": data["verdict"] == "✓"}
    return data


@dataclass
class Isolated:
    """The form's last `deploytui ship FORM --check` for the model (from its `ship.json` entry):
    the bundle run under bubblewrap seeing only itself and the OS's /usr."""

    passed: bool = field(
        metadata=_doc("`true`: ran isolated with its outputs within tolerance; else `false`", _bool)
    )
    reason: str | None = field(
        metadata=_doc("why not: the loader's or the program's own line (`null` or empty when passed)", _str),
        default=None,
    )
    unpacked_bytes: int | None = field(
        metadata=_doc("the bundle folder's size, bytes (`null` when no bundle was made)", _int),
        default=None,
    )
    compressed_bytes: int | None = field(
        metadata=_doc("the bundle as `.tar.gz` (gzip -6), bytes: what ships", _int), default=None
    )
    venv_bytes: int | None = field(
        metadata=_doc("Python forms: the venv its `setup` made on the target, bytes", _int),
        default=None,
    )
    startup_median_s: float | None = field(
        metadata=_doc("median wall time of the isolated runs, spawn to exit, seconds (when passed)", _num),
        default=None,
    )
    peak_rss_median_bytes: int | None = field(
        metadata=_doc("median peak RSS of the isolated runs, bytes (when passed)", _num), default=None
    )
    max_abs_diff: float | None = field(
        metadata=_doc("the isolated run's largest absolute difference from eager", _float),
        default=None,
    )
    checked_at: str | None = field(
        metadata=_doc("when it was checked (as `measured_at`)", _str), default=None
    )

    @classmethod
    def from_json(cls, data: object) -> Isolated:
        """The fields of a ship.json entry (other keys ignored); RecordError when one is wrong."""
        if isinstance(data, dict):
            data = legacy_verdict(data)
        values = read_fields(cls, data, "isolated")
        if "passed" not in values:
            raise RecordError("isolated", "field 'isolated' is malformed")
        return cls(**values)


def _samples(v: object) -> bool:
    return isinstance(v, list) and all(_num(x) and x >= 0 for x in v)


MAX_SAMPLES = 1000  # the raw per-forward times a record keeps (the last run's, from its start)


@dataclass
class Forwards:
    """The runner's timed forwards (the runner protocol's `forward_ms`), over every counted run:
    after load, the first forward and `warmup` untimed ones, K forwards each timed alone."""

    n: int = field(metadata=_doc("timed forwards in all (K per counted run)", _int))
    warmup: int = field(metadata=_doc("untimed forwards before them in each run (`--warmup`)", _int))
    p50_ms: float = field(metadata=_doc("median per-forward time, ms", _num))
    p90_ms: float = field(metadata=_doc("90th percentile, ms (`statistics.quantiles`, inclusive)", _num))
    p99_ms: float = field(metadata=_doc("99th percentile, ms", _num))
    min_ms: float = field(metadata=_doc("fastest forward, ms", _num))
    max_ms: float = field(metadata=_doc("slowest forward, ms", _num))
    mean_ms: float = field(metadata=_doc("mean, ms", _num))
    std_ms: float = field(metadata=_doc("sample standard deviation, ms", _num))
    samples_ms: list[float] = field(
        metadata=_doc(f"the last run's times in order, ms (at most {MAX_SAMPLES})", _samples)
    )

    @classmethod
    def of(cls, runs: Sequence[Sequence[float]], warmup: int) -> Forwards | None:
        """The stats of every run's times pooled (None without any)."""
        st = Stats.of([x for run in runs for x in run])
        if st is None:
            return None
        return cls(
            st.n,
            warmup,
            st.median,
            st.p90,
            st.p99,
            st.min,
            st.max,
            st.mean,
            st.stdev,
            list(runs[-1][:MAX_SAMPLES]),
        )

    @classmethod
    def from_json(cls, data: object) -> Forwards:
        values = read_fields(cls, data, "forwards")
        if len(values) != len(dataclasses.fields(cls)):
            raise RecordError("forwards", "field 'forwards' is malformed")
        return cls(**values)


@dataclass
class Threads:
    """`--threads` as the runtime took it: what was asked, what the runtime reports, and the
    process's CPU time against the wall time over the timed forwards (measured: a runtime that
    runs on more threads than one shows a `busy` above 1)."""

    requested: int = field(metadata=_doc("`--threads` given to the runner", _int))
    reported: int | None = field(
        metadata=_doc("the thread count the runtime reports using (`null`: it reports none)", _int),
        default=None,
    )
    cpu_ms: float | None = field(
        metadata=_doc("the process's CPU time over the timed forwards, all counted runs, ms", _num),
        default=None,
    )
    loop_ms: float | None = field(metadata=_doc("their wall time, ms", _num), default=None)
    busy: float | None = field(
        metadata=_doc("`cpu_ms / loop_ms`: how many threads were busy on average", _num), default=None
    )

    @classmethod
    def from_json(cls, data: object) -> Threads:
        values = read_fields(cls, data, "threads")
        if "requested" not in values:
            raise RecordError("threads", "field 'threads' is malformed")
        return cls(**values)


@dataclass
class RunRecord:
    """Warm-up runs (not counted) then `n` counted runs of one command, each in a fresh process,
    and what the last run wrote, compared with eager. Lists hold one entry per counted run."""

    form: str | None = field(
        metadata=_doc("form key (`null` for `measure`)", lambda v: v is None or isinstance(v, str))
    )
    argv: list[str] = field(metadata=_doc("the exact command measured", _strs), default_factory=list)
    cwd: str = field(metadata=_doc("where it ran", _str), default="")
    model: str | None = field(
        metadata=_doc("the model, as `--model` spells it (`null` for `measure`)", _str), default=None
    )
    status: RunStatus = field(
        metadata=_doc(
            "`ok` (ran, wrote its outputs), `failed` (its export or build failed, non-zero exit, "
            "signal, timeout, bad outputs), `unavailable` (not built, tool missing), "
            "`not-applicable` (the form cannot exist for this model, `error` says why)",
            lambda v: isinstance(v, str) and v in RunStatus._value2member_map_,
        ),
        default=RunStatus.FAILED,
    )
    error: str | None = field(metadata=_doc("why, or `null`", _str), default=None)
    wall_s: list[float] = field(
        metadata=_doc("wall time of every counted run, spawn to reaped exit, seconds", _samples),
        default_factory=list,
    )
    peak_rss_bytes: list[int] = field(
        metadata=_doc("the child's own peak RSS (`ru_maxrss`) of every counted run, bytes", _samples),
        default_factory=list,
    )
    exit_codes: list[int | None] = field(
        metadata=_doc(
            "exit code of every counted run (`null` where a signal killed it)",
            lambda v: isinstance(v, list) and all(c is None or isinstance(c, int) for c in v),
        ),
        default_factory=list,
    )
    stages_ms: dict[str, float] | None = field(
        metadata=_doc(
            "median over the counted runs, in ms, of the runner's `load`, `first_forward` and "
            "`steady_forward` (itself the median of `--repeat` further forwards; `null` when 0), "
            "and `import` for Python forms",
            lambda v: isinstance(v, dict) and all(isinstance(k, str) and _num(x) for k, x in v.items()),
        ),
        default=None,
    )
    modules_added: dict[str, int] | None = field(
        metadata=_doc(
            "Python forms: modules the load step imported, per top-level package; else `null`", _counts
        ),
        default=None,
    )
    modules_added_torch: dict[str, int] | None = field(
        metadata=_doc(
            "of those, torch's own per subpackage (`torch.distributed`, `torch._dynamo`, …)", _counts
        ),
        default=None,
    )
    modules_added_total: int | None = field(
        metadata=_doc("Python forms: how many modules the load step imported in all; else `null`", _int),
        default=None,
    )
    outputs: list[OutputDiff] | None = field(
        metadata=_doc(
            "each output the last counted run wrote against eager's (below); `null` when there are none",
            lambda v: isinstance(v, list),  # and OutputDiff.from_json checks each
        ),
        default=None,
    )
    max_abs_diff: float | None = field(
        metadata=_doc(
            "the largest absolute difference from eager over all outputs (`null` without outputs)", _float
        ),
        default=None,
    )
    within_tol: bool | None = field(
        metadata=_doc("every output within the model's tolerance (`null` without outputs)", _bool),
        default=None,
    )
    stage: str | None = field(
        metadata=_doc(
            "the first stage of `export` → `build` → `run` → `numerics` that did not pass "
            "(`null` when all did)",
            _str,
        ),
        default=None,
    )
    stage_status: dict[str, StageStatus] | None = field(
        metadata=_doc(
            "each stage's status: `ok`, `failed`, `skipped` or `not-applicable`",
            lambda v: (
                isinstance(v, dict)
                and all(
                    isinstance(k, str) and isinstance(x, str) and x in StageStatus._value2member_map_
                    for k, x in v.items()
                )
            ),
        ),
        default=None,
    )
    log: str | None = field(
        metadata=_doc(
            "the full log of the failing export or build step, relative to the artifacts root "
            "(`null` otherwise)",
            _str,
        ),
        default=None,
    )
    isolated: Isolated | None = field(
        metadata=_doc(
            "the form's last isolated check (`deploytui ship FORM --check`, below); `null` if never",
            lambda v: isinstance(v, dict),  # and Isolated.from_json checks it
        ),
        default=None,
    )
    stderr_tail: list[str] = field(
        metadata=_doc("last lines of the last run's stderr", _strs), default_factory=list
    )
    n: int = field(
        metadata=_doc("counted runs asked for (when `ok`, `wall_s` holds that many)", _int), default=0
    )
    warmup: int = field(metadata=_doc("warm-up runs before them (not counted)", _int), default=0)
    measured_at: str | None = field(
        metadata=_doc(
            "when it was measured: local time with UTC offset, to the second (`2026-01-02T03:04:05+0000`)",
            _str,
        ),
        default_factory=stamp,
    )
    forwards: Forwards | None = field(
        metadata=_doc(
            "the per-forward times of the runner's timed forwards (below); `null` when none ran",
            lambda v: isinstance(v, dict),  # and Forwards.from_json checks it
        ),
        default=None,
    )
    threads: Threads | None = field(
        metadata=_doc(
            "`--threads` asked, reported by the runtime, and measured (below); `null` when not run",
            lambda v: isinstance(v, dict),  # and Threads.from_json checks it
        ),
        default=None,
    )
    batch: int | None = field(
        metadata=_doc(
            "the inputs' dim 0 when run at a batch size (`bench --batch`: the example's first item "
            "repeated); `null`: the example as built",
            _int,
        ),
        default=None,
    )
    accuracy: Accuracy | None = field(
        metadata=_doc(
            "a lower-precision variant (int8): its accuracy against eager over the example inputs "
            "and a fixed-seed set, judged by its budget (below); `null` for fp32 forms",
            lambda v: isinstance(v, dict),  # and Accuracy.from_json checks it
        ),
        default=None,
    )

    def to_json(self) -> dict[str, Any]:
        """The JSON object: every field, in this order, each output diff as an object."""
        return dataclasses.asdict(self)

    @property
    def wall(self) -> Stats | None:
        """The counted runs' wall times (None without any)."""
        return Stats.of(self.wall_s)

    @property
    def rss(self) -> Stats | None:
        """The counted runs' peak RSS (None without any)."""
        return Stats.of(self.peak_rss_bytes)

    @property
    def measured(self) -> bool:
        """It ran to the end: ok, with run times."""
        return self.status == RunStatus.OK and bool(self.wall_s)

    @property
    def outputs_pass(self) -> bool | None:
        """Its outputs pass: a variant's (int8) within its accuracy budget, any other form's within
        the model's tolerance; None when they were not compared."""
        if self.accuracy is not None:
            return self.accuracy.within_budget
        return self.within_tol

    @classmethod
    def from_json(cls, data: object) -> RunRecord:
        """The record a JSON object holds. Absent or null fields take their empty value (`[]`, `null`,
        0 warm-up runs, `n` the number of run times); RecordError names the first wrong field."""
        if not isinstance(data, dict):
            raise RecordError("", "not an object")
        if "form" not in data or not (data["form"] is None or isinstance(data["form"], str)):
            raise RecordError("form", "field 'form' missing or not a str")
        for name, kind in (("status", str), ("wall_s", list), ("peak_rss_bytes", list)):
            if not isinstance(data.get(name), kind):
                raise RecordError(name, f"field {name!r} missing or not a {kind.__name__}")
        for name in ("wall_s", "peak_rss_bytes"):
            if not _samples(data[name]):
                raise RecordError(name, "non-numeric or negative samples")
        values: dict[str, Any] = {"form": data["form"]}
        for f in dataclasses.fields(cls):
            v = data.get(f.name)
            if v is None:
                continue
            if not f.metadata["check"](v):
                raise RecordError(f.name, f"field {f.name!r} is malformed")
            values[f.name] = v
        if "outputs" in values:
            values["outputs"] = [OutputDiff.from_json(o) for o in values["outputs"]]
        if "isolated" in values:
            values["isolated"] = Isolated.from_json(values["isolated"])
        if "forwards" in values:
            values["forwards"] = Forwards.from_json(values["forwards"])
        if "threads" in values:
            values["threads"] = Threads.from_json(values["threads"])
        if "accuracy" in values:
            values["accuracy"] = Accuracy.from_json(values["accuracy"])
        values["status"] = RunStatus(values["status"])
        if "stage_status" in values:
            values["stage_status"] = {k: StageStatus(x) for k, x in values["stage_status"].items()}
        walls = values["wall_s"]
        n = data.get("n", len(walls))
        if values["status"] == "ok" and (not walls or len(walls) != n):
            raise RecordError("n" if walls else "wall_s", f"holds {len(walls)} run times for n={n}")
        values.setdefault("n", len(walls))
        values.setdefault("measured_at", None)
        return cls(**values)


def _opt_float(v: object) -> bool:
    return v is None or _float(v)


@dataclass
class OutputAccuracy:
    """One output of a variant against eager's, over every sample of the accuracy set."""

    name: str = field(metadata=_doc("the output's name (as in `outputs`)", _str))
    shape: list[int] = field(metadata=_doc("its shape (eager's)", _ints))
    samples: int = field(metadata=_doc("inputs it was compared on (the example ones + the set)", _int))
    max_abs: float = field(metadata=_doc("largest absolute error over every sample", _float))
    mean_abs: float = field(metadata=_doc("mean absolute error over every element of every sample", _float))
    cosine: float = field(metadata=_doc("cosine similarity with eager's output, the worst sample", _float))
    top1: float | None = field(
        metadata=_doc(
            "class-score outputs ([batch, classes], or `logits` with the classes last): the fraction "
            "of rows whose top-1 class agrees with eager's; `null` for other outputs",
            _opt_float,
        ),
        default=None,
    )


@dataclass
class Accuracy:
    """A variant's accuracy against eager (`deploytui.judge.precision`): the figures, its budget and the
    verdict, kept apart from the fp32 tolerance check (`within_tol`)."""

    precision: str = field(metadata=_doc("the variant's precision (`int8`)", _str))
    parent: str = field(metadata=_doc("the fp32 form it comes from (its ratios' reference)", _str))
    samples: int = field(metadata=_doc("inputs compared: the example inputs + the fixed-seed set", _int))
    min_cosine: float = field(metadata=_doc("the budget: least cosine similarity of every output", _float))
    min_top1: float = field(metadata=_doc("the budget: least top-1 agreement of class-score outputs", _float))
    within_budget: bool = field(metadata=_doc("every output within the budget", _bool))
    outputs: list[OutputAccuracy] = field(
        metadata=_doc("per output (below)", lambda v: isinstance(v, list)), default_factory=list
    )
    reason: str | None = field(metadata=_doc("what breaks the budget, or `null`", _str), default=None)

    @classmethod
    def from_json(cls, data: object) -> Accuracy:
        values = read_fields(cls, data, "accuracy")
        if "within_budget" not in values or "parent" not in values:
            raise RecordError("accuracy", "field 'accuracy' is malformed")
        values["outputs"] = [
            OutputAccuracy(**read_fields(OutputAccuracy, o, "accuracy")) for o in values.get("outputs", [])
        ]
        return cls(**values)


def field_table(cls: type = RunRecord) -> str:
    """The Markdown table of a record type's JSON fields and their meaning (docs/json.md holds it)."""
    lines = ["| field | meaning |", "|---|---|"]
    lines += [f"| `{f.name}` | {f.metadata['doc']} |" for f in dataclasses.fields(cls)]
    return "\n".join(lines)


SCHEMA_TYPES: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
}


def _type_schema(hint: Any) -> dict[str, Any]:
    """The JSON Schema of one annotation: a scalar, a string enum, `X | None`, `list[X]`,
    `dict[str, X]` or one of the record's dataclasses (a reference to its definition)."""
    if hint in SCHEMA_TYPES:
        return dict(SCHEMA_TYPES[hint])
    if isinstance(hint, type) and issubclass(hint, StrEnum):
        return {"type": "string", "enum": [m.value for m in hint]}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return {"$ref": f"#/$defs/{hint.__name__}"}
    args = typing.get_args(hint)
    origin = typing.get_origin(hint)
    if origin is list:
        return {"type": "array", "items": _type_schema(args[0])}
    if origin is dict:
        return {"type": "object", "additionalProperties": _type_schema(args[1])}
    if origin in (types.UnionType, typing.Union):
        return {"anyOf": [_type_schema(a) for a in args]}
    raise TypeError(f"no JSON Schema for {hint!r}")


def _object_schema(cls: type) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    fields = dataclasses.fields(cls)
    return {
        "type": "object",
        "description": " ".join((cls.__doc__ or "").split()),
        "properties": {
            f.name: {**_type_schema(hints[f.name]), "description": f.metadata["doc"]} for f in fields
        },
        "required": [f.name for f in fields],
    }


def json_schema() -> dict[str, Any]:
    """A JSON Schema (draft 2020-12) of the record's JSON object, from the fields' types and docs
    (docs/record.schema.json holds it; a test compares). Non-finite floats are written as
    `Infinity`/`NaN`, which JSON proper has no number for."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "deploytui RunRecord",
        **_object_schema(RunRecord),
        "$defs": {
            cls.__name__: _object_schema(cls)
            for cls in (OutputDiff, Element, Isolated, Forwards, Threads, Accuracy, OutputAccuracy)
        },
    }


if __name__ == "__main__":  # python -m deploytui.core.record [--schema]: the tables / the schema for docs/
    import json
    import sys

    if sys.argv[1:] == ["--schema"]:
        print(json.dumps(json_schema(), indent=2, ensure_ascii=False))
    else:
        tables = (RunRecord, OutputDiff, Isolated, Forwards, Threads, Accuracy, OutputAccuracy)
        print(*(field_table(t) for t in tables), sep="\n\n")
