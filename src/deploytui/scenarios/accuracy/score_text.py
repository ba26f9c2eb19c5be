"""The task's score (`TaskScore`: top-1 on the user's labelled data, eager's beside it, the drop
and its interval) in words and in table cells: the one wording for the CLI, the report and the
app. Standard library only."""

from __future__ import annotations

from deploytui.core.record_parts import TaskScore

HEADERS = ("top-1", "eager top-1", "drop vs eager", "CI")
PERPLEXITY_HEADERS = ("perplexity", "eager perplexity")  # beside HEADERS for next-token logits


def pct(v: float) -> str:
    return f"{v * 100:.1f} %"


def points(v: float) -> str:
    """A difference of two accuracies, in percentage points (`+0.3 pt`, `−1.2 pt`, `0 pt`)."""
    p = round(v * 100, 1)
    return "0 pt" if p == 0 else f"{p:+.1f} pt".replace("-", "−")


def ci(t: TaskScore) -> str:
    """The drop's interval: `[−0.4, +1.0] pt (95 %)`."""
    lo, hi = (points(v).removesuffix(" pt") for v in (t.drop_low, t.drop_high))
    return f"[{lo}, {hi}] pt ({t.confidence:.0%})".replace("%", " %")


def cells(t: TaskScore) -> list[str]:
    """top-1, eager's, the drop, its interval: a table's cells."""
    return [pct(t.value), pct(t.eager), points(t.drop), ci(t)]


def perplexity_cells(t: TaskScore) -> list[str]:
    """The form's perplexity and eager's (– where not measured): a table's cells."""
    return [f"{v:.4g}" if v is not None else "–" for v in (t.perplexity, t.eager_perplexity)]


def task_text(t: TaskScore) -> str:
    """`top-1 96.9 % (eager 97.2 %): drop +0.3 pt, CI [−0.4, +1.0] pt (95 %) on 576 rows of
    18 samples; agrees with eager on 99.5 %`, perplexity beside for next-token logits."""
    ppl = (
        f"; perplexity {t.perplexity:.4g} (eager {t.eager_perplexity:.4g})"
        if t.perplexity is not None and t.eager_perplexity is not None
        else ""
    )
    return (
        f"top-1 {pct(t.value)} (eager {pct(t.eager)}): drop {points(t.drop)}, CI {ci(t)} on {t.rows} "
        f"rows of {t.samples} samples; agrees with eager on {pct(t.agreement)}{ppl}"
    )


def data_text(t: TaskScore) -> str:
    """`tests/models/digits.py:samples (fingerprint 1a2b…, seed 0; 6 samples calibrate, 18 judge)`."""
    return (
        f"{t.data} (fingerprint {t.fingerprint}, seed {t.seed}; {t.calibration} samples calibrate the "
        f"int8 exports, {t.samples} judge)"
    )
