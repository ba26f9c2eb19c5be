"""The app and targets (key t): the picker lists this machine and the named targets, the form
list and Compare then show the figures measured there, Compare with this machine's beside them
as ratios; a run asked for then goes to the target (stored there, not here)."""

from __future__ import annotations

import json

import pytest

from deploytui.views.tui.session import Job, TargetProgress
from test_tui import wait_for, with_pilot
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


def test_run_on_every_target_measures_them_at_once_with_a_line_each(art, monkeypatch):
    """A: every built form on each target, the targets in parallel (a barrier both must reach
    while running), each target's forms in turn; the targets line says where each stands, a run
    that ends on the target shown updates its figures, and one target's fault stops only it."""
    import threading

    from deploytui.core.record import RunRecord
    from deploytui.scenarios.remote import bench as remote

    doc = json.loads((art / "targets.json").read_text())
    doc["targets"]["pi"] = {"host": "pi", "facts": {"arch": "aarch64", "emulated": True}}
    doc["targets"]["down"] = {"host": "down"}
    (art / "targets.json").write_text(json.dumps(doc))
    both = threading.Barrier(2, timeout=20)  # box and pi at once, or the test fails
    seen: list[tuple[str, str]] = []

    def bench_form(form, target, ws, **_kw):
        if target.name == "down":
            raise OSError("connection refused")
        if form.key == "burn-file":
            both.wait()
        seen.append((target.name, form.key))
        rec = RunRecord.from_json(record(form.key, [30.0] * 5, 2.0))
        path = ws.results_on(target.name)
        path.parent.mkdir(parents=True, exist_ok=True)
        stored = json.loads(path.read_text()) if path.exists() else {"version": 1, "forms": {}}
        stored["forms"][form.key] = rec.to_json()
        path.write_text(json.dumps(stored))
        return rec

    monkeypatch.setattr(remote, "bench_form", bench_form)

    async def body(app, pilot):
        monkeypatch.setattr(app.session, "runnable", lambda: ["burn-file", "tract"])
        await pilot.press("t", "down", "enter")  # box shown
        await pilot.pause()
        await pilot.press("A")
        await wait_for(pilot, lambda: app.session.lane.running is None and len(app.session.fleet) == 3)
        await pilot.pause()
        fleet = app.session.fleet
        assert fleet["box"].line() == "[box] ✓ 2 ran"
        assert fleet["pi"].line() == "[pi, emulated] ✓ 2 ran"
        assert fleet["down"].stopped.startswith("OSError: connection refused")
        line = str(app.main.query_one("#targets-line").render())
        assert "[box] ✓ 2 ran" in line and "[pi, emulated]" in line
        assert sorted(seen) == [("box", "burn-file"), ("box", "tract"), ("pi", "burn-file"), ("pi", "tract")]
        assert app.session.store.forms["tract"].wall_s == [0.03] * 5  # box's, shown as it landed

    with_pilot(art, body)


def test_a_targets_line_says_where_it_stands():
    p = TargetProgress("pi, emulated", 3)
    p.form, p.index = "tract", 2
    assert p.line() == "[pi, emulated] tract 2/3"
    p.ended, p.failed = 2, 1
    assert p.line() == "[pi, emulated] tract 2/3, 1 ✗"
    p.ended = 3
    assert p.line() == "[pi, emulated] ✓ 3 ran, 1 ✗"
    p.stopped = "OSError: gone"
    assert p.line() == "[pi, emulated] ✗ stopped at tract: OSError: gone"
