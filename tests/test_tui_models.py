"""Pilot tests of the app following the model: switching models, a model never built built in
the background with per-form progress (a real build of a fixture model, its light steps only),
a broken model file opened from the app, quitting mid-build."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from deploytui.core.modelref import parse
from test_tui import running_with, wait_for, with_pilot
from tui_support import a1_at, make_artifacts

HERE = Path(__file__).resolve().parent
TWO_OUTPUTS = f"{HERE / 'models' / 'two_outputs.py'}:make"
BROKEN = f"{HERE / 'models' / 'broken_import.py'}:make"
LIGHT_STEPS = ("export-model", "export-script", "export-trace")  # torch only: no C++, no cargo


@pytest.fixture
def art(tmp_path, monkeypatch) -> Path:
    a = make_artifacts(tmp_path)
    monkeypatch.setenv("DEPLOYTUI_ARTIFACTS", str(a))  # for the deploytui processes a test starts
    monkeypatch.setenv("DEPLOYTUI_CACHE", str(tmp_path / "cache"))
    return a


def built_convnet(art: Path) -> None:
    """A second model built here: its manifest (every step ok) and what the build says of it."""
    from deploytui.spec import manifest

    a1 = a1_at(art)
    view = manifest.load(a1)
    view.model = "convnet"
    manifest.write(a1.for_model(parse("convnet")), view)
    info = {
        "model": "convnet",
        "class": "ConvNet",
        "params": 1234,
        "inputs": [{"dtype": "F32", "shape": [1, 3, 32, 32]}],
    }
    (art / "convnet" / "model.json").write_text(json.dumps(info))


def header(app) -> str:
    return str(app.main.query_one("#header").content)


def notes(app) -> str:
    return " | ".join(n.message for n in app._notifications)


def test_the_header_names_the_model_with_its_parameters_and_inputs(art):
    async def body(app, pilot):
        assert "a1 · Mlp · 67 params · input F32[4, 4]" in header(app)

    with_pilot(art, body)


def test_m_switches_to_a_model_built_here_and_the_palette_offers_it(art):
    built_convnet(art)

    async def body(app, pilot):
        from deploytui.views.tui.model_screen import ModelScreen

        commands = [c.title for c in app.get_system_commands(app.main)]
        assert "Open model convnet" in commands and "Open a model" in commands
        assert "Open model a1" not in commands  # the model shown
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, ModelScreen)
        models = app.screen.query_one("#model-list")
        models.highlighted = models.get_option_index("convnet")
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is app.main
        assert app.session.model.text == "convnet"
        assert "convnet · ConvNet · 1,234 params · input F32[1, 3, 32, 32]" in header(app)
        assert app.session.lane.find("build", "open") is None  # built already: nothing to do
        assert app.status["burn-file"].startswith("not applicable")  # the Mlp twin is a1's
        await pilot.press("m")
        await pilot.pause()
        await pilot.press("escape")
        assert app.screen is app.main and app.session.model.text == "convnet"

    with_pilot(art, body)


@pytest.mark.parametrize("key", ["m", "t"])
def test_a_picker_closed_twice_in_one_turn_closes_once(art, key):
    # enter and escape typed together both closed the picker: Textual's dismiss pops whatever
    # screen is on top, so the second popped the main screen (ScreenStackError, a traceback)
    from textual import events

    async def body(app, pilot):
        await pilot.press(key)
        await pilot.pause()
        assert app.screen is not app.main
        for k in ("enter", "escape"):
            app.post_message(events.Key(k, None))
        await pilot.pause(0.5)
        assert app.is_running and app.screen is app.main

    with_pilot(art, body)


def test_a_run_keeps_its_model_when_the_app_switches_meanwhile(art, monkeypatch):
    """A run of a1's (fake) form is in flight when the user opens convnet: the app switches at
    once, the run goes on, and its record lands in a1's results.json, not convnet's."""
    from deploytui.views import form_view
    from test_tui import running_with
    from tui_support import FAKE_KEY, install_fake_form

    monkeypatch.setattr(form_view, "sections", lambda form, manifest, ws: [])
    install_fake_form(monkeypatch, art, sleep_s=0.5)
    built_convnet(art)

    async def body(app, pilot):
        app.main.query_one("#forms").select_key(FAKE_KEY)
        await pilot.pause()
        await pilot.press("r")
        await wait_for(pilot, lambda: running_with("fake_runner"))
        app.open_model("convnet")
        await pilot.pause()
        assert app.session.model.text == "convnet"  # switched while a1's run goes on
        assert app.session.lane.running is not None and app.session.lane.running.model.text == "a1"
        await wait_for(pilot, lambda: app.session.lane.running is None, timeout=60)
        await pilot.pause()
        assert FAKE_KEY not in app.store.forms  # the store shown is convnet's
        assert app.session.live is None

    with_pilot(art, body, runs=2, warmup=0)
    stored = json.loads((art / "a1" / "results.json").read_text())
    assert stored["forms"][FAKE_KEY]["status"] == "ok" and stored["forms"][FAKE_KEY]["model"] == "a1"
    assert len(stored["forms"][FAKE_KEY]["wall_s"]) == 2
    assert not (art / "convnet" / "results.json").exists()
    assert not (art / "convnet" / "outputs").exists()


@pytest.mark.slow  # real builds
def test_a_model_never_built_is_built_in_the_background_with_per_form_progress(art, monkeypatch, tmp_path):
    """Opened from the app by its file: checked, switched to, then its (light) steps built for
    real while the rows follow: waiting → building… → ✓ built; the app answers meanwhile. The
    timeline (bench/fresh_setup.py's clock on `make run`) gets the first frame and each form built."""
    import deploytui.builder as builder
    from deploytui.families import registry
    from deploytui.views.tui.app import TIMELINE_ENV, DeployApp

    timeline = tmp_path / "timeline"
    monkeypatch.setenv(TIMELINE_ENV, str(timeline))

    full_plan = builder.plan
    monkeypatch.setattr(builder, "plan", lambda ctx: [s for s in full_plan(ctx) if s.name in LIGHT_STEPS])
    seen: list[dict[str, str]] = []
    original = DeployApp._build_line

    def recording(self, m):
        original(self, m)
        seen.append({k: self.session.form_state(k) for k in ("torch-eager", "torchscript-trace")})

    monkeypatch.setattr(DeployApp, "_build_line", recording)

    async def body(app, pilot):
        await pilot.press("m")
        await pilot.pause()
        app.screen.query_one("#model-input").value = TWO_OUTPUTS
        app.screen.query_one("#model-input").focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.session.model.text == TWO_OUTPUTS, timeout=120)
        assert "TwoHeads · 65 params · input F32[2, 6]" in header(app)  # from its check
        assert app.status["torch-eager"].startswith("not built")
        await wait_for(pilot, lambda: app.session.lane.find("build") is not None, timeout=10)
        await pilot.press("j")  # the app stays usable while it builds
        await pilot.pause()
        assert app.session.current == "torchscript-script"
        await wait_for(pilot, lambda: app.session.lane.find("build") is None, timeout=240)
        await pilot.pause()
        assert app.status["torch-eager"] == "" and app.status["torchscript-trace"] == ""
        assert app.status["onnxruntime"].startswith("not built")  # not in this (light) build
        assert app.session.form_state("torch-eager") == "built"
        assert "TwoHeads · 65 params · input F32[2, 6]" in header(app)  # now from model.json
        built = len(app.session.runnable())  # the 3 exported here, cpp-torchscript with the fixture's loader
        assert built == 4 and app.status["cpp-torchscript"] == ""
        assert (
            f"Build of tests/models/two_outputs.py:make done: {built}/{len(registry.FORMS)} forms built"
            in notes(app)
        )
        assert not app.main.query_one("#build-line").display
        rows = str(app.main.query_one("#forms").get_option("torch-eager").prompt)
        assert "✓ built" in rows

    with_pilot(art, body, notifications=True)
    eager = [s["torch-eager"] for s in seen]
    trace = [s["torchscript-trace"] for s in seen]
    assert "waiting" in eager and "building" in eager and eager[-1] == "built"
    assert trace.index("waiting") < trace.index("building") < trace.index("built")
    events = [line.split(" ", 1) for line in timeline.read_text().splitlines()]
    assert events[0][1] == "ready" and {"built torch-eager", "built torchscript-trace"} <= {
        e for _, e in events
    }
    assert [int(t) for t, _ in events] == sorted(int(t) for t, _ in events)


