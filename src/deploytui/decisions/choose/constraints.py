"""The rules (a figure, a comparison and its wording: "ship 438.0 MiB > 50.0 MiB"), the user's
constraints read into a `Request`, and the two always checked after them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from deploytui.core import units
from deploytui.decisions.choose.readers import (
    ACCURACY_DROP,
    DIFF,
    ISOLATED,
    P99,
    RSS,
    RUNS_HERE,
    SHIP,
    STARTUP,
    THROUGHPUT,
    WITHIN_TOL,
    Batched,
    Figure,
    Reading,
)
from deploytui.families import registry

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
        "the largest accuracy drop against eager: with labelled --data, the task's top-1 drop on "
        "the data; else an int8 variant's top-1 disagreement with fp32",
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
