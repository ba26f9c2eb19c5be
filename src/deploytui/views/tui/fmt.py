"""Numbers and record fields as short strings for the screens. Pure functions, no Textual."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeGuard

from deploytui.core.record_parts import median

if TYPE_CHECKING:
    from deploytui.core.record import RunRecord

CHECK, CROSS, BANG, DASH = "✓", "✗", "!", "–"
__all__ = ["median"]  # the record's one median, for the screens


def minimum(values: list | None) -> float | None:
    vals = [v for v in (values or []) if isinstance(v, (int, float))]
    return min(vals) if vals else None


def ok_runs(rec: RunRecord | None) -> TypeGuard[RunRecord]:
    return rec is not None and rec.measured


def verdict_mark(rec: RunRecord | None) -> str:
    """✓ within tolerance (a variant: within its accuracy budget), ✗ beyond it, ! failed run,
    – not applicable (the form does not apply to this model or data: no failure), blank when
    never run."""
    if rec is None:
        return " "
    if rec.status == "not-applicable":
        return DASH
    if rec.status != "ok":
        return BANG
    if rec.accuracy is not None:
        return CHECK if rec.accuracy.within_budget else CROSS
    return CHECK if rec.within_tol else CROSS


def short_reason(why: str) -> str:
    """The first words of an availability reason, for a list row."""
    if not why:
        return ""
    if why.startswith("not built"):
        return "not built yet"
    if why.startswith("missing artifact"):
        return "missing file"
    head = why.split(":", 1)[0]
    return head[:14]
