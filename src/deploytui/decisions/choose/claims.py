"""The page's claims and its recommendations, checked on this model's figures."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from deploytui.core import units
from deploytui.decisions.choose.answer import Answer
from deploytui.decisions.choose.formfacts import UNKNOWN, FormFacts
from deploytui.decisions.choose.readers import (
    DIFF,
    ISOLATED,
    RSS,
    STARTUP,
    Figure,
    Reading,
    _isolated_text,
    _runtime_missing,
    _sig,
)
from deploytui.spec.a1_page import Claim

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
    return Reading(a.runtime_bytes, _runtime_missing(a))


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
