"""The figures: one named reader each of a form's facts (start-up, ship size, …), giving a value or
why there is none ("not measured yet: run deploytui bench KEY"), and their wording."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from deploytui.core import shorten, units
from deploytui.core.workspace import hint
from deploytui.decisions.choose.formfacts import BUILT, NOT_APPLICABLE, NOT_BUILT, FormFacts

# ---- figures: one reader each --------------------------------------------------------------


@dataclass(frozen=True)
class Reading:
    """A figure of one form: its value, or why there is none (`broken`: the reason itself rules
    the form out, e.g. its build or its last run failed)."""

    value: Any = None
    missing: str = ""
    broken: bool = False


Reader = Callable[[FormFacts, Any], Reading]  # Any: the constraint's limit (a batch size), or None


class Batched(NamedTuple):
    """A limit at a batch size (p99, throughput)."""

    value: float
    batch: int


def _built(f: FormFacts) -> Reading | None:
    """Why a built artifact's figure is missing, or None when the form is built."""
    if f.built == BUILT:
        return None
    if f.built == NOT_BUILT:
        return Reading(missing=f.built_why or f"not built yet: run {_cmd(f, 'build')}")
    return Reading(missing=f.built_why or f.built, broken=True)


def _cmd(f: FormFacts, command: str, *words: str) -> str:
    """`deploytui COMMAND` for the facts' model (`--model REF` but for the default model) and where
    they were measured (`--target NAME`, none here), then `words`."""
    return hint(f.model, command, f"--target {f.target}" if f.target and command == "bench" else "", *words)


def _ran(value: Callable[[FormFacts], Any]) -> Reader:
    """A figure of the stored run: missing while the form is not built or never ran here."""

    def read(f: FormFacts, _limit: Any) -> Reading:
        if (why := _built(f)) is not None:
            return why
        if not f.ran:
            return Reading(missing=f"not measured yet: run {_cmd(f, 'bench', f.key)}")
        if f.ran != "ok":
            return Reading(missing=f"its last run failed: {f.run_error}", broken=True)
        got = value(f)
        return Reading(got) if got is not None else Reading(missing=f"not stored by its run: {f.key}")

    return read


def _ship(f: FormFacts, _limit: Any) -> Reading:
    """Model files + program + runtime (the build's sizes and its runtime probe)."""
    if f.built == NOT_APPLICABLE or f.files_bytes is None:
        return _built(f) or Reading(missing=f"not built yet: run {_cmd(f, 'build')}")
    if f.runtime_bytes is None:
        return Reading(missing=_runtime_missing(f))
    return Reading(f.files_bytes + f.runtime_bytes)


def _runtime_missing(f: FormFacts) -> str:
    """Why the facts hold no runtime size: the probe's own words, else that it never ran."""
    return f.runtime_missing or f"runtime not probed yet: run {_cmd(f, 'build')}"


def _isolated(f: FormFacts, _limit: Any) -> Reading:
    if f.isolated is None:
        return _built(f) or Reading(missing=f"not checked yet: run {_cmd(f, 'ship', f.key, '--check')}")
    return Reading(f.isolated)


def _served(index: int, what: str) -> Reader:
    """A serving figure at the limit's batch size (1 without one): the form's stored cells."""

    def read(f: FormFacts, limit: Any) -> Reading:
        batch = limit.batch if isinstance(limit, Batched) else 1
        if f.built == NOT_APPLICABLE:
            return _built(f) or Reading()
        # the cells are judged with what they ran on, not with the fixed-shape build
        gone = _built(replace(f, built=f.serving_built, built_why=f.serving_built_why))
        if batch in f.serving:
            return gone or Reading(f.serving[batch][index])
        if batch in f.serving_refused:
            return Reading(missing=f"batch {batch} refused: {f.serving_refused[batch]}", broken=True)
        if gone is not None and gone.broken:
            return gone
        run = _cmd(f, "bench", f.key, "--batch", str(batch))
        return Reading(missing=f"not measured yet: {what} at batch {batch} (run {run})")

    return read


