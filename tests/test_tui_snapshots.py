"""Snapshot tests of the app on FIXED stored results (no live timings on screen).

Regenerate after an intended change: pytest tests/test_tui_snapshots.py --snapshot-update
"""

from __future__ import annotations

import pytest

from tui_support import FIXED_RESULTS, a1_at, make_artifacts

SIZE = (150, 45)


@pytest.fixture
def fixed_app(tmp_path, monkeypatch):
    art = make_artifacts(
        tmp_path,
        results=FIXED_RESULTS,
        built=(*tuple(k for k in FIXED_RESULTS), "torch-eager", "aoti-python"),
    )
    monkeypatch.setenv("DEPLOYTUI_ARTIFACTS", str(art))
    monkeypatch.setenv("DEPLOYTUI_CACHE", str(tmp_path / "cache"))
    from deploytui.views import form_view

    # the inspector tabs are not in these pictures (their content depends on the machine)
    monkeypatch.setattr(form_view, "sections", lambda form, manifest, ws: [])
    from deploytui.views.tui.app import DeployApp

    return DeployApp(a1_at(art))


async def _settle(pilot) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause(0.2)


@pytest.mark.parametrize(
    "form,tab",
    [
        ("torch-export", "5"),  # Run tab of a Python form: stages, modules, run-time chart
        ("onnxruntime", "6"),  # Diff tab beyond tolerance
        ("cpp-torchscript", "5"),  # a failed run: error and stderr tail
    ],
    ids=["main_run_tab_python_form", "main_diff_tab_beyond_tolerance", "main_failed_run"],
)
def test_main(fixed_app, snap_compare, form, tab):
    async def before(pilot):
        await _settle(pilot)
        pilot.app.main.query_one("#forms").select_key(form)
        await pilot.press(tab)
        await _settle(pilot)

    assert snap_compare(fixed_app, terminal_size=SIZE, run_before=before)


def test_compare_screen(fixed_app, snap_compare):
    async def before(pilot):
        await _settle(pilot)
        await pilot.press("c")
        await _settle(pilot)

    assert snap_compare(fixed_app, terminal_size=SIZE, run_before=before)


def test_scale_screen(fixed_app, snap_compare):
    """The Scale screen on a fixed sweep (test_sweep's synthetic points: a failure at 100M)."""
    from deploytui.scenarios.sweep import store as sweep_store
    from test_sweep import synthetic_points

    store = sweep_store.SweepStore(fixed_app.session.ws.sweep_path)
    for p in synthetic_points():
        store.put(p)

    async def before(pilot):
        await _settle(pilot)
        await pilot.press("s")
        await _settle(pilot)

    assert snap_compare(fixed_app, terminal_size=SIZE, run_before=before)
