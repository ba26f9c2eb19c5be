"""Pilot tests of the app: navigation, a live run, cancel/quit, export, errors in place."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tui_support import FAKE_KEY, FIXED_RESULTS, a1_at, install_fake_form, make_artifacts

SIZE = (150, 45)


@pytest.fixture
def art(tmp_path, monkeypatch) -> Path:
    a = make_artifacts(tmp_path)
    monkeypatch.setenv("DEPLOYTUI_ARTIFACTS", str(a))  # for the deploytui processes a test starts
    monkeypatch.setenv("DEPLOYTUI_CACHE", str(tmp_path / "cache"))
    return a


@pytest.fixture
def quick_inspect(monkeypatch):
    """Inspecting runs ldd, nm and the ONNX reader; live-run tests do not need that."""
    from deploytui.views import form_view

    monkeypatch.setattr(form_view, "sections", lambda form, manifest, ws: [])


def make_app(art: Path, **kw):
    """The app on a1 in the artifacts folder `art`."""
    from deploytui.views.tui.app import DeployApp

    return DeployApp(a1_at(art), **kw)


def with_pilot(art: Path, body, *, notifications: bool = False, message_hook=None, **app_kw) -> None:
    """Run a fresh app on a1 in `art`, headless, and await `body(app, pilot)` once its first frame
    is up and its tabs are mounted (on a loaded machine that can take more than one pause)."""

    async def go():
        app = make_app(art, **app_kw)
        async with app.run_test(size=SIZE, notifications=notifications, message_hook=message_hook) as pilot:
            await pilot.pause()
            await wait_for(pilot, lambda: app.session.ready)
            await pilot.pause()
            await body(app, pilot)

    asyncio.run(go())


async def wait_for(pilot, cond, timeout=30.0):
    t0 = time.monotonic()
    while not cond():
        if time.monotonic() - t0 > timeout:
            raise AssertionError("timed out waiting")
        await asyncio.sleep(0.05)


def descendants() -> list[psutil.Process]:
    return [p for p in psutil.Process().children(recursive=True) if p.is_running()]


def running_with(marker: str) -> list[psutil.Process]:
    """This process's live descendants whose command line holds `marker`; one that exits or
    is a zombie while it is read is not running."""
    found = []
    for p in descendants():
        try:
            if p.status() != psutil.STATUS_ZOMBIE and marker in " ".join(p.cmdline()):
                found.append(p)
        except psutil.Error:
            continue
    return found


def test_navigation_arrows_and_jk(art):
    async def body(app, pilot):
        assert app.main.current == "torch-eager"
        await pilot.press("down")
        assert app.main.current == "torchscript-script"
        await pilot.press("j", "j", "j")
        assert app.main.current == "aoti-python"
        await pilot.press("j")  # the family's int8 variant comes last in its group
        assert app.main.current == "aoti-python-int8"
        await pilot.press("j")  # skips the "C++ libtorch" header
        assert app.main.current == "cpp-torchscript"
        await pilot.press("k", "up")
        assert app.main.current == "aoti-python"
        await pilot.press("6")
        assert app.main.query_one("#tabs").active == "tab-diff"

    with_pilot(art, body)


def test_live_run_of_a_fast_form_stores_the_record(art, quick_inspect, monkeypatch):
    install_fake_form(monkeypatch, art, sleep_s=0.15)

    seen = []

    def hook(m):
        from deploytui.views.tui.messages import RunProgress

        if isinstance(m, RunProgress):
            seen.append(m)

    async def body(app, pilot):
        app.main.query_one("#forms").select_key(FAKE_KEY)
        await pilot.pause()
        await pilot.press("r")
        assert app.job == "run"
        assert app.main.query_one("#tabs").active == "tab-run"
        await wait_for(pilot, lambda: app.job == "")
        await pilot.pause()
        rec = app.store.forms[FAKE_KEY]
        assert rec.status == "ok" and rec.within_tol is True
        assert len(rec.wall_s) == 3
        status = str(app.main.query_one("#run-status").content)
        assert "ok, 3 runs after 1 warm-up" in status
        await pilot.press("6")
        await pilot.pause()
        assert "OK" in str(app.main.query_one("#diff-summary").content)

    with_pilot(art, body, message_hook=hook, runs=3, warmup=1)
    stored = json.loads((art / "a1" / "results.json").read_text())
    assert stored["forms"][FAKE_KEY]["status"] == "ok"
    # progress was live: RSS samples while running, finished runs counted (posted at most 4 times a second)
    assert any(m.progress.sample is None and m.progress.rss_bytes > 0 for m in seen), [
        (m.progress, m.done) for m in seen
    ]
    counts = [m.done for m in seen if m.progress.sample is not None]
    assert counts and counts == sorted(counts) and counts[-1] <= 4


def test_cancel_kills_the_child_and_keeps_the_old_result(art, quick_inspect, monkeypatch):
    install_fake_form(monkeypatch, art, sleep_s=60)
    (art / "a1" / "results.json").write_text(
        json.dumps({"version": 1, "forms": {FAKE_KEY: FIXED_RESULTS["burn-embed"]}})
    )

    async def body(app, pilot):
        app.main.query_one("#forms").select_key(FAKE_KEY)
        await pilot.press("r")
        await wait_for(pilot, lambda: running_with("fake_runner"))
        await pilot.press("x")
        await wait_for(pilot, lambda: app.job == "", timeout=10)
        assert app.store.forms[FAKE_KEY].wall_s == FIXED_RESULTS["burn-embed"]["wall_s"]

    with_pilot(art, body, runs=2, warmup=0)
    time.sleep(0.2)
    assert not running_with("fake_runner")


def test_quit_mid_run_leaves_no_child(art, quick_inspect, monkeypatch):
    install_fake_form(monkeypatch, art, sleep_s=60)

    async def body(app, pilot):
        app.main.query_one("#forms").select_key(FAKE_KEY)
        await pilot.press("r")
        await wait_for(pilot, lambda: running_with("fake_runner"))
        await pilot.press("q")

    t0 = time.monotonic()
    with_pilot(art, body, runs=2, warmup=0)
    deadline = time.monotonic() + 5
    while running_with("fake_runner") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running_with("fake_runner")
    assert time.monotonic() - t0 < 20


@pytest.mark.parametrize("key", ["s", "c", "m", "t"])
def test_a_key_typed_right_after_q_opens_nothing(art, key):
    # typed fast ("qs", or "question" typed into the app), the second key pushed a screen that the
    # exit tore down while it mounted: NoMatches in its on_mount, a traceback and exit code 1
    from textual import events

    seen = {}

    async def body(app, pilot):
        seen["app"] = app
        for ch in ("q", key):
            app.post_message(events.Key(ch, ch))
        await wait_for(pilot, lambda: not app.is_running, timeout=10)

    with_pilot(art, body)
    assert seen["app"].return_code == 0


def test_export_key_writes_the_report(art, monkeypatch, tmp_path):
    from deploytui.views import report

    (art / "a1" / "results.json").write_text(json.dumps({"version": 1, "forms": FIXED_RESULTS}))
    out = tmp_path / "report.md"
    real = report.write_report
    monkeypatch.setattr(
        report,
        "write_report",
        lambda ws, store, manifest, fmt="md", path=None: real(ws, store, manifest, fmt, out),
    )

    async def body(app, pilot):
        await pilot.press("e")
        await wait_for(pilot, lambda: out.exists())
        await wait_for(pilot, lambda: any(str(out) in n.message for n in app._notifications))

    with_pilot(art, body, notifications=True)
    text = out.read_text()
    for key in FIXED_RESULTS:
        assert key in text


def test_missing_artifact_is_shown_in_place(art):
    (art / "a1" / "a1.onnx").unlink()

    async def body(app, pilot):
        fl = app.main.query_one("#forms")
        fl.select_key("onnxruntime")
        await pilot.pause()
        assert "missing artifact" in app.status["onnxruntime"]
        assert "missing artifact" in str(app.main.query_one("#detail-title").content)
        assert "missing file" in str(fl.get_option("onnxruntime").prompt)
        await pilot.press("r")  # refused with the reason, nothing starts
        assert app.job == ""
        assert any("a1.onnx" in n.message for n in app._notifications)
        # the inspector tab shows the error where the artifact would be
        await app.workers.wait_for_complete()
        await pilot.pause(0.3)
        errors = [str(w.content) for w in app.main.query("#sections-graph .error")]
        assert any("a1.onnx" in e for e in errors), errors
        # every other form stays usable
        await pilot.press("up")
        assert app.main.current == "burn-onnx-bpk"

    with_pilot(art, body, notifications=True)


def test_damaged_results_file_is_reported(art):
    (art / "a1" / "results.json").write_text('{"version": 1, "forms": {"onnxruntime": {"form": "onnx')

    async def body(app, pilot):
        banner = app.main.query_one("#banner")
        assert banner.display
        assert "results.json" in str(banner.content)
        assert any("dropped" in (n.title or "") for n in app._notifications)

    with_pilot(art, body, notifications=True)


def test_a_message_that_looks_like_markup_is_shown_as_it_is(art):
    # a runner's error, a reason or a path may hold brackets; `[/x]` read as markup raised
    # MarkupError while the toast was drawn, and the app went down with a traceback
    text = "RuntimeError: expected [torch.float32] in [/x]"

    async def body(app, pilot):
        app.notify(text, title="Run failed", severity="error")
        app.main.notify(text, severity="warning")  # a screen's notify asks for markup
        await pilot.pause(0.3)
        shown = [t.render().plain for t in app.screen.query("Toast")]
        assert len(shown) == 2 and all(text in s for s in shown), shown
        assert app.is_running

    with_pilot(art, body, notifications=True)


def test_failed_run_shows_error_and_stderr(art):
    (art / "a1" / "results.json").write_text(json.dumps({"version": 1, "forms": FIXED_RESULTS}))

    async def body(app, pilot):
        app.main.query_one("#forms").select_key("cpp-torchscript")
        await pilot.press("5")
        await pilot.pause()
        err = app.main.query_one("#run-error")
        assert err.display and "panicked" in str(err.content) and "c10::Error" in str(err.content)

    with_pilot(art, body)


def test_compare_screen_sorts(art):
    (art / "a1" / "results.json").write_text(json.dumps({"version": 1, "forms": FIXED_RESULTS}))

    async def body(app, pilot):
        from deploytui.views.tui.compare_screen import CompareScreen

        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, CompareScreen)
        app.screen.sort_by("start_med")
        table = app.screen.query_one("#compare-table")
        order = [table.get_row_at(i)[0].raw for i in range(3)]
        assert order == ["burn-embed", "onnxruntime", "cpp-aoti"]
        app.screen.sort_by("start_med")  # again: descending, forms never run still last
        column = [table.get_row_at(i) for i in range(table.row_count)]
        assert [r[0].raw for r in column[:2]] == ["torch-export", "cpp-aoti"]
        medians = [r[table.get_column_index("start_med")].raw for r in column]
        assert medians[-1] is None and None not in medians[:4]
        await pilot.press("escape")
        assert app.screen is app.main

    with_pilot(art, body)


def test_compare_says_not_applicable_not_failed(art):
    """A form that does not apply to the model is not a failed run: Compare says so, as the list does."""
    from tui_support import record

    not_applicable = record("burn-file", [], 0, status="not-applicable", error="not applicable: x")
    results = {**FIXED_RESULTS, "burn-file": not_applicable}
    (art / "a1" / "results.json").write_text(json.dumps({"version": 1, "forms": results}))

    async def body(app, pilot):
        await pilot.press("c")
        await pilot.pause()
        table = app.screen.query_one("#compare-table")
        rows = {table.get_row_at(i)[0].raw: table.get_row_at(i) for i in range(table.row_count)}
        verdict = table.get_column_index("verdict")
        assert rows["burn-file"][verdict].text == "not applicable"
        assert rows["cpp-aoti"][verdict].text == "✓ ok"

    with_pilot(art, body)


def test_the_list_and_the_detail_say_not_applicable_not_failed():
    """The same record in the form list and in the detail's last-run line: "n/a –", never "!"."""
    from deploytui.core.record import RunRecord
    from deploytui.families import registry
    from deploytui.views.tui import fmt
    from deploytui.views.tui.widgets import form_list
    from tui_support import record

    rec = RunRecord.from_json(record("burn-file", [], 0, status="not-applicable", error="not applicable: x"))
    assert fmt.verdict_mark(rec) == fmt.DASH
    for compact in (False, True):
        line = form_list.row(registry.get("burn-file"), "", rec, compact=compact).plain
        assert line.rstrip().endswith("n/a –") and "not run" not in line and "!" not in line, line


