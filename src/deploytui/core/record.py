"""One measured run of a form (or of any command): the record that every output serialises.

`bench` builds a RunRecord per form, `artifacts/<model>/results.json` stores them, `bench --json`
and `measure --json` print them, the report and the app read their attributes. `to_json()` is
the JSON object documented in docs/json.md (whose field tables core.record_docs renders from the
field docs below, and docs/record.schema.json the schema it derives from the fields' types;
tests compare both); `from_json()` checks every field (core.record_check) and raises
RecordError, a ValueError naming the first field that is wrong, so a damaged results.json drops
that record. Its parts (output diffs, isolated check, forwards, threads, accuracy) are
core.record_parts'.

Standard library only: the app imports this before its first frame.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from deploytui.core.record_check import (
    RecordError,
    field_doc,
    is_bool,
    is_counts,
    is_float,
    is_int,
    is_num,
    is_samples,
    is_str,
    is_strs,
)
from deploytui.core.record_parts import (
    Accuracy,
    Forwards,
    Isolated,
    OutputDiff,
    Stats,
    TaskScore,
    Threads,
    Where,
)


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


def stamp() -> str:
    """Local time with its UTC offset, to the second, as `measured_at` holds it."""
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


@dataclass
class RunRecord:
    """Warm-up runs (not counted) then `n` counted runs of one command, each in a fresh process,
    and what the last run wrote, compared with eager. Lists hold one entry per counted run."""

    form: str | None = field(
        metadata=field_doc("form key (`null` for `measure`)", lambda v: v is None or isinstance(v, str))
    )
    argv: list[str] = field(metadata=field_doc("the exact command measured", is_strs), default_factory=list)
    cwd: str = field(metadata=field_doc("where it ran", is_str), default="")
    model: str | None = field(
        metadata=field_doc("the model, as `--model` spells it (`null` for `measure`)", is_str), default=None
    )
    status: RunStatus = field(
        metadata=field_doc(
            "`ok` (ran, wrote its outputs), `failed` (its export or build failed, non-zero exit, "
            "signal, timeout, bad outputs), `unavailable` (not built, tool missing), "
            "`not-applicable` (the form cannot exist for this model, `error` says why)",
            lambda v: isinstance(v, str) and v in RunStatus._value2member_map_,
        ),
        default=RunStatus.FAILED,
    )
    error: str | None = field(metadata=field_doc("why, or `null`", is_str), default=None)
    wall_s: list[float] = field(
        metadata=field_doc("wall time of every counted run, spawn to reaped exit, seconds", is_samples),
        default_factory=list,
    )
    peak_rss_bytes: list[int] = field(
        metadata=field_doc("the child's own peak RSS (`ru_maxrss`) of every counted run, bytes", is_samples),
        default_factory=list,
    )
    exit_codes: list[int | None] = field(
        metadata=field_doc(
            "exit code of every counted run (`null` where a signal killed it)",
            lambda v: isinstance(v, list) and all(c is None or isinstance(c, int) for c in v),
        ),
        default_factory=list,
    )
    stages_ms: dict[str, float] | None = field(
        metadata=field_doc(
            "median over the counted runs, in ms, of the runner's `load`, `first_forward` and "
            "`steady_forward` (itself the median of `--repeat` further forwards; `null` when 0), "
            "and `import` for Python forms",
            lambda v: isinstance(v, dict) and all(isinstance(k, str) and is_num(x) for k, x in v.items()),
        ),
        default=None,
    )
    modules_added: dict[str, int] | None = field(
        metadata=field_doc(
            "Python forms: modules the load step imported, per top-level package; else `null`", is_counts
        ),
        default=None,
    )
    modules_added_torch: dict[str, int] | None = field(
        metadata=field_doc(
            "of those, torch's own per subpackage (`torch.distributed`, `torch._dynamo`, …)", is_counts
        ),
        default=None,
    )
    modules_added_total: int | None = field(
        metadata=field_doc(
            "Python forms: how many modules the load step imported in all; else `null`", is_int
        ),
        default=None,
    )
    outputs: list[OutputDiff] | None = field(
        metadata=field_doc(
            "each output the last counted run wrote against eager's (below); `null` when there are none",
            lambda v: isinstance(v, list),  # and OutputDiff.from_json checks each
        ),
        default=None,
    )
    max_abs_diff: float | None = field(
        metadata=field_doc(
            "the largest absolute difference from eager over all outputs (`null` without outputs)", is_float
        ),
        default=None,
    )
    within_tol: bool | None = field(
        metadata=field_doc("every output within the model's tolerance (`null` without outputs)", is_bool),
        default=None,
    )
    stage: str | None = field(
        metadata=field_doc(
            "the first stage of `export` → `build` → `run` → `numerics` that did not pass "
            "(`null` when all did)",
            is_str,
        ),
        default=None,
    )
    stage_status: dict[str, StageStatus] | None = field(
        metadata=field_doc(
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
        metadata=field_doc(
            "the full log of the failing export or build step, relative to the artifacts root "
            "(`null` otherwise)",
            is_str,
        ),
        default=None,
    )
    isolated: Isolated | None = field(
        metadata=field_doc(
            "the form's last isolated check (`deploytui ship FORM --check`, below); `null` if never",
            lambda v: isinstance(v, dict),  # and Isolated.from_json checks it
        ),
        default=None,
    )
    stderr_tail: list[str] = field(
        metadata=field_doc("last lines of the last run's stderr", is_strs), default_factory=list
    )
    n: int = field(
        metadata=field_doc("counted runs asked for (when `ok`, `wall_s` holds that many)", is_int), default=0
    )
    warmup: int = field(metadata=field_doc("warm-up runs before them (not counted)", is_int), default=0)
    measured_at: str | None = field(
        metadata=field_doc(
            "when it was measured: local time with UTC offset, to the second (`2026-01-02T03:04:05+0000`)",
            is_str,
        ),
        default_factory=stamp,
    )
    forwards: Forwards | None = field(
        metadata=field_doc(
            "the per-forward times of the runner's timed forwards (below); `null` when none ran",
            lambda v: isinstance(v, dict),  # and Forwards.from_json checks it
        ),
        default=None,
    )
    threads: Threads | None = field(
        metadata=field_doc(
            "`--threads` asked, reported by the runtime, and measured (below); `null` when not run",
            lambda v: isinstance(v, dict),  # and Threads.from_json checks it
        ),
        default=None,
    )
    batch: int | None = field(
        metadata=field_doc(
            "the inputs' dim 0 when run at a batch size (`bench --batch`: the example's first item "
            "repeated); `null`: the example as built",
            is_int,
        ),
        default=None,
    )
    accuracy: Accuracy | None = field(
        metadata=field_doc(
            "a lower-precision variant (int8): its accuracy against eager over the example inputs "
            "and a fixed-seed set, judged by its budget (below); `null` for fp32 forms",
            lambda v: isinstance(v, dict),  # and Accuracy.from_json checks it
        ),
        default=None,
    )
    task: TaskScore | None = field(
        metadata=field_doc(
            "with labelled `--data`: the task's metric (top-1) of this form and of eager on the data's "
            "evaluation part, the drop and its interval (below); `null` otherwise",
            lambda v: isinstance(v, dict),  # and TaskScore.from_json checks it
        ),
        default=None,
    )
    target: Where | None = field(
        metadata=field_doc(
            "where it ran: `null` on this machine, else the target (`bench --target`) and its facts (below)",
            lambda v: isinstance(v, dict),  # and Where.from_json checks it
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
            if not is_samples(data[name]):
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
        if "task" in values:
            values["task"] = TaskScore.from_json(values["task"])
        if "target" in values:
            values["target"] = Where.from_json(values["target"])
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