def test_a_model_file_that_does_not_import_gives_one_message_and_changes_nothing(art):
    async def body(app, pilot):
        app.open_model(BROKEN)
        await wait_for(
            pilot, lambda: app.session.lane.running is None and "Cannot" in titles(app), timeout=120
        )
        assert "this_package_does_not_exist" in notes(app)
        assert app.session.model.text == "a1"
        assert app.session.lane.find("build") is None and app.session.builds == {}
        app.open_model("not a model at all")
        await pilot.pause()
        assert "is not a zoo model" in notes(app)

    with_pilot(art, body, notifications=True)


def titles(app) -> str:
    return " | ".join(n.title or "" for n in app._notifications)


def test_a_fresh_clone_opens_at_once_and_quitting_mid_build_leaves_nothing_running(tmp_path, monkeypatch):
    """Nothing built (`make run` on a fresh clone): the app is up at once, every form 'not built
    yet' or waiting, the build runs in the background; q kills its step's process group."""
    import deploytui.builder as builder
    from deploytui.spec.steps import Step

    art = tmp_path / "artifacts"
    monkeypatch.setenv("DEPLOYTUI_CACHE", str(tmp_path / "cache"))
    sleeper = "import time; time.sleep(60)  # deploytui-test-step"

    def slow_plan(ctx):
        return [Step("export-model", "a step that hangs", (sys.executable, "-c", sleeper), (), ())]

    monkeypatch.setattr(builder, "plan", slow_plan)

    def steps_running():
        return running_with("deploytui-test-step")

    async def body(app, pilot):
        assert "a1 · not built yet" in header(app)
        await wait_for(pilot, steps_running, timeout=20)
        assert app.session.form_state("torch-eager") == "building"
        assert app.main.query_one("#build-line").display
        assert "building a1: step 1/1 export-model" in str(app.main.query_one("#build-line").content)
        rows = str(app.main.query_one("#forms").get_option("torch-eager").prompt)
        assert "building…" in rows
        await pilot.press("q")

    t0 = time.monotonic()
    with_pilot(art, body)
    deadline = time.monotonic() + 5
    while steps_running() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not steps_running()
    assert time.monotonic() - t0 < 30