def test_palette_has_every_action(art):
    async def body(app, pilot):
        commands = list(app.get_system_commands(app.screen))
        titles = [c.title for c in commands]
        assert len(titles) == len(set(titles)), titles
        for t in (
            "Run highlighted form",
            "Run all forms",
            "Cancel run",
            "Build",
            "Compare",
            "Export report",
            "Help",
            "Show the Artifact tab",
            "Show the Diff tab",
        ):
            assert t in titles
        # each text names its key from the bindings: ship is i (s is Scale)
        help_of = {c.title: c.help for c in commands}
        assert help_of["Ship check"].endswith("(i)") and help_of["Scale"].endswith("(s)")
        assert help_of["Cancel run"].endswith("(escape x)") and help_of["Help"].endswith("(?)")
        await wait_for(pilot, lambda: app.session.ready)  # the tabs are mounted after the first frame
        await pilot.pause()
        next(c for c in commands if c.title == "Show the Diff tab").callback()
        await pilot.pause()
        assert app.main.query_one("#tabs").active == "tab-diff"
        from textual.binding import Binding

        assert all(isinstance(b, Binding) and b.id for b in app.BINDINGS)

    with_pilot(art, body)


def test_the_palette_and_the_help_follow_the_bindings(art):
    """Their texts come from the bindings: the ship check is `i` in both (the palette said `s`)."""

    async def body(app, pilot):
        commands = {c.title: c.help for c in app.get_system_commands(app.screen)}
        for b in app.BINDINGS:
            if b.tooltip:
                title = b.tooltip.split(" — ")[0]
                assert commands[title].endswith(f"({b.key_display or b.key.replace(',', ' ')})"), title
        assert commands["Ship check"].endswith("(i)") and "(s)" not in commands["Ship check"]
        assert commands["Scale"].endswith("(s)")
        await pilot.press("question_mark")
        await pilot.pause()
        from rich.console import Console

        console = Console(width=120, record=True)
        for static in app.screen.query("Static"):
            console.print(static.content)
        rows = [ln.split(None, 1) for ln in console.export_text().splitlines() if ln.strip()]
        assert [
            "i",
            "Ship check: bundle the highlighted form, run it where only the bundle and /usr exist",
        ] in [[r[0], " ".join(r[1].split())] for r in rows if len(r) == 2]

    with_pilot(art, body)


