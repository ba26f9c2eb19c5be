"""Choose: the reference page's "how to choose" (怎么选) computed for one model from what was
measured. Pure: no files, no Textual, no torch. Its input is one `FormFacts` per form (what is
stored of it for the model on this machine; `choose_facts.read` is the one place that reads the
stores), its output an `Answer` that `deploytui choose`, the report's "How to choose" and the
app's Choose screen only render.

A `Figure` is one named reader of a form's facts (start-up, ship size, …): a value, or why there
is none ("not measured yet: run deploytui bench KEY"). A `Rule` is one kind of constraint:
a figure, a comparison and its wording ("ship 438.0 MiB > 50.0 MiB"); a `Constraint` is a rule
with the user's limit. A form qualifies when it meets every constraint of the `Request` (the
user's, in their order, then "runs here" and, unless the user gave an accuracy budget, "within
the model's tolerance"); every other form carries the first constraint it breaks or, breaking
none, the first figure not measured yet. The qualifying forms are ranked by one figure (the
first the user constrained, else start-up; ties share a rank and fall back on start-up, ship,
peak RSS, then the registry's order), and the Pareto front of start-up × ship (× p99 once every
candidate has one) is marked.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from deploytui.core import units
from deploytui.families import registry
from deploytui.spec import forms
from deploytui.spec.a1_page import Claim

MET, BROKEN, UNKNOWN = "met", "broken", "unknown"
# a form's build state, as FormFacts.built holds it
BUILT, NOT_APPLICABLE, BUILD_FAILED, NOT_BUILT = "built", "not-applicable", "failed", "not-built"


@dataclass(frozen=True)
class FormFacts:
    """What is stored of one form for one model on this machine (None: nothing stored)."""

    key: str
    title: str
    runtime: str  # a runtime key of the registry (registry.RUNTIME_TITLES)
    python: bool  # its runtime is a Python interpreter with packages
    files: int  # how many files ship (model files + program)
    order: int  # its place in the registry: the last tie-break
    built: str = NOT_BUILT  # BUILT, NOT_APPLICABLE, BUILD_FAILED or NOT_BUILT
    built_why: str = ""  # why it is not built (availability's words)
    ran: str = ""  # the stored run: "ok", "failed", or "" when none is stored
    run_error: str = ""
    runs: int = 0  # counted runs of the stored run
    measured_at: str | None = None
    startup_s: float | None = None  # median wall time, spawn to exit
    peak_rss_bytes: float | None = None  # median peak RSS
    max_abs_diff: float | None = None  # against eager
    within_tol: bool | None = None
    tolerance: str = ""  # "atol 1e-05, rtol 1e-05"
    files_bytes: int | None = None  # model files + program, as the build recorded them
    runtime_bytes: int | None = None  # the runtime as the build probed it
    runtime_missing: str = ""  # why there is no runtime size
    isolated: bool | None = None  # the last `deploytui ship KEY --check` passed
    isolated_reason: str = ""
    bundle_bytes: int | None = None  # the bundle's .tar.gz
    # the precision axis: a variant (int8) is judged by its accuracy budget, not the tolerance
    precision: str = "fp32"
    within_budget: bool | None = None  # a variant's stored run: within its accuracy budget
    top1: float | None = None  # a variant's least top-1 agreement with eager (class-score outputs)
    cosine: float | None = None  # a variant's least cosine similarity with eager
    # `bench --batch` cells: per batch size (p99 s, items/s), the best over the thread counts run
    serving: dict[int, tuple[float, float]] = field(default_factory=dict)
    serving_refused: dict[int, str] = field(default_factory=dict)  # batch -> why no cell ran there
    # the build state of what the cells run on (its dynamic-batch exports where it has them,
    # forms.for_batch), judged like `built`: a form built only for serving is measured by its cells
    serving_built: str = NOT_BUILT
    serving_built_why: str = ""


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
        return Reading(missing=f.built_why or "not built yet: run deploytui build")
    return Reading(missing=f.built_why or f.built, broken=True)


def _ran(value: Callable[[FormFacts], Any]) -> Reader:
    """A figure of the stored run: missing while the form is not built or never ran here."""

    def read(f: FormFacts, _limit: Any) -> Reading:
        if (why := _built(f)) is not None:
            return why
        if not f.ran:
            return Reading(missing=f"not measured yet: run deploytui bench {f.key}")
        if f.ran != "ok":
            return Reading(missing=f"its last run failed: {f.run_error}", broken=True)
        got = value(f)
        return Reading(got) if got is not None else Reading(missing=f"not stored by its run: {f.key}")

    return read


def _ship(f: FormFacts, _limit: Any) -> Reading:
    """Model files + program + runtime (the build's sizes and its runtime probe)."""
    if f.built == NOT_APPLICABLE or f.files_bytes is None:
        return _built(f) or Reading(missing="not built yet: run deploytui build")
    if f.runtime_bytes is None:
        return Reading(missing=f.runtime_missing or "runtime not probed yet: run deploytui build")
    return Reading(f.files_bytes + f.runtime_bytes)


def _isolated(f: FormFacts, _limit: Any) -> Reading:
    if f.isolated is None:
        return _built(f) or Reading(missing=f"not checked yet: run deploytui ship {f.key} --check")
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
        return Reading(
            missing=f"not measured yet: {what} at batch {batch} (run deploytui bench {f.key} --batch {batch})"
        )

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
    """How much top-1 accuracy it gives up against eager: a variant's measured top-1 disagreement;
    an fp32 form within the model's tolerance gives up none (its outputs are eager's to atol)."""
    if f.precision == "fp32":
        return 0.0 if f.within_tol else None
    return None if f.top1 is None else round(1.0 - f.top1, 6)


def _drop(f: FormFacts, limit: Any) -> Reading:
    got = _ran(_accuracy_drop)(f, limit)
    if got.missing.startswith("not stored by its run"):
        if f.precision == "fp32":
            return Reading(
                missing="outside the model's tolerance: its accuracy was not evaluated", broken=True
            )
        if f.cosine is None:
            return Reading(missing=f"no accuracy stored by its run: run deploytui bench {f.key}")
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
ACCURACY_DROP = Figure("accuracy_drop", "accuracy drop", _drop, lambda v: f"{v * 100:.2g} %")
FIGURES: tuple[Figure, ...] = (STARTUP, RSS, SHIP, ISOLATED, DIFF, P99, THROUGHPUT, ACCURACY_DROP)
# what the answer shows of every form, in this order
SHOWN: tuple[Figure, ...] = (STARTUP, RSS, SHIP, ISOLATED, DIFF)


# ---- rules: a figure, a comparison, its wording ------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """One kind of constraint. `key` is the CLI's flag (without --) and the JSON's name; `parse`
    reads the user's text into a limit (ValueError with the reason), `says` states it, `meets`
    compares a figure's value with it and `broken` says by how much it is not met."""

    key: str
    figure: Figure
    help: str
    meets: Callable[[Any, Any], bool]
    broken: Callable[[Any, Any], str]
    says: Callable[[Any], str]
    parse: Callable[[str], Any] = lambda _text: None  # a switch: no value
    example: str = ""  # a value as the user writes it ("" for a switch)
    metavar: str = ""  # what the value is, for the CLI's help
    accuracy: bool = False  # an accuracy budget: replaces "within the model's tolerance"


def _bound(limit: Any) -> float:
    return float(limit.value if isinstance(limit, Batched) else limit)


def _at(limit: Any) -> str:
    return f" at batch {limit.batch}" if isinstance(limit, Batched) else ""


def _limit(
    key: str,
    fig: Figure,
    parse: Callable[[str], Any],
    example: str,
    help: str,
    metavar: str,
    *,
    least: bool = False,
    accuracy: bool = False,
) -> Rule:
    """A figure at most (or, `least`, at least) the user's limit."""
    sign = "≥" if least else "≤"
    worse = "<" if least else ">"
    return Rule(
        key,
        fig,
        help,
        meets=lambda v, lim: v >= _bound(lim) if least else v <= _bound(lim),
        broken=lambda v, lim: f"{fig.label}{_at(lim)} {fig.text(v)} {worse} {fig.text(_bound(lim))}",
        says=lambda lim: f"{fig.label}{_at(lim)} {sign} {fig.text(_bound(lim))}",
        parse=parse,
        example=example,
        metavar=metavar,
        accuracy=accuracy,
    )


def _must(key: str, fig: Figure, help: str, broken: str, says: str) -> Rule:
    """A switch: the figure must be true."""
    return Rule(
        key,
        fig,
        help,
        meets=lambda v, _lim: bool(v),
        broken=lambda _v, _lim: broken,
        says=lambda _lim: says,
    )


def _batched(parse: Callable[[str], float]) -> Callable[[str], Batched]:
    """`20ms@8`: a value at a batch size (batch 1 when no @)."""

    def read(text: str) -> Batched:
        value, _, batch = text.partition("@")
        if (batch and not batch.strip().isdigit()) or batch.strip() == "0":
            raise ValueError(f"batch size {batch.strip()!r} not understood: a whole number ≥ 1")
        return Batched(parse(value), int(batch) if batch.strip() else 1)

    return read


def _rate(text: str) -> float:
    """`500/s` or `500`: items per second."""
    t = text.strip()
    try:
        return _number(t.removesuffix("/s"))
    except ValueError:
        raise ValueError(f"throughput {t!r} not understood: items per second (500/s)") from None


def _fraction(text: str) -> float:
    """`1%` or `0.01`."""
    t = text.strip()
    try:
        return float(t[:-1]) / 100 if t.endswith("%") else float(t)
    except ValueError:
        raise ValueError(
            f"accuracy drop {t!r} not understood: a fraction (0.01) or a percentage (1%)"
        ) from None


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{text.strip()!r} is not a number (1e-5, 0.001)") from None
    if not value >= 0:
        raise ValueError(f"{text.strip()!r}: need a number ≥ 0")
    return value


def _runtimes(text: str) -> frozenset[str]:
    names = {t.strip() for t in text.split(",") if t.strip()}
    unknown = sorted(names - set(registry.RUNTIME_TITLES))
    if unknown or not names:
        known = ", ".join(registry.RUNTIME_TITLES)
        raise ValueError(f"unknown runtime {', '.join(unknown) or '(none given)'}; known: {known}")
    return frozenset(names)


def _runtime_says(limit: frozenset[str]) -> str:
    """`runtime libtorch or none`, or `runtime not python-torch` when that is shorter."""
    barred = [r for r in registry.RUNTIME_TITLES if r not in limit]
    if barred and len(barred) < len(limit):
        return "runtime not " + " nor ".join(barred)
    return "runtime " + " or ".join(sorted(limit))


PYTHON_FIG = Figure(
    "python", "Python", lambda f, _l: Reading(f.python), lambda v: "needs Python" if v else "no Python"
)
RUNTIME_FIG = Figure("runtime", "runtime", lambda f, _l: Reading(f.runtime), str)

RULES: tuple[Rule, ...] = (
    Rule(
        "no-python",
        PYTHON_FIG,
        "Python is not allowed on the target",
        meets=lambda v, _lim: not v,
        broken=lambda _v, _lim: "needs Python",
        says=lambda _lim: "no Python",
    ),
    Rule(
        "runtime",
        RUNTIME_FIG,
        f"the runtimes allowed, comma-separated: {', '.join(registry.RUNTIME_TITLES)}",
        meets=lambda v, lim: v in lim,
        broken=lambda v, _lim: f"runtime {v} not allowed",
        says=_runtime_says,
        parse=_runtimes,
        example="libtorch,none",
        metavar="RUNTIMES",
    ),
    _limit(
        "max-ship",
        SHIP,
        units.parse_size,
        "50MiB",
        "largest ship size: model files + program + runtime",
        "SIZE",
    ),
    _limit("max-startup", STARTUP, units.parse_seconds, "50ms", "longest start-up, spawn to exit", "TIME"),
    _limit("max-rss", RSS, units.parse_size, "200MiB", "largest peak RSS", "SIZE"),
    _limit(
        "max-p99",
        P99,
        _batched(units.parse_seconds),
        "20ms@8",
        "longest p99 latency at a batch size",
        "TIME@BATCH",
    ),
    _limit(
        "min-throughput",
        THROUGHPUT,
        _batched(_rate),
        "1000/s@8",
        "least throughput at a batch size",
        "RATE@BATCH",
        least=True,
    ),
    _must(
        "isolated",
        ISOLATED,
        "must have passed the isolated ship check (deploytui ship FORM --check)",
        "✗ isolated",  # the reason is added where the facts are at hand
        "runs isolated",
    ),
    _limit(
        "max-diff",
        DIFF,
        _number,
        "1e-5",
        "largest absolute difference from eager (in place of the model's tolerance)",
        "ATOL",
        accuracy=True,
    ),
    _limit(
        "max-accuracy-drop",
        ACCURACY_DROP,
        _fraction,
        "1%",
        "an int8 variant's accuracy budget: the largest drop of its accuracy against fp32",
        "DROP",
        accuracy=True,
    ),
)
BY_KEY: dict[str, Rule] = {r.key: r for r in RULES}

# always checked after the user's constraints
RUNS = _must("runs", RUNS_HERE, "built and measured here", "does not run", "runs here")
TOLERANCE = _must(
    "within-tol",
    WITHIN_TOL,
    "outputs within the model's tolerance against eager (a variant: within its accuracy budget)",
    "outputs beyond the model's tolerance",
    "within the model's tolerance",
)

# what a qualifying answer can be ranked by: the figure's label -> the figure
RANKS: dict[str, Figure] = {
    "start-up": STARTUP,
    "ship": SHIP,
    "rss": RSS,
    "diff": DIFF,
    "p99": P99,
    "throughput": THROUGHPUT,
}


# ---- the request ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Constraint:
    rule: Rule
    limit: Any = None
    given: bool = True  # stated by the user (else one of the two always checked)

    def says(self) -> str:
        return str(self.rule.says(self.limit))


@dataclass(frozen=True)
class Request:
    """The user's constraints in their order, and what to rank by ("": the figure of the first
    ranking constraint, else start-up)."""

    constraints: tuple[Constraint, ...] = ()
    rank_by: str = ""

    def checks(self) -> tuple[Constraint, ...]:
        """The user's constraints, then "runs here" and, unless an accuracy budget is given,
        "within the model's tolerance"."""
        implicit = [Constraint(RUNS, given=False)]
        if not any(c.rule.accuracy for c in self.constraints):
            implicit.append(Constraint(TOLERANCE, given=False))
        return (*self.constraints, *implicit)

    def ranking(self) -> Figure:
        if self.rank_by:
            return RANKS[self.rank_by]
        ranking = RANKS.values()
        return next((c.rule.figure for c in self.constraints if c.rule.figure in ranking), STARTUP)

    def limit_of(self, fig: Figure) -> Any:
        return next((c.limit for c in self.constraints if c.rule.figure is fig), None)

    def says(self) -> str:
        return ", ".join(c.says() for c in self.constraints) or "no constraint given"


def request(given: Iterable[tuple[str, str]], rank_by: str = "") -> Request:
    """A request from (rule key, text) pairs in the user's order (a rule given again keeps its
    first place and its last value). ValueError names the rule whose text cannot be read."""
    limits: dict[str, Constraint] = {}
    for key, text in given:
        rule = BY_KEY.get(key)
        if rule is None:
            raise ValueError(f"unknown constraint {key!r}; known: {', '.join(BY_KEY)}")
        try:
            limit = rule.parse(text)
        except ValueError as e:
            raise ValueError(f"--{key}: {e}") from None
        limits[key] = Constraint(rule, limit)
    if rank_by and rank_by not in RANKS:
        raise ValueError(f"cannot rank by {rank_by!r}; one of: {', '.join(RANKS)}")
    return Request(tuple(limits.values()), rank_by)


# ---- the answer ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    """One constraint on one form: MET (text: the figure), BROKEN (text: by how much, or why the
    form cannot run) or UNKNOWN (text: what is not measured yet and how to measure it)."""

    rule: str
    outcome: str
    text: str


def evaluate(c: Constraint, f: FormFacts) -> Check:
    got = c.rule.figure.read(f, c.limit)
    if got.value is None:
        return Check(c.rule.key, BROKEN if got.broken else UNKNOWN, got.missing)
    if c.rule.meets(got.value, c.limit):
        return Check(c.rule.key, MET, c.rule.figure.text(got.value))
    text = c.rule.broken(got.value, c.limit)
    if c.rule is BY_KEY["isolated"] and f.isolated_reason:
        text = f"{text}: {first_words(_own_words(f.isolated_reason), 100)}"
    elif c.rule is TOLERANCE and f.precision != "fp32":
        text = f"outside its {f.precision} accuracy budget (cosine {_sig(f.cosine or 0)})"
    elif c.rule is TOLERANCE and f.max_abs_diff is not None:
        text = f"{text}: max|diff| {_sig(f.max_abs_diff)} ({f.tolerance})"
    return Check(c.rule.key, BROKEN, text)


@dataclass(frozen=True)
class Verdict:
    """One form under the request: its checks in order, and where it stands."""

    form: FormFacts
    checks: tuple[Check, ...]
    rank: int | None = None  # 1, 2, 2, 4 …: qualifying forms only; ties share a rank
    front: bool = False  # on the Pareto front of the qualifying forms

    @property
    def qualifies(self) -> bool:
        return all(c.outcome == MET for c in self.checks)

    @property
    def first(self) -> Check | None:
        """The first constraint it breaks, else the first it cannot be judged on; None if it qualifies."""
        return next((c for c in self.checks if c.outcome == BROKEN), None) or next(
            (c for c in self.checks if c.outcome == UNKNOWN), None
        )

    @property
    def why(self) -> str:
        first = self.first
        return first.text if first else ""

    def missing(self) -> list[str]:
        """Every constraint it cannot be judged on yet, with what to run."""
        return [c.text for c in self.checks if c.outcome == UNKNOWN]


def figures(f: FormFacts, req: Request | None = None) -> dict[str, Reading]:
    """Every figure of the form (a batch from the request's constraint where one is given)."""
    req = req or Request()
    return {fig.key: fig.read(f, req.limit_of(fig)) for fig in FIGURES}


def figure_text(fig: Figure, f: FormFacts, req: Request | None = None, compact: bool = False) -> str:
    """A figure as the answer shows it: its value, `–` when none; unless `compact`, ship with its
    parts and isolated with its bundle or its reason."""
    got = fig.read(f, (req or Request()).limit_of(fig))
    if got.value is None:
        return "–"
    if compact:
        return fig.text(got.value)
    if fig is SHIP:
        files, runtime = units.human(f.files_bytes or 0), units.human(f.runtime_bytes or 0)
        return f"{units.human(got.value)} (files {files} + runtime {runtime})"
    if fig is ISOLATED and got.value and f.bundle_bytes:
        return f"✓ {units.human(f.bundle_bytes)} .tar.gz"
    if fig is ISOLATED and not got.value:
        return f"✗ {first_words(_own_words(f.isolated_reason), 48)}".strip()
    return fig.text(got.value)


@dataclass(frozen=True)
class Answer:
    model: str
    request: Request
    ranked_by: Figure
    chosen: tuple[Verdict, ...]  # the qualifying forms, best first
    others: tuple[Verdict, ...]  # every other form, in the registry's order
    front_axes: tuple[Figure, ...]  # the Pareto front's axes

    @property
    def verdicts(self) -> tuple[Verdict, ...]:
        return (*self.chosen, *self.others)

    def headline(self) -> str:
        n, total = len(self.chosen), len(self.verdicts)
        what = (
            f"{n} of {total} forms meet every constraint"
            if n
            else f"none of {total} forms meets every constraint"
        )
        return f"{self.model}: {what} ({self.request.says()}); ranked by {self.ranked_by.label}"

    def front(self) -> list[str]:
        return [v.form.key for v in self.chosen if v.front]

    def points(self) -> list[tuple[str, float, float, bool, bool]]:
        """(form, start-up s, ship bytes, qualifies, on the front) of every form with both figures:
        what the Pareto chart draws."""
        out = []
        for v in self.verdicts:
            s, b = STARTUP.read(v.form, None).value, SHIP.read(v.form, None).value
            if s is not None and b is not None:
                out.append((v.form.key, float(s), float(b), v.qualifies, v.front))
        return out

    def to_json(self) -> dict[str, Any]:
        def form(v: Verdict) -> dict[str, Any]:
            got = figures(v.form, self.request)
            first = v.first
            return {
                "form": v.form.key,
                "title": v.form.title,
                "runtime": v.form.runtime,
                "python": v.form.python,
                "rank": v.rank,
                "front": v.front,
                "breaks": first.rule if first and first.outcome == BROKEN else None,
                "why": v.why or None,
                "not_measured": v.missing(),
                "figures": {k: r.value for k, r in got.items()},
                "files_bytes": v.form.files_bytes,
                "runtime_bytes": v.form.runtime_bytes,
                "figures_missing": {k: r.missing for k, r in got.items() if r.value is None},
                "checks": [{"rule": c.rule, "outcome": c.outcome, "text": c.text} for c in v.checks],
                "measured_at": v.form.measured_at,
            }

        return {
            "model": self.model,
            "constraints": [
                {"rule": c.rule.key, "limit": _jsonable(c.limit), "says": c.says(), "given": c.given}
                for c in self.request.checks()
            ],
            "ranked_by": self.ranked_by.label,
            "pareto": {"axes": [f.label for f in self.front_axes], "front": self.front()},
            "chosen": [form(v) for v in self.chosen],
            "others": [form(v) for v in self.others],
        }


def _jsonable(limit: Any) -> Any:
    if isinstance(limit, Batched):
        return {"value": limit.value, "batch": limit.batch}
    if isinstance(limit, frozenset):
        return sorted(limit)
    return limit


def _value(fig: Figure, f: FormFacts, limit: Any = None) -> float | None:
    v = fig.read(f, limit).value
    return None if v is None else float(v)


def _order(v: Verdict, fig: Figure, limit: Any) -> tuple[Any, ...]:
    """Sort key: the ranking figure (missing last), then start-up, ship, peak RSS, the registry."""
    first = _value(fig, v.form, limit)
    head = (1, 0.0) if first is None else (0, -first if fig.descending else first)
    rest = tuple(_value(g, v.form) for g in (STARTUP, SHIP, RSS))
    return (*head, *(math.inf if x is None else x for x in rest), v.form.order)


def pareto(points: dict[str, tuple[float, ...]]) -> set[str]:
    """The keys no other point dominates (at most on every axis, less on one); equal points are
    both on the front."""

    def dominates(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
        return all(x <= y for x, y in zip(a, b, strict=True)) and a != b

    return {k for k, p in points.items() if not any(dominates(q, p) for q in points.values())}


def choose(facts: Iterable[FormFacts], req: Request, model: str = "") -> Answer:
    checks = req.checks()
    verdicts = [Verdict(f, tuple(evaluate(c, f) for c in checks)) for f in facts]
    fig = req.ranking()
    limit = req.limit_of(fig)
    chosen = sorted((v for v in verdicts if v.qualifies), key=lambda v: _order(v, fig, limit))
    ranked: list[Verdict] = []
    for i, v in enumerate(chosen):
        value = _value(fig, v.form, limit)
        tie = bool(ranked) and value is not None and value == _value(fig, ranked[-1].form, limit)
        ranked.append(replace(v, rank=ranked[-1].rank if tie else i + 1))
    axes = [STARTUP, SHIP]
    p99 = req.limit_of(P99)
    if ranked and all(_value(P99, v.form, p99) is not None for v in ranked):
        axes.append(P99)
    coords = {v.form.key: tuple(_value(a, v.form, req.limit_of(a)) for a in axes) for v in ranked}
    front = pareto(
        {k: tuple(float(x) for x in p if x is not None) for k, p in coords.items() if None not in p}
    )
    ranked = [replace(v, front=v.form.key in front) for v in ranked]
    others = sorted((v for v in verdicts if not v.qualifies), key=lambda v: v.form.order)
    return Answer(model, req, fig, tuple(ranked), tuple(others), tuple(axes))


# ---- the page's three situations, for this model ------------------------------------------------


@dataclass(frozen=True)
class Situation:
    """One of the page's three situations, as constraints a user would give."""

    key: str
    title: str
    given: tuple[tuple[str, str], ...]

    def request(self) -> Request:
        return request(self.given)

    def flags(self) -> str:
        """The constraints as `deploytui choose`'s flags."""
        return " ".join(f"--{key} {text}".strip() for key, text in self.given)


PY_RUNTIMES = ",".join(sorted(registry.RUNTIME_DISTRIBUTIONS))
LIBRARIES = ",".join(
    sorted(set(registry.RUNTIME_TITLES) - set(registry.RUNTIME_DISTRIBUTIONS) - {forms.NO_RUNTIME})
)
SITUATIONS: tuple[Situation, ...] = (
    Situation("python", "Serve from Python, the model's source at hand", (("runtime", PY_RUNTIMES),)),
    Situation(
        "no-python", "Leave Python, keep a runtime library", (("no-python", ""), ("runtime", LIBRARIES))
    ),
    Situation("no-runtime", "One file, no runtime", (("runtime", forms.NO_RUNTIME), ("isolated", ""))),
)


def situation_lines(answer: Answer, others: int = 3) -> list[str]:
    """The situation's answer in words: the first form with its figures, then the next few with
    how they compare to it; or why none qualifies."""
    if not answer.chosen:
        near = [v for v in answer.others if v.first and v.first.outcome == UNKNOWN]
        lines = ["No form qualifies on what is stored."]
        lines += [f"{v.form.key}: {v.why}" for v in near[:others]]
        return lines
    best = answer.chosen[0]
    lines = [f"{best.form.key} ({best.form.title}): " + _figures_line(best.form)]
    s0, r0 = _value(STARTUP, best.form), _value(RSS, best.form)
    for v in answer.chosen[1 : 1 + others]:
        s, r = _value(STARTUP, v.form), _value(RSS, v.form)
        parts = [f"start-up {units.ms(s)}"]
        if s is not None and s0:
            parts[0] += f" ({s / s0:.2f}× {best.form.key}'s)"
        if r is not None and r0 is not None:
            parts.append(f"peak RSS {'+' if r >= r0 else '−'}{units.human(abs(r - r0))}")
        lines.append(f"then {v.form.key}: " + ", ".join(parts))
    return lines


def _figures_line(f: FormFacts) -> str:
    shown = [f"{fig.label} {figure_text(fig, f)}" for fig in SHOWN if figure_text(fig, f) != "–"]
    return ", ".join([*shown, "ships as one file" if f.files == 1 else f"ships as {f.files} files"])


# ---- the page's claims, checked on this model's figures ------------------------------------------


def _two(fig: Figure, op: Callable[[float, float], float]) -> Callable[[FormFacts, FormFacts], Reading]:
    def read(a: FormFacts, b: FormFacts) -> Reading:
        ra, rb = fig.read(a, None), fig.read(b, None)
        if ra.value is None:
            return ra
        if rb.value is None:
            return rb
        return Reading(op(float(ra.value), float(rb.value)))

    return read


def _runtime(a: FormFacts, _b: FormFacts) -> Reading:
    return Reading(a.runtime_bytes, a.runtime_missing or "runtime not probed yet: run deploytui build")


# what a claim measures (a1_page.Claim.measure) -> its reading from the claim's forms (a, b) and
# how it is written; b is the second form of a comparison (else a again)
MEASURES: dict[str, tuple[Callable[[FormFacts, FormFacts], Reading], Callable[[Any], str]]] = {
    "startup": (lambda a, _b: STARTUP.read(a, None), units.ms),
    "startup-ratio": (_two(STARTUP, lambda x, y: x / y if y else math.inf), lambda v: f"{v:.2f}×"),
    "rss-delta": (_two(RSS, lambda x, y: x - y), units.human),
    "diff": (lambda a, _b: DIFF.read(a, None), _sig),
    "runtime": (_runtime, units.human),
    "isolated": (lambda a, _b: ISOLATED.read(a, None), _isolated_text),
}

ABOUT = 0.3  # "about X" agrees within ±30 %


def agrees(kind: str, ours: Any, page: Any) -> bool:
    """`about`: within ±ABOUT of the page's value; `at-least`; `equal`."""
    if kind == "about":
        return bool(abs(ours - page) <= ABOUT * abs(page))
    if kind == "at-least":
        return bool(ours >= page)
    return bool(ours == page)


AGREES, DIFFERS, NOT_MEASURED = "agrees", "differs", "not measured yet"


@dataclass(frozen=True)
class Judged:
    """One of the page's claims against our figures."""

    text: str  # the claim
    page: str  # the page's value, as it gives it
    ours: str  # ours, or what is not measured yet and how to measure it
    verdict: str  # AGREES, DIFFERS (`differs: ours is higher` for an "about"), NOT_MEASURED


def judge(claim: Claim, facts: dict[str, FormFacts]) -> Judged:
    a, b = (facts.get(k) for k in (*claim.forms, claim.forms[0])[:2])
    if a is None or b is None:
        return Judged(claim.text, claim.page_text, "no such form in the registry", NOT_MEASURED)
    read, text = MEASURES[claim.measure]
    got = read(a, b)
    if got.value is None:
        return Judged(claim.text, claim.page_text, got.missing, NOT_MEASURED)
    if agrees(claim.agree, got.value, claim.page):
        verdict = AGREES
    elif claim.agree == "about":
        verdict = f"{DIFFERS}: ours is {'higher' if got.value > claim.page else 'lower'}"
    else:
        verdict = DIFFERS
    return Judged(claim.text, claim.page_text, text(got.value), verdict)


def pick_verdict(page_forms: tuple[str, ...], answer: Answer) -> Judged:
    """The page's recommendation for a situation against our first form for it: agrees when it is
    one of the page's; not measured yet while one of the page's forms cannot be judged; else
    differs, with where the page's best-placed form stands."""
    page = ", ".join(page_forms)
    theirs = [v for v in answer.verdicts if v.form.key in page_forms]
    if answer.chosen and answer.chosen[0].form.key in page_forms:
        return Judged("recommended form", page, answer.chosen[0].form.key, AGREES)
    unknown = [v for v in theirs if not v.qualifies and v.first and v.first.outcome == UNKNOWN]
    if unknown or not answer.chosen:
        why = f"{unknown[0].form.key}: {unknown[0].why}" if unknown else "none qualifies on what is stored"
        return Judged("recommended form", page, why, NOT_MEASURED)
    ours = answer.chosen[0].form.key
    placed = [v for v in theirs if v.qualifies]
    if placed:
        where = f"{placed[0].form.key} ranks {placed[0].rank}"
    else:
        where = "; ".join(f"{v.form.key}: {v.why}" for v in theirs) or "none of the page's forms is here"
    return Judged("recommended form", page, f"{ours} ({where})", DIFFERS)


def by_key(facts: Iterable[FormFacts]) -> dict[str, FormFacts]:
    return {f.key: f for f in facts}


def _own_words(reason: str) -> str:
    """A failed check's reason without its `exit N: error:` head: the program's own words."""
    return re.sub(r"^(exit -?\d+: )?(error: )?", "", reason)


def first_words(text: str, n: int = 80) -> str:
    """One line of at most n characters (a long reason cut with …)."""
    line = re.sub(r"\s+", " ", text).strip()
    return line if len(line) <= n else line[: n - 1] + "…"
