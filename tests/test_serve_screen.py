"""Pilot test of the Serve screen: the stored cells drawn after the app starts (nothing runs),
a refused size in place with its words, the order changed with `t`, escape closes it."""

from __future__ import annotations

from deploytui import serve_store
from deploytui.record import RunRecord, RunStatus
from test_scale_screen import art, run_app, text_of, until  # noqa: F401  (art is a fixture)
from test_serve import _cell
from tui_support import a1_at


def test_the_serve_screen_redraws_the_stored_cells(art):  # noqa: F811
    store = serve_store.load(a1_at(art))
    store.put("onnxruntime@b1@t1", _cell("onnxruntime", 1, 0.2))
    store.put("onnxruntime@b8@t1", _cell("onnxruntime", 8, 0.5))
    store.put("torch-eager@b1@t1", _cell("torch-eager", 1, 0.1))
    refused = RunRecord(
        "cpp-aoti",
        status=RunStatus.FAILED,
        error="exit 1: error: Error: input_handles[0]: unmatched dim value at 0, expected: 4, but got: 8",
        stage="run",
        batch=8,
    )
    store.put("cpp-aoti@b8@t1", refused)

    async def body(app, pilot):
        from textual.widgets import DataTable

        from deploytui.tui.serve_screen import ServeScreen

        await pilot.press("v")
        await until(pilot, lambda: isinstance(app.screen, ServeScreen))
        await pilot.pause()
        screen = app.screen
        table = screen.query_one("#serve-cells", DataTable)
        keys = [str(k.value) for k in table.rows]
        assert keys == ["cpp-aoti@b8@t1", "onnxruntime@b1@t1", "onnxruntime@b8@t1", "torch-eager@b1@t1"]
        assert table.get_row("cpp-aoti@b8@t1")[-1].startswith("✗ run: exit 1: error: Error: input_handles")
        row = table.get_row("onnxruntime@b8@t1")
        assert row[1] == "8" and row[3] == "550µs" and row[7] == "2" and row[8] == "1.50"
        assert "4 cells stored" in text_of(screen, "#serve-status")
        assert "cpp-aoti: accepts –; refused 8" in text_of(screen, "#serve-sizes")
        await pilot.press("t")  # by p50: the fastest first, the refused cell last
        await pilot.pause()
        keys = [str(k.value) for k in table.rows]
        assert keys[0] == "torch-eager@b1@t1" and keys[-1] == "cpp-aoti@b8@t1"
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ServeScreen))

    run_app(art, body)
