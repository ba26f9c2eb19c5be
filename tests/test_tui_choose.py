"""The Choose screen (o), driven from the keyboard: the same answer as `deploytui choose`."""

from __future__ import annotations

from deploytui.families import registry
from test_choose import _stored
from test_tui import with_pilot


def test_choose_screen_from_the_keyboard(tmp_path, monkeypatch):
    art = _stored(tmp_path, monkeypatch)  # a1: stored runs, two probed runtimes, two ship checks
    monkeypatch.setenv("DEPLOYTUI_CACHE", str(tmp_path / "cache"))

    async def body(app, pilot):
        from textual.widgets import DataTable, Input, Static

        from deploytui.views.tui.choose_screen import ChooseScreen
        from deploytui.views.tui.widgets.chart import PlotextChart

        await pilot.press("o")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ChooseScreen)
        assert screen.answer.headline().startswith(
            f"a1: 3 of {len(registry.FORMS)} forms meet every constraint"
        )
        assert app.focused.id == "choose-max-ship"  # typing starts at once
        await pilot.press(*"400MiB")
        await pilot.press("shift+tab", "shift+tab", "space")  # back past the runtimes to "no Python"
        await pilot.pause()
        assert screen.answer.headline() == (
            f"a1: 1 of {len(registry.FORMS)} forms meet every constraint (ship ≤ 400.0 MiB, no Python); "
            "ranked by ship"
        )
        table = screen.query_one("#choose-table", DataTable)
        first = table.get_row_at(0)
        assert (first[0], first[2].plain, first[3]) == ("1", "burn-embed", "3.10 ms")
        row = table.get_row_at(table.get_row_index("cpp-aoti"))
        assert row[-1].plain == "ship 438.0 MiB > 400.0 MiB"
        assert screen.query_one("#choose-chart", PlotextChart)._draw is not None
        detail = str(screen.query_one("#choose-detail", Static).render())
        assert detail.startswith(
            "burn-embed (burn Mlp, weights compiled in): ✓ max-ship (100 B)  ✓ no-python (no Python)"
        )

        ship = screen.query_one("#choose-max-ship", Input)
        ship.value = "lots"
        await pilot.pause()
        assert ship.has_class("-invalid")
        assert "--max-ship: size 'lots' not understood" in str(screen.query_one("#choose-error").render())
        assert screen.answer.headline().endswith("ranked by ship")  # the last answer stays
        ship.value = "[/x]"  # what is typed is shown as typed, never read as markup (it raised)
        await pilot.pause()
        assert "--max-ship: size '[/x]' not understood" in str(screen.query_one("#choose-error").render())

        # a letter typed where the focus is not a field builds, runs or opens nothing
        screen.query_one("#choose-no-python").focus()
        await pilot.press("b", "r", "a", "s", "m", "e", "i", "c")
        await pilot.pause()
        assert app.screen is screen and app.session.lane.running is None

        await pilot.press("ctrl+l")
        await pilot.pause()
        assert ship.value == "" and not ship.has_class("-invalid")
        assert screen.answer.request.constraints == ()
        await pilot.press("escape")
        assert app.screen is app.main

    with_pilot(art, body)
