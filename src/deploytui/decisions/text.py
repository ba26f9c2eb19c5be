"""`choose`'s answer as text: the terminal table of `deploytui choose` and the Pareto chart
(start-up × ship, log-log, plotext) that the CLI, the report and the app's Choose screen draw."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

from deploytui.core import plot, units
from deploytui.decisions.choose import SHOWN, Answer, figure_text

MARK_FRONT = "◆"  # on the Pareto front of the qualifying forms


def markers(answer: Answer) -> dict[str, str]:
    """Form key -> its letter on the chart (every form with a start-up and a ship size)."""
    return {key: plot.MARKERS[i % len(plot.MARKERS)] for i, (key, *_rest) in enumerate(answer.points())}


def chart(answer: Answer) -> Callable[[int, int], str] | None:
    """The Pareto chart: every form with both figures as its letter, the front of the qualifying
    forms joined; None when no form has both."""
    pts = answer.points()
    if not pts:
        return None
    letters = markers(answer)
    return plot.pareto(
        [(letters[k], s, b) for k, s, b, _ok, _front in pts],
        [i for i, p in enumerate(pts) if p[4]],
        title="start-up × ship size (log-log); · joins the Pareto front",
        x_text=units.seconds,
        y_text=units.short_size,
        y_bytes=True,
    )


def legend(answer: Answer) -> str:
    """`a KEY ◆  b KEY  c KEY ✗`: each letter's form; ✗ where it does not qualify."""
    letters = markers(answer)
    parts = []
    for key, _s, _b, ok, front in answer.points():
        parts.append(f"{letters[key]} {key}" + (f" {MARK_FRONT}" if front else "" if ok else " ✗"))
    return "  ".join(parts)


def _columns(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def render(answer: Answer, with_chart: bool = False, width: int = 100) -> str:
    """What `deploytui choose` prints: the headline, the ranked forms with their figures, every
    other form with the first constraint it breaks, what is not measured yet, the front."""
    lines = [answer.headline(), ""]
    if answer.chosen:
        head = ["#", "form", *(f.label for f in SHOWN), ""]
        body = [
            [
                str(v.rank),
                v.form.key,
                *(figure_text(f, v.form, answer.request) for f in SHOWN),
                MARK_FRONT if v.front else "",
            ]
            for v in answer.chosen
        ]
        lines += ["  " + line for line in _columns([head, *body])]
        lines.append("")
    if answer.others:
        lines.append("Every other form, with the first constraint it breaks:")
        width_key = max(len(v.form.key) for v in answer.others)
        lines += [f"  {v.form.key:<{width_key}}  {v.why}" for v in answer.others]
        lines.append("")
    missing = [
        f"  {v.form.key}: {text}"
        for v in answer.chosen
        for f in SHOWN
        if (text := f.read(v.form, answer.request.limit_of(f)).missing)
    ]
    if missing:
        lines += ["Not measured yet (– above):", *missing, ""]
    axes = " × ".join(f.label for f in answer.front_axes)
    front = ", ".join(answer.front()) or "–"
    lines.append(f"{MARK_FRONT} Pareto front ({axes}) of the qualifying forms: {front}")
    draw = chart(answer) if with_chart else None
    if draw is not None:
        lines += ["", plot.plain(draw(width, 22)), *textwrap.wrap(legend(answer), width)]
    return "\n".join(lines)
