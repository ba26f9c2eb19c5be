"""The per-form markdown tables' cells: what ships, the weights, the verdicts, the stages, and the
lower-precision variants' section."""

from __future__ import annotations

from typing import Any

from deploytui.core import units
from deploytui.core.record_parts import Accuracy, TaskScore
from deploytui.core.units import human, ms
from deploytui.judge.precision import FP32
from deploytui.scenarios.accuracy import score_text, variants
from deploytui.views.report.common import _md_table, scrub


def _variants_section(rs: list[dict[str, Any]]) -> list[str]:
    """The lower-precision variants: accuracy against eager (beside, never in, the tolerance
    check above) and ratios to the fp32 form each comes from."""
    vs = [r for r in rs if r["precision"] != FP32]
    if not vs:
        return []

    def ratio(r: dict[str, Any], key: str) -> str:
        v = (r["vs_parent"] or {}).get(key)
        return f"{v:.2f}×" if v is not None else "–"

    def acc(r: dict[str, Any]) -> str:
        if r["accuracy"] is None:
            return f"not measured: {r['error']}" if r["error"] else "not measured yet"
        return variants.accuracy_text(Accuracy.from_json(r["accuracy"]))

    return [
        "## Lower-precision variants",
        _md_table(
            [
                "form",
                "precision",
                "fp32 parent",
                "accuracy against eager",
                "ship ÷",
                "start-up ÷",
                "steady ÷",
            ],
            [
                [r["form"], r["precision"], r["parent"], acc(r), *(ratio(r, k) for k in variants.RATIOS)]
                for r in vs
            ],
        ),
        "A variant is judged by its accuracy budget over the example inputs plus a fixed-seed set "
        "drawn like them (cosine similarity of each output with eager's, the worst input; top-1 "
        "agreement for class-score outputs), not by the fp32 tolerance; ÷ is the variant's figure "
        "over its fp32 parent's (ship: model files + program; start-up: median spawn to exit; "
        "steady: the median forward), both as stored here.",
    ]


def _task_section(rs: list[dict[str, Any]]) -> list[str]:
    """Every form's top-1 on the user's labelled data (`--data`), eager's beside it, the drop and
    its interval, with its ship size and start-up: what the accuracy of each form costs."""
    scored = [(r, TaskScore(**r["task"])) for r in rs if r["task"] is not None]
    if not scored:
        return []
    first = scored[0][1]
    fingerprints = {t.fingerprint for _, t in scored}
    same = (
        "" if len(fingerprints) == 1 else " (not every form on the same data: see each record's fingerprint)"
    )
    lm = any(t.perplexity is not None for _, t in scored)  # next-token logits: perplexity beside
    return [
        "## Task metric on your data",
        _md_table(
            [
                "form",
                "precision",
                *score_text.HEADERS,
                *(score_text.PERPLEXITY_HEADERS if lm else ()),
                "rows",
                "ship",
                "start-up (median)",
            ],
            [
                [
                    r["form"],
                    r["precision"],
                    *score_text.cells(t),
                    *(score_text.perplexity_cells(t) if lm else ()),
                    str(t.rows),
                    human(r["ship_bytes"]) if r["ship_bytes"] is not None else "–",
                    ms(r["start_median_s"]),
                ]
                for r, t in scored
            ],
        ),
        f"Data: {scrub(score_text.data_text(first))}{same}. Every form ran each sample of the evaluation "
        f"part in a fresh process; top-1 counts the rows ({first.output}'s class scores) whose "
        "highest score is the label"
        + (
            "; perplexity is exp of the mean cross-entropy of the labels under the form's scores"
            if lm
            else ""
        )
        + ". The drop is eager's top-1 minus the form's on the same rows, "
        "in percentage points; CI is its interval from the paired per-row differences, so a drop "
        "inside it is noise at that number of rows. The int8 variants that calibrate did so on the "
        "calibration part, disjoint from the rows scored here.",
    ]


def _verdict(r: dict[str, Any]) -> str:
    if r["precision"] != FP32 and r["within_tol"] is not None:
        return f"– ({r['precision']}: judged by its accuracy budget, below)"
    if r["within_tol"] is None:
        return str(r["status"])
    return "OK" if r["within_tol"] else "FAIL"


def _weights_intro(rs: list[dict[str, Any]]) -> str:
    unique = next((r["unique_param_bytes"] for r in rs if r["unique_param_bytes"]), None)
    base = human(unique) if unique else "not recorded (run deploytui build)"
    return (
        f"The model's parameters and buffers take {base}, each storage counted once (a tied matrix "
        "once). Each form ships its weights in its model files (graph or code included; a form "
        "without model files keeps them in its program or reads a baked path: not counted); the "
        "ratio says how many times the unique bytes that is — about 2× on a model whose tied "
        "matrix is most of its bytes is that matrix shipped twice."
    )


def _bundle(r: dict[str, Any]) -> str:
    if r["bundle_compressed_bytes"] is None:
        return "–"
    venv = f" + venv {human(r['bundle_venv_bytes'])} made on the target" if r["bundle_venv_bytes"] else ""
    return human(r["bundle_compressed_bytes"]) + venv


def _isolated(r: dict[str, Any]) -> str:
    if r["isolated"] is None:
        return "–"
    if r["isolated"]:
        start, rss = r["isolated_start_median_s"], r["isolated_peak_rss_bytes"]
        return f"✓ ({ms(start)}, {human(rss)})" if start is not None and rss is not None else "✓"
    return f"✗ {r['isolated_reason']}"


def _stage_ms(stages: dict[str, Any], key: str) -> str:
    return units.ms_value(stages.get(key), places=2)


def _top(counts: dict[str, Any] | None, n: int) -> str:
    return ", ".join(f"{k} {v}" for k, v in list((counts or {}).items())[:n]) or "–"
