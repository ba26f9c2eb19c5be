"""How to choose: the page's three situations answered from this model's figures (markdown and
JSON), for a1 beside the page's own recommendations and claims."""

from __future__ import annotations

from typing import Any

from deploytui.core import plot
from deploytui.core.workspace import Workspace
from deploytui.decisions import choose
from deploytui.decisions import facts as choose_facts
from deploytui.decisions import text as choose_text
from deploytui.families import registry
from deploytui.spec import a1_page
from deploytui.views.report.common import _md_table, scrub

# ---- How to choose: the page's three situations, answered from this model's figures -------------


def choose_section(ws: Workspace, beside_page: bool) -> list[str]:
    """The page's "how to choose" for this model: each situation as `deploytui choose` answers it
    from the stored figures (the forms that qualify, ranked by start-up, with their figures; or
    what is not measured yet), then the Pareto chart of every form; for a1, the page's own
    recommendation and claims beside ours."""
    ref = ws.model
    facts, _dropped = choose_facts.read(ws)
    by_key = choose.by_key(facts)
    parts = [
        "## How to choose",
        "The page deploytui started from ends with three recommendations (怎么选), worked out "
        "by hand for A1 on another machine. Here each situation is answered from what is stored "
        "for this model on this machine, as `deploytui choose` answers it: the forms that meet "
        "its constraints, ranked by start-up, with their figures; ship = model files + program + "
        "runtime. A figure not measured yet is named, never guessed.",
    ]
    advice = {a.situation: a for a in registry.ADVICE}
    for situation in choose.SITUATIONS:
        answer = choose.choose(facts, situation.request(), ref.text)
        parts += [
            f"### {situation.title}",
            f"`deploytui choose --model {ref.text} {situation.flags()}`",
            "\n".join(f"- {scrub(line)}" for line in choose.situation_lines(answer)),
        ]
        if answer.chosen:
            parts.append(
                _md_table(
                    ["#", "form", *(f.label for f in choose.SHOWN)],
                    [
                        [str(v.rank), v.form.key]
                        + [scrub(choose.figure_text(f, v.form, answer.request, True)) for f in choose.SHOWN]
                        for v in answer.chosen
                    ],
                )
            )
        if beside_page and situation.key in advice:
            parts += _beside_page(advice[situation.key], answer, by_key)
    everything = choose.choose(facts, choose.Request(), ref.text)
    draw = choose_text.chart(everything)
    if draw is not None:
        parts.append(f"```\n{plot.plain(draw(100, 22))}\n{choose_text.legend(everything)}\n```")
    return parts


def how_to_choose(ws: Workspace) -> dict[str, Any]:
    """Each situation's answer as `deploytui choose --json` gives it."""
    ref = ws.model
    facts, _dropped = choose_facts.read(ws)
    return {
        s.key: _scrubbed(choose.choose(facts, s.request(), ref.text).to_json()) for s in choose.SITUATIONS
    }


def _scrubbed(value: Any) -> Any:
    """Every string inside `value` (dicts and lists walked) through `scrub`."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {k: _scrubbed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v) for v in value]
    return value


def _beside_page(advice: a1_page.Advice, answer: choose.Answer, by_key: dict[str, Any]) -> list[str]:
    judged = [choose.pick_verdict(advice.forms, answer)] + [
        choose.judge(c, by_key) for c in registry.CLAIMS if c.situation == advice.situation
    ]
    return [
        f"The page ({a1_page.MACHINE}): {advice.says} ({advice.original})",
        _md_table(
            ["the page says", "the page", "ours", "verdict"],
            [[j.text, j.page, scrub(j.ours), j.verdict] for j in judged],
        ),
    ]