def test_help_screen_lists_keys(art):
    async def body(app, pilot):
        from deploytui.views.tui.help_screen import HelpScreen

        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        from rich.console import Console

        console = Console(width=100, record=True)
        for static in app.screen.query("Static"):
            console.print(static.content)
        text = console.export_text()
        for line in (
            "Run all",
            "Export report",
            "1 … 6",
            "Sort by column",
            "Close / cancel",
            "Measure: every form at batch",
        ):
            assert line in text, text
        await pilot.press("escape")
        assert app.screen is app.main

    with_pilot(art, body)


def test_app_process_never_imports_torch_onnx_numpy(art):
    code = """
import asyncio, sys
from deploytui.core.modelref import parse
from deploytui.views.tui.app import DeployApp
from deploytui.core.workspace import Workspace
async def go():
    app = DeployApp(Workspace.at(parse("a1"), sys.argv[1]))
    async with app.run_test(size=(150, 45)) as pilot:
        await pilot.pause()
        for k in ("j", "j", "j", "5", "6", "1"):
            await pilot.press(k)
        await app.workers.wait_for_complete()
        await pilot.press("c")
        await pilot.pause(0.3)
asyncio.run(go())
bad = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "onnx", "numpy", "onnxruntime"))
print("BAD", bad)
"""
    out = subprocess.run(
        [sys.executable, "-c", code, str(art)],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "BAD []" in out.stdout, out.stdout


# what the first frame never needs (the Scale screen's sweep store, a --data spec's parser, file
# hashes): imported when asked, not before the app is ready
LATER_IMPORTS = ("deploytui.scenarios.sweep.store", "deploytui.core.dataref", "hashlib")


def test_run_app_holds_the_collector_and_the_later_imports_until_the_first_frame(art):
    code = """
import gc, sys
from deploytui.core.modelref import parse
from deploytui.views.tui import _start, run_app
from deploytui.core.workspace import Workspace
seen = []
release = _start.release_gc
def spy():
    seen.append(gc.isenabled())
    release()
_start.release_gc = spy
app = run_app(Workspace.at(parse("a1"), sys.argv[1]), headless=True)
print("RESULT", app.return_code, app.ready_ms is not None, seen, gc.isenabled(), gc.get_freeze_count() > 0)
print("LATER", sorted(m for m in sys.argv[2:] if m in sys.modules))
"""
    out = subprocess.run(
        [sys.executable, "-c", code, str(art), *LATER_IMPORTS],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DEPLOYTUI_EXIT_ON_READY": "1"},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "RESULT 0 True [False] True True" in out.stdout, out.stdout
    assert "LATER []" in out.stdout, out.stdout


def test_full_collections_run_on_the_apps_timer_not_in_a_keys_turn():
    """After the first frame CPython never starts a full collection by itself (it came in the
    turn of a key's redraw); collect_at_rest runs it once ten young collections have gone by."""
    code = """
import gc
from deploytui.views.tui import _start
_start.hold_gc()
_start.release_gc()
assert gc.isenabled() and gc.get_threshold()[2] >= 1 << 30, gc.get_threshold()
_start.collect_at_rest()
for _ in range(12):
    gc.collect(1)
before = gc.get_count()[2]
_start.collect_at_rest()
print("COUNTS", before >= 10, gc.get_count()[2])
"""
    out = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "COUNTS True 0" in out.stdout, out.stdout


def test_build_screen_shows_progress_and_refreshes_the_list(art, monkeypatch):
    import deploytui.builder as build_mod
    from deploytui.builder import BuildEvent

    (art / "a1" / "a1.onnx").unlink()

    def fake_build(ctx, only=None, on_event=lambda e: None, cancel=None):
        on_event(BuildEvent("plan", total=2, text="export-onnx burn-embed"))
        on_event(BuildEvent("start", "export-onnx", "ONNX export", 1, 2))
        on_event(BuildEvent("line", "export-onnx", "ONNX export", 1, 2, text="[torch.onnx] exporting"))
        (art / "a1" / "a1.onnx").write_bytes(b"x" * 100)
        on_event(BuildEvent("end", "export-onnx", "ONNX export", 1, 2, status="ok", wall_s=1.5))
        on_event(BuildEvent("start", "burn-embed", "burn", 2, 2))
        on_event(BuildEvent("end", "burn-embed", "burn", 2, 2, status="unavailable", text="cargo not found"))
        from deploytui.spec import manifest

        return manifest.load(a1_at(art))

    monkeypatch.setattr(build_mod, "run_build", fake_build)

    async def body(app, pilot):
        from deploytui.views.tui.build_screen import BuildScreen

        assert app.status["onnxruntime"]
        await pilot.press("b")
        await wait_for(pilot, lambda: app.job == "")
        await pilot.pause()
        assert isinstance(app.screen, BuildScreen)
        log_text = "\n".join(str(line.text) for line in app.screen.query_one("#build-log").lines)
        assert "[torch.onnx] exporting" in log_text and "cargo not found" in log_text
        assert "build finished" in str(app.screen.query_one("#build-status").content)
        assert app.status["onnxruntime"] == ""  # the list knows the new artifact
        await pilot.press("escape")
        assert app.screen is app.main

    with_pilot(art, body)


def test_code_tab_highlights_cpp_and_shows_unknown_languages_as_plain_text():
    from textual.app import App

    from deploytui.views.form_view import Section
    from deploytui.views.tui.widgets.sections_view import SectionsView

    class Holder(App):
        def compose(self):
            yield SectionsView("Code", id="view")

    async def go():
        app = Holder()
        async with app.run_test(size=SIZE) as pilot:
            app.query_one("#view").show(
                "cpp-aoti",
                [
                    Section("Code", "wrapper.cpp", "code", text="int main() { return 0; }", language="cpp"),
                    Section("Code", "model.f90", "code", text="x = 1", language="fortran"),
                ],
            )
            await pilot.pause()
            cpp, other = app.query("TextArea")
            assert (cpp.language, cpp.text) == ("cpp", "int main() { return 0; }")
            assert (other.language, other.text) == (None, "x = 1")
            assert not app.query(".error")

    asyncio.run(go())


def test_narrow_terminal_gets_a_compact_form_list_and_footer(art):
    async def go():
        app = make_app(art)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            fl = app.main.query_one("#forms")
            assert fl.compact and fl.size.width < 40 and app.main.query_one("Footer").compact
            assert "not run" in str(fl.get_option("torch-eager").prompt)  # one line, its state whole
            assert "onnxruntime-nat… " in str(fl.get_option("onnxruntime-native-int8").prompt)
            await pilot.resize_terminal(150, 45)
            await pilot.pause()
            assert not fl.compact and fl.size.width > 40
            assert "onnxruntime-native-int8 " in str(fl.get_option("onnxruntime-native-int8").prompt)
            assert app.main.current == "torch-eager"

    asyncio.run(go())


def test_a_hidden_tab_is_drawn_when_it_is_shown(art):
    (art / "a1" / "results.json").write_text(json.dumps({"version": 1, "forms": FIXED_RESULTS}))

    async def body(app, pilot):
        status = app.main.query_one("#run-status")
        assert app.main.query_one("#tabs").active == "tab-artifact"
        app.main.query_one("#forms").select_key("cpp-torchscript")
        await pilot.pause(0.2)
        assert "cpp-torchscript" in str(app.main.query_one("#detail-title").content)
        assert "FAILED" not in str(status.content)  # hidden: not drawn for the move
        await pilot.press("5")
        assert "FAILED" in str(status.content)  # drawn as it comes into view
        err = app.main.query_one("#run-error")
        assert err.display and "panicked" in str(err.content)

    with_pilot(art, body)


def test_a_burst_of_moves_draws_the_visible_tab_for_its_first_and_last_form_only(art, monkeypatch):
    """The first move of a burst draws at once (a single move is answered in its own frame);
    the moves after it draw only the title, and the tab once the highlight rests."""
    (art / "a1" / "results.json").write_text(json.dumps({"version": 1, "forms": FIXED_RESULTS}))
    from deploytui.views.tui.widgets.run_view import RunView

    drawn = []
    real = RunView.show
    monkeypatch.setattr(
        RunView, "show", lambda self, key, *a, **kw: (drawn.append(key), real(self, key, *a, **kw))
    )

    async def body(app, pilot):
        await pilot.press("5")
        await pilot.pause(0.2)
        drawn.clear()
        fl = app.main.query_one("#forms")
        for _ in range(6):  # a held key: moves faster than the debounce (pilot.press waits for idle)
            fl.action_cursor_down()
        await pilot.pause()
        assert app.main.current == "cpp-torchscript"  # past the "C++ libtorch" header
        assert "cpp-torchscript" in str(app.main.query_one("#detail-title").content)  # at once
        await pilot.pause(0.3)
        assert len(drawn) == 2 and drawn[-1] == "cpp-torchscript", drawn
        assert "FAILED" in str(app.main.query_one("#run-status").content)

    with_pilot(art, body)


def test_export_waits_for_the_measurement_in_flight(art, quick_inspect, monkeypatch, tmp_path):
    from deploytui.views import report

    gate = tmp_path / "runs-may-end"  # the runs stay in flight until the export is queued
    install_fake_form(monkeypatch, art, gate=gate)
    out = tmp_path / "report.md"
    seen = {}
    real = report.write_report

    def write(ws, store, manifest, fmt="md", path=None):
        seen["stored"] = FAKE_KEY in store.forms  # the run ended, and was stored, before
        seen["children"] = running_with("fake_runner")
        return real(ws, store, manifest, fmt, out)

    monkeypatch.setattr(report, "write_report", write)

    async def body(app, pilot):
        app.main.query_one("#forms").select_key(FAKE_KEY)
        await pilot.pause()
        await pilot.press("r")
        await wait_for(pilot, lambda: running_with("fake_runner"))
        await pilot.press("e")
        assert any("Export queued" in (n.title or "") for n in app._notifications)
        assert not seen
        gate.touch()
        await wait_for(pilot, lambda: out.exists())
        await wait_for(pilot, lambda: app.job == "" and app.session.lane.running is None)

    with_pilot(art, body, notifications=True, runs=2, warmup=0)
    assert seen == {"stored": True, "children": []}
    assert FAKE_KEY in out.read_text()


def test_run_count_words_come_from_the_settings(art):
    async def body(app, pilot):
        await pilot.press("5")
        assert "7 runs after 2 warm-up" in str(app.main.query_one("#run-status").content)
        run_cmd = next(c for c in app.get_system_commands(app.screen) if c.title == "Run highlighted form")
        assert "7 runs after 2 warm-up" in run_cmd.help

    with_pilot(art, body, runs=7, warmup=2)


def test_worker_messages_are_dropped_once_quitting(art):
    from deploytui.views.tui import messages as msg

    async def body(app, pilot):
        app.session.shutdown()  # as q does, without leaving yet
        app.post_message(msg.RunStarted("torch-eager", 3, "a1"))
        await pilot.pause()
        assert app.session.live is None

    with_pilot(art, body)


def test_the_diff_tab_names_an_outputs_own_tolerance(tmp_path):
    """A bfloat16 output is judged at bfloat16's rtol (numerics.HALF_RTOL): the Diff tab's verdict
    says outputs may have their own, and that output's line names it."""
    import torch
    from safetensors.torch import save_file
    from textual.app import App, ComposeResult

    from deploytui.core.modelref import parse
    from deploytui.core.record import RunRecord
    from deploytui.core.workspace import Workspace
    from deploytui.views.tui.widgets.diff_view import DiffView

    ws = Workspace.at(parse("convnet"), tmp_path / "art", tmp_path / "bundles")
    ws.outputs_path("onnxruntime").parent.mkdir(parents=True)
    logits, head = torch.tensor([0.5, -1.0]), torch.tensor([0.3125, 2.0], dtype=torch.bfloat16)
    save_file({"logits": logits, "head": head}, ws.reference_path, metadata={"outputs": '["logits", "head"]'})
    step = torch.nextafter(head, torch.tensor(9.0, dtype=torch.bfloat16)).float()  # one rounding step
    save_file({"logits": logits, "head": step}, ws.outputs_path("onnxruntime"))
    rec = RunRecord.from_json(FIXED_RESULTS["onnxruntime"])

    class Host(App):
        def compose(self) -> ComposeResult:
            yield DiffView()

    async def go() -> str:
        async with Host().run_test(size=(120, 30)) as pilot:
            pilot.app.query_one(DiffView).show("onnxruntime", rec, ws)
            await pilot.pause()
            return str(pilot.app.query_one("#diff-summary").content)

    text = asyncio.run(go())
    assert "OK: every output within atol 1e-05 + rtol 1e-05·|eager| or its own (below)" in text, text
    assert "head [2] n=2: atol 1e-05 + rtol 0.016·|eager|" in text and "logits [2] n=2: max" in text, text
