"""Ranking the qualifying forms (ties share a rank and fall back on start-up, ship, peak RSS,
then the registry's order) and marking their Pareto front: `choose`."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from deploytui.decisions.choose.answer import Answer, Verdict, evaluate
from deploytui.decisions.choose.constraints import Request
from deploytui.decisions.choose.formfacts import FormFacts
from deploytui.decisions.choose.readers import P99, RSS, SHIP, STARTUP, Figure


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
