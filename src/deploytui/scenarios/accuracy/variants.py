"""How a lower-precision variant compares with the fp32 form it comes from (`Form.parent`): its
accuracy in words, and its size, start-up and steady latency as ratios to the parent's, from the
stored records (both measured here; a ratio whose figures are not both stored is None).
Standard library only: the report, the CLI and the app use it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from deploytui.core.record import RunRecord
from deploytui.core.record_parts import Accuracy

RATIOS = ("size", "startup", "steady")  # the JSON's keys, in order
RATIO_TITLES = {"size": "ship size", "startup": "start-up", "steady": "steady forward"}


def accuracy_text(acc: Accuracy) -> str:
    """`cos 0.99999, top-1 100 %, max|err| 0.0059, mean 0.0017 over 9 inputs: within budget (cosine
    ≥ 0.99, …)`: the worst output's figures and the verdict."""
    if not acc.outputs:
        return "no outputs compared"
    cos = min(o.cosine for o in acc.outputs)
    top1s = [o.top1 for o in acc.outputs if o.top1 is not None]
    parts = [f"cos {cos:.5g}"]
    if top1s:
        parts.append(f"top-1 {min(top1s):.0%}")
    parts += [
        f"max|err| {max(o.max_abs for o in acc.outputs):.3g}",
        f"mean {max(o.mean_abs for o in acc.outputs):.3g}",
    ]
    verdict = "within budget" if acc.within_budget else f"OUTSIDE budget ({acc.reason})"
    return (
        f"{', '.join(parts)} over {acc.samples} inputs: {verdict} "
        f"(cosine ≥ {acc.min_cosine:g}, top-1 ≥ {acc.min_top1:.0%})"
    )


def _steady(rec: RunRecord) -> float | None:
    v = (rec.stages_ms or {}).get("steady_forward")
    return float(v) if isinstance(v, (int, float)) and v > 0 else None


def _startup(rec: RunRecord) -> float | None:
    w = rec.wall
    return w.median if rec.measured and w else None


def ratios(
    child: RunRecord, parent: str, parent_rec: RunRecord | None, size: Callable[[str], int | None]
) -> dict[str, float | None]:
    """size / start-up / steady of `child` ÷ the same of its fp32 `parent` (`size(key)`: a form's
    shipped model files + program, bytes, as built; the times from the stored records)."""
    out: dict[str, float | None] = dict.fromkeys(RATIOS)
    if child.form is None:
        return out
    pairs: dict[str, tuple[Any, Any]] = {"size": (size(child.form), size(parent))}
    if parent_rec is not None:
        pairs["startup"] = (_startup(child), _startup(parent_rec))
        pairs["steady"] = (_steady(child), _steady(parent_rec))
    for key, (a, b) in pairs.items():
        out[key] = round(a / b, 4) if a is not None and b else None
    return out


def ratios_text(r: dict[str, float | None], parent: str) -> str:
    """`vs onnxruntime: ship size 0.31×, start-up 0.97×, steady forward 6.5×` (– when not stored)."""
    cells = [f"{RATIO_TITLES[k]} {v:.2f}×" if v is not None else f"{RATIO_TITLES[k]} –" for k, v in r.items()]
    return f"vs {parent}: " + ", ".join(cells)