def _or_cells(read: Reader) -> Reader:
    """A stored run's verdict, or, where the form never ran as built, its serving cells': a cell
    that ran counts only within the tolerance, on artifacts that are still there (a form built
    for serving alone, its dynamic-batch exports, runs here by them)."""

    def either(f: FormFacts, limit: Any) -> Reading:
        got = read(f, limit)
        if got.missing and not got.broken and f.serving and f.serving_built == BUILT:
            return Reading(True)
        return got

    return either


def _judged(f: FormFacts) -> bool | None:
    """Its outputs pass: a variant's within its accuracy budget, an fp32 form's within the
    model's tolerance."""
    return f.within_budget if f.precision != "fp32" else f.within_tol


def _accuracy_drop(f: FormFacts) -> float | None:
    """How much top-1 accuracy it gives up against eager: with labelled data, the task's top-1
    drop (eager's minus its own on the same rows); else a variant's measured top-1 disagreement;
    an fp32 form within the model's tolerance gives up none (its outputs are eager's to atol)."""
    if f.task_drop is not None:
        return round(f.task_drop, 6)
    if f.precision == "fp32":
        return 0.0 if f.within_tol else None
    return None if f.top1 is None else round(1.0 - f.top1, 6)


def _drop(f: FormFacts, limit: Any) -> Reading:
    if f.task_missing and f.ran:
        return Reading(
            missing=f"no top-1 on {f.task_data} stored: run {_cmd(f, 'bench', f.key, '--data', f.task_data)}"
        )
    got = _ran(_accuracy_drop)(f, limit)
    if got.missing.startswith("not stored by its run"):
        if f.precision == "fp32":
            return Reading(
                missing="outside the model's tolerance: its accuracy was not evaluated", broken=True
            )
        if f.cosine is None:
            return Reading(missing=f"no accuracy stored by its run: run {_cmd(f, 'bench', f.key)}")
        return Reading(
            missing=f"no class-score output: top-1 agreement does not apply (cosine {f.cosine:.4g})"
        )
    return got


def _sig(v: float) -> str:
    return "0" if v == 0 else f"{v:.3g}"


def _isolated_text(v: bool) -> str:
    return "✓" if v else "✗"


@dataclass(frozen=True)
class Figure:
    """One figure of a form: its JSON key, its label in the answer, its reader and its wording."""

    key: str
    label: str
    read: Reader
    text: Callable[[Any], str]
    descending: bool = False  # more is better


STARTUP = Figure("startup_s", "start-up", _ran(lambda f: f.startup_s), units.ms)
RSS = Figure("peak_rss_bytes", "peak RSS", _ran(lambda f: f.peak_rss_bytes), units.human)
SHIP = Figure("ship_bytes", "ship", _ship, units.human)
DIFF = Figure("max_abs_diff", "max|diff|", _ran(lambda f: f.max_abs_diff), _sig)
WITHIN_TOL = Figure("within_tol", "tolerance", _or_cells(_ran(_judged)), lambda v: "ok" if v else "✗")
ISOLATED = Figure("isolated", "isolated", _isolated, _isolated_text)
RUNS_HERE = Figure("runs", "runs here", _or_cells(_ran(lambda f: True)), lambda v: "✓")
# the serving cells (`bench --batch`) and the variants' accuracy (int8): their stored runs
P99 = Figure("p99_s", "p99", _served(0, "p99 latency"), units.ms)
THROUGHPUT = Figure("throughput_per_s", "throughput", _served(1, "throughput"), lambda v: f"{v:,.0f}/s", True)
ACCURACY_DROP = Figure(
    "accuracy_drop", "accuracy drop", _drop, lambda v: f"{v * 100:.2g} %"
)  # percentage points
FIGURES: tuple[Figure, ...] = (STARTUP, RSS, SHIP, ISOLATED, DIFF, P99, THROUGHPUT, ACCURACY_DROP)
# what the answer shows of every form, in this order
SHOWN: tuple[Figure, ...] = (STARTUP, RSS, SHIP, ISOLATED, DIFF)


def _own_words(reason: str) -> str:
    """A failed check's reason without its `exit N: error:` head: the program's own words."""
    return re.sub(r"^(exit -?\d+: )?(error: )?", "", reason)


def first_words(text: str, n: int = 80) -> str:
    """One line of at most n characters (a long reason cut with …)."""
    line = re.sub(r"\s+", " ", text).strip()
    return shorten.end(line, n)
