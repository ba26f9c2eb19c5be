"""The parts of a run record (core.record): its output diffs against eager (OutputDiff, Element),
its isolated check (Isolated), its per-forward times (Forwards), its threads (Threads), a
variant's accuracy (Accuracy, OutputAccuracy), the task's metric on the user's data
(TaskScore), and the statistics of samples (Stats, median).

Standard library only: the app imports the record before its first frame.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from deploytui.core.record_check import (
    RecordError,
    field_doc,
    is_bool,
    is_float,
    is_int,
    is_ints,
    is_num,
    is_opt_float,
    is_samples,
    is_str,
    legacy_verdict,
    read_fields,
)


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


@dataclass
class Element:
    """One element of an output, where it differs most from eager."""

    index: list[int] = field(metadata=field_doc("its index in the output (any rank)", is_ints))
    got: float = field(metadata=field_doc("the form's value", is_float))
    want: float = field(metadata=field_doc("eager's value", is_float))
    abs_diff: float = field(metadata=field_doc("their absolute difference (`Infinity` for NaN)", is_float))


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
        metadata=field_doc(
            "the output's name: its path in eager's result (`logits`, `last_hidden_state`, `0.1`; "
            "`output` for a bare tensor), in the model's order",
            is_str,
        )
    )
    shape: list[int] = field(metadata=field_doc("its shape (eager's)", is_ints))
    n: int = field(metadata=field_doc("number of elements compared", is_int))
    max_abs: float = field(metadata=field_doc("largest absolute difference", is_float))
    mean_abs: float = field(metadata=field_doc("mean absolute difference", is_float))
    max_rel: float = field(
        metadata=field_doc(
            "largest relative difference, absolute difference / eager's absolute value "
            "(`Infinity` where eager's is 0 and they differ)",
            is_float,
        )
    )
    worst: list[Element] = field(
        metadata=field_doc(
            "the largest absolute differences, worst first (at most 10): `index`, `got`, `want`, `abs_diff`",
            _elements,
        )
    )
    atol: float = field(
        metadata=field_doc(
            "absolute tolerance applied: the model's (1e-5, a1 1e-6), or 1e-3 of the output's largest "
            "\\|value\\| where that is smaller",
            is_float,
        )
    )
    rtol: float = field(
        metadata=field_doc(
            "relative tolerance applied: the model's (1e-5, a1 0), at least 1e-3 for a float16 output and "
            "1.6e-2 for a bfloat16 one (torch.testing's)",
            is_float,
        )
    )
    min_atol: float = field(
        metadata=field_doc("the smallest `atol` that would pass at this `rtol`", is_float)
    )
    failing: int = field(metadata=field_doc("elements outside the tolerance", is_int))
    within_tol: bool = field(metadata=field_doc("`failing` is 0", is_bool))

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


def tolerance_text(outputs: list[OutputDiff] | None) -> str:
    """`atol 1e-05, rtol 1e-05`: the tolerance of the first output outside its own, else of the one
    furthest from eager (each output is judged at its own: numerics.compare_files); "" without."""
    if not outputs:
        return ""
    o = next((d for d in outputs if not d.within_tol), None) or max(outputs, key=lambda d: d.max_abs)
    return f"atol {o.atol:g}, rtol {o.rtol:g}"


@dataclass
class Isolated:
    """The form's last `deploytui ship FORM --check` for the model (from its `ship.json` entry):
    the bundle run under bubblewrap seeing only itself and the OS's /usr."""

    passed: bool = field(
        metadata=field_doc("`true`: ran isolated with its outputs within tolerance; else `false`", is_bool)
    )
    reason: str | None = field(
        metadata=field_doc(
            "why not: the loader's or the program's own line (`null` or empty when passed)", is_str
        ),
        default=None,
    )
    unpacked_bytes: int | None = field(
        metadata=field_doc("the bundle folder's size, bytes (`null` when no bundle was made)", is_int),
        default=None,
    )
    compressed_bytes: int | None = field(
        metadata=field_doc("the bundle as `.tar.gz` (gzip -6), bytes: what ships", is_int), default=None
    )
    venv_bytes: int | None = field(
        metadata=field_doc("Python forms: the venv its `setup` made on the target, bytes", is_int),
        default=None,
    )
    startup_median_s: float | None = field(
        metadata=field_doc(
            "median wall time of the isolated runs, spawn to exit, seconds (when passed)", is_num
        ),
        default=None,
    )
    peak_rss_median_bytes: int | None = field(
        metadata=field_doc("median peak RSS of the isolated runs, bytes (when passed)", is_num), default=None
    )
    max_abs_diff: float | None = field(
        metadata=field_doc("the isolated run's largest absolute difference from eager", is_float),
        default=None,
    )
    checked_at: str | None = field(
        metadata=field_doc("when it was checked (as `measured_at`)", is_str), default=None
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


@dataclass
class Where:
    """Where a run happened when not on this machine: a target (`deploytui target add`) and what
    `deploytui target check` measured it to be."""

    target: str = field(metadata=field_doc("the target's name", is_str))
    arch: str = field(metadata=field_doc("its architecture (`uname -m`)", is_str), default="")
    os: str = field(metadata=field_doc("its OS (os-release's PRETTY_NAME)", is_str), default="")
    glibc: str = field(metadata=field_doc("its C library (`getconf GNU_LIBC_VERSION`)", is_str), default="")
    kernel: str = field(metadata=field_doc("its kernel (`uname -r`)", is_str), default="")
    cpu: str = field(metadata=field_doc("its CPU model (/proc/cpuinfo)", is_str), default="")
    cores: int | None = field(metadata=field_doc("its online cores", is_int), default=None)
    memory_bytes: int | None = field(metadata=field_doc("its memory (MemTotal)", is_int), default=None)
    emulated: bool = field(
        metadata=field_doc("its timings come from an emulator (qemu-user): stored, never ranked", is_bool),
        default=False,
    )

    @classmethod
    def of(cls, name: str, facts: dict[str, Any]) -> Where:
        """The record's view of a target's facts (what does not fit a field is left out)."""
        values = read_fields(cls, {k: facts.get(k) for k in ("arch", "os", "glibc", "kernel", "cpu")}, "")
        for key in ("cores", "memory_bytes"):
            if isinstance(facts.get(key), int):
                values[key] = facts[key]
        return cls(target=name, emulated=bool(facts.get("emulated", False)), **values)

    @classmethod
    def from_json(cls, data: object) -> Where:
        values = read_fields(cls, data, "target")
        if "target" not in values:
            raise RecordError("target", "field 'target' is malformed")
        return cls(**values)


MAX_SAMPLES = 1000  # the raw per-forward times a record keeps (the last run's, from its start)


@dataclass
class Forwards:
    """The runner's timed forwards (the runner protocol's `forward_ms`), over every counted run:
    after load, the first forward and `warmup` untimed ones, K forwards each timed alone."""

    n: int = field(metadata=field_doc("timed forwards in all (K per counted run)", is_int))
    warmup: int = field(metadata=field_doc("untimed forwards before them in each run (`--warmup`)", is_int))
    p50_ms: float = field(metadata=field_doc("median per-forward time, ms", is_num))
    p90_ms: float = field(
        metadata=field_doc("90th percentile, ms (`statistics.quantiles`, inclusive)", is_num)
    )
    p99_ms: float = field(metadata=field_doc("99th percentile, ms", is_num))
    min_ms: float = field(metadata=field_doc("fastest forward, ms", is_num))
    max_ms: float = field(metadata=field_doc("slowest forward, ms", is_num))
    mean_ms: float = field(metadata=field_doc("mean, ms", is_num))
    std_ms: float = field(metadata=field_doc("sample standard deviation, ms", is_num))
    samples_ms: list[float] = field(
        metadata=field_doc(f"the last run's times in order, ms (at most {MAX_SAMPLES})", is_samples)
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

    requested: int = field(metadata=field_doc("`--threads` given to the runner", is_int))
    reported: int | None = field(
        metadata=field_doc("the thread count the runtime reports using (`null`: it reports none)", is_int),
        default=None,
    )
    cpu_ms: float | None = field(
        metadata=field_doc("the process's CPU time over the timed forwards, all counted runs, ms", is_num),
        default=None,
    )
    loop_ms: float | None = field(metadata=field_doc("their wall time, ms", is_num), default=None)
    busy: float | None = field(
        metadata=field_doc("`cpu_ms / loop_ms`: how many threads were busy on average", is_num), default=None
    )

    @classmethod
    def from_json(cls, data: object) -> Threads:
        values = read_fields(cls, data, "threads")
        if "requested" not in values:
            raise RecordError("threads", "field 'threads' is malformed")
        return cls(**values)


@dataclass
class OutputAccuracy:
    """One output of a variant against eager's, over every sample of the accuracy set."""

    name: str = field(metadata=field_doc("the output's name (as in `outputs`)", is_str))
    shape: list[int] = field(metadata=field_doc("its shape (eager's)", is_ints))
    samples: int = field(metadata=field_doc("inputs it was compared on (the example ones + the set)", is_int))
    max_abs: float = field(metadata=field_doc("largest absolute error over every sample", is_float))
    mean_abs: float = field(
        metadata=field_doc("mean absolute error over every element of every sample", is_float)
    )
    cosine: float = field(
        metadata=field_doc("cosine similarity with eager's output, the worst sample", is_float)
    )
    top1: float | None = field(
        metadata=field_doc(
            "class-score outputs ([batch, classes], or `logits` with the classes last): the fraction "
            "of rows whose top-1 class agrees with eager's; `null` for other outputs",
            is_opt_float,
        ),
        default=None,
    )


@dataclass
class Accuracy:
    """A variant's accuracy against eager (`deploytui.judge.precision`): the figures, its budget and the
    verdict, kept apart from the fp32 tolerance check (`within_tol`)."""

    precision: str = field(metadata=field_doc("the variant's precision (`int8`)", is_str))
    parent: str = field(metadata=field_doc("the fp32 form it comes from (its ratios' reference)", is_str))
    samples: int = field(
        metadata=field_doc("inputs compared: the example inputs + the fixed-seed set", is_int)
    )
    min_cosine: float = field(
        metadata=field_doc("the budget: least cosine similarity of every output", is_float)
    )
    min_top1: float = field(
        metadata=field_doc("the budget: least top-1 agreement of class-score outputs", is_float)
    )
    within_budget: bool = field(metadata=field_doc("every output within the budget", is_bool))
    outputs: list[OutputAccuracy] = field(
        metadata=field_doc("per output (below)", lambda v: isinstance(v, list)), default_factory=list
    )
    reason: str | None = field(metadata=field_doc("what breaks the budget, or `null`", is_str), default=None)

    @classmethod
    def from_json(cls, data: object) -> Accuracy:
        values = read_fields(cls, data, "accuracy")
        if "within_budget" not in values or "parent" not in values:
            raise RecordError("accuracy", "field 'accuracy' is malformed")
        values["outputs"] = [
            OutputAccuracy(**read_fields(OutputAccuracy, o, "accuracy")) for o in values.get("outputs", [])
        ]
        return cls(**values)


@dataclass
class TaskScore:
    """The task's own metric on the evaluation part of the user's labelled data (`--data`): the
    form's and eager's on the same rows, the drop and its confidence interval
    (`deploytui.judge.task`), and what the data was."""

    metric: str = field(
        metadata=field_doc("`top1`: the share of rows whose top-1 class is the label", is_str)
    )
    output: str = field(metadata=field_doc("the output the labels score (class scores)", is_str))
    rows: int = field(
        metadata=field_doc("labelled rows (images of the batches, token positions) scored", is_int)
    )
    value: float = field(metadata=field_doc("the form's top-1 accuracy", is_float))
    eager: float = field(metadata=field_doc("eager's top-1 accuracy on the same rows", is_float))
    drop: float = field(
        metadata=field_doc("eager's minus the form's (positive: the form lost accuracy)", is_float)
    )
    drop_low: float = field(
        metadata=field_doc("the drop's confidence interval, low end (paired rows)", is_float)
    )
    drop_high: float = field(metadata=field_doc("the drop's confidence interval, high end", is_float))
    value_low: float = field(metadata=field_doc("the form's accuracy: Wilson interval, low end", is_float))
    value_high: float = field(metadata=field_doc("the form's accuracy: Wilson interval, high end", is_float))
    confidence: float = field(metadata=field_doc("the intervals' confidence (0.95)", is_float))
    agreement: float = field(metadata=field_doc("share of rows whose top-1 agrees with eager's", is_float))
    samples: int = field(
        metadata=field_doc("samples of the evaluation part run (one fresh run each)", is_int)
    )
    calibration: int = field(
        metadata=field_doc("samples of the calibration part (the int8 exports')", is_int)
    )
    seed: int = field(metadata=field_doc("the split's seed", is_int))
    data: str = field(metadata=field_doc("the data as `--data` named it", is_str))
    fingerprint: str = field(
        metadata=field_doc("sha256 of the data's tensors and labels (16 hex digits)", is_str)
    )
    perplexity: float | None = field(
        metadata=field_doc("next-token logits: the form's perplexity; `null` otherwise", is_opt_float),
        default=None,
    )
    eager_perplexity: float | None = field(
        metadata=field_doc("next-token logits: eager's perplexity; `null` otherwise", is_opt_float),
        default=None,
    )

    @classmethod
    def from_json(cls, data: object) -> TaskScore:
        values = read_fields(cls, data, "task")
        missing = [
            f.name
            for f in dataclasses.fields(cls)
            if f.default is dataclasses.MISSING and f.name not in values
        ]
        if missing:
            raise RecordError("task", f"field 'task' lacks {missing[0]!r}")
        return cls(**values)
