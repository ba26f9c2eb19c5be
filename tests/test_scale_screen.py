"""Pilot tests of the Scale screen: the stored sweep drawn, failures in place, a background sweep
through the job lane with its progress, and cancelling it."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from deploytui.scenarios.sweep import store as sweep_store
from deploytui.scenarios.sweep import sweep
from test_sweep import synthetic_points
from tui_support import a1_at, make_artifacts

SIZE = (160, 60)


@pytest.fixture
def art(tmp_path, monkeypatch):
    a = make_artifacts(tmp_path)
    monkeypatch.setenv("DEPLOYTUI_ARTIFACTS", str(a))
    monkeypatch.setenv("DEPLOYTUI_CACHE", str(tmp_path / "cache"))
    return a


def run_app(art, body) -> None:
    from deploytui.views.tui.app import DeployApp

    async def go():
        app = DeployApp(a1_at(art))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await body(app, pilot)

    asyncio.run(go())


async def until(pilot, cond, timeout=20.0):
    t0 = time.monotonic()
    while not cond():
        if time.monotonic() - t0 > timeout:
            raise AssertionError("timed out waiting")
        await asyncio.sleep(0.05)


def text_of(screen, selector: str) -> str:
    from textual.widgets import Static

    return str(screen.query_one(selector, Static).render())


def test_scale_screen_draws_the_stored_sweep(art):
    store = sweep_store.SweepStore(a1_at(art).sweep_path)
    for p in synthetic_points():
        store.put(p)

    async def body(app, pilot):
        from textual.widgets import DataTable

        from deploytui.views.tui.scale_screen import ScaleScreen

        await pilot.press("s")
        await until(pilot, lambda: isinstance(app.screen, ScaleScreen))
        await pilot.pause()
        screen = app.screen
        table = screen.query_one("#scale-fit", DataTable)
        assert [str(k.value) for k in table.rows] == ["torch-eager", "onnxruntime"]
        eager = table.get_row("torch-eager")
        assert eager[1] == "3/3" and eager[2].startswith("50.0ms + 1.0ms/M") and eager[7] == "2.00"
        assert "3 sizes measured" in text_of(screen, "#scale-status")
        notes = text_of(screen, "#scale-notes")
        assert "onnxruntime at 100M: failed: step export-onnx: timeout" in notes
        chart = text_of(screen, "#scale-startup")
        assert "start-up" in chart and "100M" in chart
        assert "a torch-eager" in text_of(screen, "#scale-legend")
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ScaleScreen))

    run_app(art, body)


def test_sweep_runs_in_the_background_with_progress_and_cancels(art, monkeypatch):
    """`w` starts the sweep as a job of the lane; its events reach the screen; escape cancels it."""
    started = threading.Event()
    seen: dict[str, object] = {}

    def fake_sweep(refs, chosen=None, *, on_event, cancel, **kw):
        seen["sizes"] = len(refs)
        first = refs[0]
        on_event(sweep.SweepEvent("point", 1, len(refs), first.text, 108, elapsed_s=1.0))
        on_event(sweep.SweepEvent("form", 1, len(refs), first.text, 108, "torch-eager", "2 runs", 2.0))
        started.set()
        cancel.wait(20)
        seen["cancelled"] = cancel.is_set()
        return sweep_store.SweepStore(a1_at(art).sweep_path)

    monkeypatch.setattr(sweep, "run_sweep", fake_sweep)

    async def body(app, pilot):
        from deploytui.views.tui.scale_screen import ScaleScreen

        await pilot.press("s")
        await until(pilot, lambda: isinstance(app.screen, ScaleScreen))
        await pilot.press("w")
        # the form's event follows the size's: a loaded machine may paint between the two
        await until(pilot, lambda: "torch-eager" in text_of(app.screen, "#scale-status"))
        status = text_of(app.screen, "#scale-status")
        assert "sweeping: 0/7 sizes done" in status and "torch-eager" in status
        assert app.job == "sweep"
        await pilot.press("r")  # one job at a time: a run is refused while the sweep runs
        assert app.job == "sweep"
        await pilot.press("escape")
        await until(pilot, lambda: app.job == "")
        await until(pilot, lambda: "cancelled" in text_of(app.screen, "#scale-status"))
        assert isinstance(app.screen, ScaleScreen)

    run_app(art, body)
    assert started.is_set() and seen == {"sizes": sweep.POINTS, "cancelled": True}
