"""The answer: each form's checks against the request (`Verdict`), its figures as the answer
shows them, and the `Answer` with its JSON."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from deploytui.core import units
from deploytui.decisions.choose.constraints import BY_KEY, TOLERANCE, Constraint, Request
from deploytui.decisions.choose.formfacts import BROKEN, MET, UNKNOWN, FormFacts
from deploytui.decisions.choose.readers import (
    FIGURES,
    ISOLATED,
    SHIP,
    STARTUP,
    Batched,
    Figure,
    Reading,
    _own_words,
    _sig,
    first_words,
)

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
