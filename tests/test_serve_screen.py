"""Pilot test of the Serve screen: the stored cells drawn after the app starts (nothing runs),
a refused size in place with its words, the order changed with `t`, escape closes it."""

from __future__ import annotations

from deploytui.core import defaults
from deploytui.core.record import RunRecord, RunStatus
from deploytui.scenarios.serving import store as serve_store
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

        from deploytui.views.tui.serve_screen import ServeScreen

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


# a runner that speaks the serving protocol: it writes the batch's expected outputs (the
# reference beside its inputs file), times K forwards of argv[1] seconds each, reports its threads
FAKE_SERVING_RUNNER = """\
import json, shutil, sys, time
from pathlib import Path
arg = dict(zip(sys.argv[2::2], sys.argv[3::2]))
sleep_s, repeat = float(sys.argv[1]), int(arg["--repeat"])
times = []
t0, c0 = time.perf_counter(), time.process_time()
for _ in range(repeat):
    t = time.perf_counter()
    time.sleep(sleep_s)
    times.append((time.perf_counter() - t) * 1000)
loop, cpu = (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000
shutil.copy(Path(arg["--inputs"]).with_name("reference.safetensors"), arg["--outputs"])
line = {"stages_ms": {"load": 0.5, "first_forward": 0.1, "steady_forward": sorted(times)[len(times) // 2]},
        "outputs": 1, "warmup": int(arg["--warmup"]), "forward_ms": times, "cpu_ms": cpu, "loop_ms": loop,
        "threads": {"requested": int(arg["--threads"]), "reported": int(arg["--threads"])}}
print(json.dumps(line))
"""


def _serving_form(monkeypatch, root, sleep_s: float):
    """The registry made of one form, a fake that speaks the serving protocol (no build needed);
    a1's example inputs beside its reference."""
    import dataclasses

    from deploytui.core import tensorfile
    from deploytui.families import registry
    from deploytui.spec import forms
    from tui_support import FAKE_KEY, FLAT

    (root / "a1" / "fake_serving.py").write_text(FAKE_SERVING_RUNNER)
    tensorfile.write(
        root / "a1" / "inputs.safetensors",
        {"input_0": tensorfile.Tensor("F32", (4, 4), FLAT[:16] + [0.0] * 4)},
    )
    fake = dataclasses.replace(
        registry.get(FAKE_KEY),
        model_files=("{m}/fake_serving.py",),
        executable=None,
        runner="fake_serving.py (test script)",
        runtime=forms.NO_RUNTIME,
        argv=("{python}", "{art}/{m}/fake_serving.py", str(sleep_s)),
        steps=("burn-embed",),
        mlp_only=False,
        inspect=(),
    )
    monkeypatch.setattr(registry, "FORMS", (fake,))
    monkeypatch.setattr(registry, "BY_KEY", {fake.key: fake})
    monkeypatch.setattr(defaults, "SERVE_REPEAT", 5)
    return fake


def test_w_measures_every_cell_in_the_background_and_the_table_follows(art, monkeypatch):  # noqa: F811
    from deploytui.core import defaults as d

    fake = _serving_form(monkeypatch, art, 0.002)
    seen: list[str] = []

    async def body(app, pilot):
        from textual.widgets import DataTable

        from deploytui.views.tui.serve_screen import SIZES, ServeScreen

        await pilot.press("v")
        await until(pilot, lambda: isinstance(app.screen, ServeScreen))
        screen = app.screen
        status = text_of(screen, "#serve-status")
        assert "no serving cells" in status
        assert f"`{app.session.ws.command('bench', '--batch', SIZES[0], '--threads', SIZES[1])}`" in status
        await pilot.press("w")
        assert app.job == "serve"

        def watch() -> bool:
            status = text_of(screen, "#serve-status")
            if status.startswith("measuring"):
                seen.append(status)
            return app.job == ""

        await until(pilot, watch, timeout=60)
        await pilot.pause()
        table = screen.query_one("#serve-cells", DataTable)
        want = [f"{fake.key}@b{b}@t{t}" for b in d.SERVE_BATCHES for t in d.SERVE_THREADS]
        assert sorted(str(k.value) for k in table.rows) == sorted(want)
        row = table.get_row(f"{fake.key}@b32@t2")
        assert row[1] == "32" and row[7] == "2" and row[-1] == "ok"
        assert f"{fake.key}: accepts 1, 8, 32" in text_of(screen, "#serve-sizes")
        assert f"{len(want)} cells stored" in text_of(screen, "#serve-status")

    run_app(art, body)
    assert any("in flight" in s for s in seen)  # progress in place while it ran
    assert any("cells done (last: " in s and " ok) — in flight" in s for s in seen)
    stored = serve_store.load(a1_at(art)).forms
    assert len(stored) == len(defaults.SERVE_BATCHES) * len(defaults.SERVE_THREADS)
    assert all(r.forwards is not None and r.forwards.n == 5 for r in stored.values())


def test_escape_cancels_the_serving_run_and_keeps_what_was_stored(art, monkeypatch):  # noqa: F811
    from test_tui import running_with

    fake = _serving_form(monkeypatch, art, 10.0)  # each forward 10 s: the first cell never ends
    serve_store.load(a1_at(art)).put(f"{fake.key}@b8@t1", _cell(fake.key, 8, 0.5))

    async def body(app, pilot):
        from deploytui.views.tui.serve_screen import ServeScreen

        await pilot.press("v")
        await until(pilot, lambda: isinstance(app.screen, ServeScreen))
        screen = app.screen
        await pilot.press("w")
        await until(pilot, lambda: "in flight" in text_of(screen, "#serve-status"))
        await until(pilot, lambda: bool(running_with("fake_serving.py")))
        await pilot.press("r")  # one job at a time: the app's run is refused meanwhile
        assert app.job == "serve"
        await pilot.press("escape")
        await until(pilot, lambda: app.job == "")
        await pilot.pause()
        assert isinstance(app.screen, ServeScreen)  # escape cancelled, it did not close
        assert "cancelled" in text_of(screen, "#serve-status")
        assert not running_with("fake_serving.py")
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ServeScreen))

    run_app(art, body)
    assert list(serve_store.load(a1_at(art)).forms) == [f"{fake.key}@b8@t1"]  # the old cell kept
