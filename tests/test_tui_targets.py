"""The app and targets (key t): the picker lists this machine and the named targets, the form
list and Compare then show the figures measured there, Compare with this machine's beside them
as ratios; a run asked for then goes to the target (stored there, not here)."""

from __future__ import annotations

import json

import pytest

from deploytui.views.tui.session import Job
from test_tui import with_pilot
from tui_support import a1_at, make_artifacts, record

FACTS = {"arch": "x86_64", "cpu": "Ampere Altra", "cores": 80, "os": "Ubuntu 24.04", "glibc": "glibc 2.39"}


@pytest.fixture
def art(tmp_path, monkeypatch):
    here = {"burn-file": record("burn-file", [10.0] * 5, 4.0), "tract": record("tract", [20.0] * 5, 15.0)}
    art = make_artifacts(tmp_path, results=here)
    monkeypatch.setenv("DEPLOYTUI_ARTIFACTS", str(art))
    monkeypatch.setenv("DEPLOYTUI_CACHE", str(tmp_path / "cache"))
    (art / "targets.json").write_text(
        json.dumps({"version": 1, "targets": {"box": {"host": "box", "user": "deploy", "facts": FACTS}}})
    )
    there = a1_at(art).results_on("box")
    there.parent.mkdir(parents=True)
    rec = record("burn-file", [25.0] * 5, 3.0)
    there.write_text(json.dumps({"version": 1, "forms": {"burn-file": rec}}))
    return art


def test_the_picker_shows_a_targets_figures_and_compare_puts_them_beside_these(art, monkeypatch):
    asked: list[Job] = []

    async def body(app, pilot):
        from textual.widgets import DataTable, OptionList

        from deploytui.views.tui.target_screen import TargetScreen

        await pilot.press("t")
        await pilot.pause()
        assert isinstance(app.screen, TargetScreen)
        options = app.screen.query_one("#target-list", OptionList)
        assert [options.get_option_at_index(i).id for i in range(options.option_count)] == [
            "this machine",
            "box",
        ]
        assert "Ampere Altra" in str(options.get_option_at_index(1).prompt)
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.session.target == "box"
        assert app.session.store.forms["burn-file"].wall_s == [0.025] * 5  # the target's record
        assert "tract" not in app.session.store.forms  # measured here only
        assert "on box" in str(app.main.query_one("#header").render())
        await pilot.press("c")
        await pilot.pause(0.3)
        table = app.screen.query_one("#compare-table", DataTable)
        labels = [c.label.plain for c in table.ordered_columns]
        beside = ["Start here", "×", "RSS here", "×", "p99 here", "×"]
        assert labels[:11] == ["Form", "Start", "RSS", "Ship", "max|diff|", *beside]
        row = [c.__rich__().plain for c in table.get_row("burn-file")]
        assert row[1] == "25.0ms" and row[5] == "10.0ms" and row[6] == "2.50×" and row[8] == "0.75×"
        await pilot.press("v")  # nothing beside
        await pilot.pause()
        assert "Start here" not in [c.label.plain for c in table.ordered_columns]
        await pilot.press("escape")
        monkeypatch.setattr(app, "submit", asked.append)
        app.action_run("burn-file")
        assert asked and asked[-1].target == "box"  # a run goes there
        await pilot.press("t")
        await pilot.pause()
        await pilot.press("enter")  # this machine again
        await pilot.pause()
        assert app.session.target is None and app.session.store.forms["burn-file"].wall_s == [0.01] * 5
        await pilot.press("c", "v")  # this machine's figures, the target's beside them
        await pilot.pause(0.3)
        table = app.screen.query_one("#compare-table", DataTable)
        assert [c.label.plain for c in table.ordered_columns][5:7] == ["Start box", "×"]
        row = [c.__rich__().plain for c in table.get_row("burn-file")]
        assert row[5] == "25.0ms" and row[6] == "0.40×"
        assert [c.__rich__().plain for c in table.get_row("tract")][5:7] == ["–", "–"]  # not measured there

    with_pilot(art, body)
