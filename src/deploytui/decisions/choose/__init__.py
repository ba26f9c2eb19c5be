"""Choose: the reference page's "how to choose" (怎么选) computed for one model from what was
measured. Pure: no files, no Textual, no torch. Its input is one `FormFacts` per form (what is
stored of it for the model on this machine; `choose_facts.read` is the one place that reads the
stores), its output an `Answer` that `deploytui choose`, the report's "How to choose" and the
app's Choose screen only render.

A `Figure` is one named reader of a form's facts (start-up, ship size, …): a value, or why there
is none ("not measured yet: run deploytui bench KEY"). A `Rule` is one kind of constraint:
a figure, a comparison and its wording ("ship 438.0 MiB > 50.0 MiB"); a `Constraint` is a rule
with the user's limit. A form qualifies when it meets every constraint of the `Request` (the
user's, in their order, then "runs here" and, unless the user gave an accuracy budget, "within
the model's tolerance"); every other form carries the first constraint it breaks or, breaking
none, the first figure not measured yet. The qualifying forms are ranked by one figure (the
first the user constrained, else start-up; ties share a rank and fall back on start-up, ship,
peak RSS, then the registry's order), and the Pareto front of start-up × ship (× p99 once every
candidate has one) is marked.
"""

from __future__ import annotations

from deploytui.decisions.choose.answer import (
    Answer,
    Check,
    Verdict,
    evaluate,
    figure_text,
    figures,
)
from deploytui.decisions.choose.claims import (
    ABOUT,
    AGREES,
    DIFFERS,
    MEASURES,
    NOT_MEASURED,
    Judged,
    agrees,
    by_key,
    judge,
    pick_verdict,
)
from deploytui.decisions.choose.constraints import (
    BY_KEY,
    PYTHON_FIG,
    RANKS,
    RULES,
    RUNS,
    RUNTIME_FIG,
    TOLERANCE,
    Constraint,
    Request,
    Rule,
    request,
)
from deploytui.decisions.choose.formfacts import (
    BROKEN,
    BUILD_FAILED,
    BUILT,
    MET,
    NOT_APPLICABLE,
    NOT_BUILT,
    UNKNOWN,
    FormFacts,
)
from deploytui.decisions.choose.ranking import (
    choose,
    pareto,
)
from deploytui.decisions.choose.readers import (
    ACCURACY_DROP,
    DIFF,
    FIGURES,
    ISOLATED,
    P99,
    RSS,
    RUNS_HERE,
    SHIP,
    SHOWN,
    STARTUP,
    THROUGHPUT,
    WITHIN_TOL,
    Batched,
    Figure,
    Reader,
    Reading,
    first_words,
)
from deploytui.decisions.choose.situations import (
    LIBRARIES,
    PY_RUNTIMES,
    SITUATIONS,
    Situation,
    situation_lines,
)

__all__ = [
    "ABOUT",
    "ACCURACY_DROP",
    "AGREES",
    "BROKEN",
    "BUILD_FAILED",
    "BUILT",
    "BY_KEY",
    "DIFF",
    "DIFFERS",
    "FIGURES",
    "ISOLATED",
    "LIBRARIES",
    "MEASURES",
    "MET",
    "NOT_APPLICABLE",
    "NOT_BUILT",
    "NOT_MEASURED",
    "P99",
    "PYTHON_FIG",
    "PY_RUNTIMES",
    "RANKS",
    "RSS",
    "RULES",
    "RUNS",
    "RUNS_HERE",
    "RUNTIME_FIG",
    "SHIP",
    "SHOWN",
    "SITUATIONS",
    "STARTUP",
    "THROUGHPUT",
    "TOLERANCE",
    "UNKNOWN",
    "WITHIN_TOL",
    "Answer",
    "Batched",
    "Check",
    "Constraint",
    "Figure",
    "FormFacts",
    "Judged",
    "Reader",
    "Reading",
    "Request",
    "Rule",
    "Situation",
    "Verdict",
    "agrees",
    "by_key",
    "choose",
    "evaluate",
    "figure_text",
    "figures",
    "first_words",
    "judge",
    "pareto",
    "pick_verdict",
    "request",
    "situation_lines",
]
