"""The page's three situations as constraints a user would give, and each one's answer in words."""

from __future__ import annotations

from dataclasses import dataclass

from deploytui.core import units
from deploytui.decisions.choose.answer import Answer, figure_text
from deploytui.decisions.choose.constraints import Request, request
from deploytui.decisions.choose.formfacts import UNKNOWN, FormFacts
from deploytui.decisions.choose.ranking import _value
from deploytui.decisions.choose.readers import RSS, SHOWN, STARTUP
from deploytui.families import registry
from deploytui.spec import forms

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
