"""Every screen at 80×24, 120×40 and 200×50 on stored data (every form measured): snapshots, and
checks that no row of a table or chart is cut or runs into the next — one line per form in the
list with its start-up and RSS, Compare's figures in view, whole and distinct chart labels, the
Choose screen's reasons whole.

Regenerate the pictures after an intended change:
    pytest tests/test_tui_layout.py --snapshot-update
"""

from __future__ import annotations

import asyncio
import re
import textwrap

import pytest

from deploytui.core import units
from deploytui.core.record_parts import median
from deploytui.families import registry
from tui_support import a1_at, full_results, make_artifacts

SIZES = [(80, 24), (120, 40), (200, 50)]
SCREENS = {  # name -> the key that opens it (None: the main screen; build: pushed with events)
    "main": None,
    "compare": "c",
    "choose": "o",
    "serve": "v",
    "scale": "s",
    "build": None,
    "help": "question_mark",
    "models": "m",
}
RESULTS = full_results()


@pytest.fixture
def full_app(tmp_path, monkeypatch):
    art = make_artifacts(tmp_path, results=RESULTS)
    monkeypatch.setenv("DEPLOYTUI_ARTIFACTS", str(art))
    monkeypatch.setenv("DEPLOYTUI_CACHE", str(tmp_path / "cache"))
    from deploytui.views import form_view

    monkeypatch.setattr(form_view, "sections", lambda form, manifest, ws: [])
    from deploytui.scenarios.serving import store as serve_store
    from deploytui.scenarios.sweep import store as sweep_store
    from test_serve import _cell
    from test_sweep import synthetic_points

    ws = a1_at(art)
    cells = serve_store.load(ws)
    for i, f in enumerate(registry.FORMS[:8]):
        for batch in (1, 8, 32):
            cells.put(f"{f.key}@b{batch}@t1", _cell(f.key, batch, 0.004 * (i + 1) * batch))
    sweep = sweep_store.SweepStore(ws.sweep_path)
    for p in synthetic_points():
        sweep.put(p)
    from deploytui.views.tui.app import DeployApp

    return DeployApp(ws)


async def _settle(pilot) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause(0.2)


async def open_screen(pilot, name: str) -> None:
    await _settle(pilot)
    if name == "build":
        from deploytui.builder import BuildEvent
        from deploytui.views.tui.build_screen import BuildScreen

        screen = BuildScreen()
        await pilot.app.push_screen(screen)
        screen.add_event(BuildEvent("plan", "", "", 0, 3, text="export-onnx, burn-embed, cpp-build"))
        screen.add_event(BuildEvent("start", "export-onnx", "ONNX export", 1, 3))
        screen.add_event(
            BuildEvent("line", "export-onnx", "", 1, 3, text="[torch.onnx] exporting " + "x" * 300)
        )
        screen.add_event(BuildEvent("end", "export-onnx", "ONNX export", 1, 3, status="ok", wall_s=1.5))
    elif SCREENS[name]:
        await pilot.press(SCREENS[name])
    await _settle(pilot)
    from textual.widgets import Input

    for field in pilot.app.screen.query(Input):
        field.cursor_blink = False  # the same picture every time
    await pilot.pause()


def screen_lines(app) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("name", list(SCREENS))
def test_screen_at_size(full_app, snap_compare, name, size):
    async def before(pilot):
        await open_screen(pilot, name)

    assert snap_compare(full_app, terminal_size=size, run_before=before)


def run_at(app, size, name, check) -> None:
    async def go():
        async with app.run_test(size=size) as pilot:
            await open_screen(pilot, name)
            check(app, screen_lines(app))

    asyncio.run(go())


def figures(key: str) -> tuple[str, str]:
    rec = RESULTS[key]
    return units.seconds(median(rec["wall_s"])), units.short_size(median(rec["peak_rss_bytes"]))


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_form_list_is_one_line_a_form_with_its_figures(full_app, size):
    def check(app, lines):
        fl = app.main.query_one("#forms")
        assert all(h == 1 for h in fl._heights.values()), "a row wrapped"
        shown = 0
        for f in registry.FORMS:
            rec = RESULTS[f.key]
            width = 16 if fl.compact else 23  # form_list.NARROW / WIDE
            prefix = f.key if len(f.key) <= width else f.key[: width - 1] + "…"
            found = [line for line in lines if re.search(rf"[●○▶] {re.escape(prefix)}(\s|$)", line)]
            if not found:
                continue  # below the fold: the list scrolls
            shown += 1
            assert len(found) == 1, f.key
            if rec["status"] == "ok":
                start, rss = figures(f.key)
                assert re.search(rf" {re.escape(start)} +{re.escape(rss)} [✓✗]", found[0]), found[0]
        assert shown >= min(len(registry.FORMS), fl.size.height - len(registry.GROUPS))

    run_at(full_app, size, "main", check)


@pytest.mark.parametrize("width", [80, 100, 119, 200])
def test_the_footer_ends_with_the_palette_key_and_nothing_past_it(full_app, width):
    # Textual's compact footer (the main screen's, under 120 columns) left its last column to the
    # keys that overflow under the palette key: "^p paletteq" at 100 columns, "^p palettex" at 80
    def check(app, lines):
        assert lines[-1].rstrip().endswith("▏^p palette"), lines[-1]

    run_at(full_app, (width, 24), "main", check)


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_compare_shows_the_figures_and_whole_distinct_chart_labels(full_app, size):
    def check(app, lines):
        from textual.widgets import DataTable

        table = app.screen.query_one("#compare-table", DataTable)
        right = 0
        for column in table.ordered_columns:
            right += column.get_render_width(table)
            if column.key.value in ("start_med", "rss", "size", "diff"):
                assert right <= table.size.width, f"{column.key.value} past the right edge"
        head = next(line for line in lines if "Form" in line and "Start" in line)
        for label in ("RSS", "Ship", "max|diff|"):
            assert label in head
        measured = [k for k, r in RESULTS.items() if r["status"] == "ok"]
        for chart_id, value in (("#chart-start", 0), ("#chart-rss", 1)):
            chart = app.screen.query_one(chart_id)
            text = str(chart.render())
            rows = text.splitlines()[1:]  # under the title
            assert len(rows) == len(measured)
            names = []
            for key, line in zip(measured, rows, strict=True):
                name, _, rest = line.partition(" ")
                assert key == name or (name.endswith("…") and key.startswith(name[:-1])), line
                assert rest.rstrip().endswith(" " + figures(key)[value]), line  # the value whole
                assert sum(k in line for k in measured if len(k) > len(key) or k == key) <= 1
                names.append(name)
            assert len(set(names)) == len(names), "two labels read the same"

    run_at(full_app, size, "compare", check)


@pytest.mark.parametrize("size", [*SIZES, (160, 45)], ids=[f"{w}x{h}" for w, h in [*SIZES, (160, 45)]])
def test_choose_shows_each_reason_whole_at_every_size(full_app, size):
    def check(app, lines):
        from textual.widgets import DataTable

        table = app.screen.query_one("#choose-table", DataTable)
        why_column = table.ordered_columns[-1]
        # every column in view, the reasons' too: nothing past the right edge
        assert (
            sum(c.get_render_width(table) for c in table.ordered_columns)
            <= table.scrollable_content_region.width
        )
        for v in app.screen.answer.others:
            cell = table.get_row(v.form.key)[-1]
            assert cell.plain == " ".join(v.why.split())  # whole, not cut
            rows = table.rows[v.form.key].height
            wrapped = textwrap.wrap(cell.plain, why_column.width)  # at words, as the cell wraps it
            assert rows >= len(wrapped), (v.form.key, rows, wrapped)  # its row tall enough for it

    run_at(full_app, size, "choose", check)


def test_the_model_picker_is_one_line_a_model_its_name_apart_from_its_description():
    from textual.app import App

    from deploytui.views.tui.model_screen import ModelScreen

    models = [
        ("a1", "built · the reference page's MLP: Linear 4->8, ReLU, Linear 8->3, closed-form weights"),
        ("/home/me/work/models/char_lm.py:make", "built · CharLM · 37,024 params · input I64[8, 32]"),
        ("torchvision:mobilenet_v3_small,input_shape=1x3x64x64", "built · MobileNetV3 · 2,542,856 params"),
    ]
    # at 80 columns a path keeps its end, a name with options its name (the comma's options
    # cut); at 200 the names' column widens and every name is whole
    shown_at = {
        80: ["a1", "…e/work/models/char_lm.py:make", "…chvision:mobilenet_v3_small,…"],
        200: [name for name, _ in models],
    }

    class Holder(App):
        def on_mount(self):
            self.push_screen(ModelScreen(models, "a1"))

    async def go(width: int) -> None:
        async with Holder().run_test(size=(width, 24)) as pilot:
            await pilot.pause()
            lines = screen_lines(pilot.app)
            for (_text, about), name in zip(models, shown_at[width], strict=True):
                line = next((ln for ln in lines if f" {name} " in ln), None)
                assert line is not None, (name, lines)
                after = line.split(f" {name} ", 1)[1].lstrip()
                assert about.startswith(after.split("…")[0].rstrip(" ▎│")), (width, line)  # on its line
                assert re.search(rf" {re.escape(name)} {{2,}}built", line), (width, line)  # apart
            assert not any(ln.strip(" ▊▎│").startswith("Linear") for ln in lines), lines  # none wrapped

    for width in (80, 200):
        asyncio.run(go(width))


def test_chart_ticks_and_bars_never_run_together():
    from deploytui.core import plot

    labels = [f"form-{i:02d}-with-a-long-name" for i in range(30)]
    for width in (20, 40, 80, 200):
        text = plot.plain(
            plot.hbars(
                labels, [10.0**i for i in range(30)], width, 12, log=True, value_text=lambda v: f"{v:.0e}"
            )
        )
        lines = text.splitlines()
        assert len(lines) <= 12 and lines[-1].startswith("… ")
        assert all(len(line) <= width for line in lines)
        _ticks, shown = plot.thin(list(range(30)), [f"1e{i}" for i in range(30)], width)
        assert sum(len(s) + 1 for s in shown) <= width


def test_a_short_table_is_laid_out_whole_for_the_pane_and_a_long_one_scrolls():
    from textual.app import App

    from deploytui.views.form_view import Section
    from deploytui.views.tui.widgets.sections_view import MAX_ROWS, SectionsView

    hint = "not built: `deploytui build --model torchvision:mnasnet0_5 --artifacts /tmp/tv --arch aarch64`"
    title = "Architectures: this machine's build beside aarch64's (`deploytui build --arch aarch64 -x`)"
    prose = Section("Artifact", title, "table", columns=["architecture", "state"],
                    rows=[["x86_64 (this machine)", "✓ runs there"], ["aarch64", hint]])  # fmt: skip
    data = Section("Artifact", "ONNX graph", "table", columns=["op", "count"],
                   rows=[[f"Op{i}", str(i)] for i in range(MAX_ROWS + 1)])  # fmt: skip
    # ldd's table: no prose, but its short columns together wider than the pane at 80 columns
    ldd_rows = [["libstdc++.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "2.3 MiB", "system"]]
    ldd = Section("Artifact", "ldd", "table", columns=["needs", "resolves to", "size", "kind"], rows=ldd_rows)
    # What ships: short columns wider together than the pane at 80 columns (a record a row there)
    ships_rows = [["a1/a1.safetensors", "540 B", "e888349de391", "as built"],
                  ["load script (deploytui.families.pytorch.torch_runner)", "(source)", "", ""]]  # fmt: skip
    ships = Section("Artifact", "What ships", "table", rows=ships_rows,
                    columns=["file", "size", "sha256", "against the build"])  # fmt: skip

    class Holder(App):
        def compose(self):
            yield SectionsView("Artifact", id="view")

    async def go(width: int) -> None:
        app = Holder()
        async with app.run_test(size=(width, 100)) as pilot:  # tall enough for all of it
            app.query_one("#view").show("tract", [prose, ships, ldd, data])
            await pilot.pause()
            lines = [line.rstrip() for line in screen_lines(app)]
            flat = "".join("".join(lines).split())
            assert all(len(line) <= width for line in lines)
            # the hint whole, wrapped (a long word folded) within the width, not past its edge
            assert "".join(hint.split()) in flat and "".join(title.split()) in flat, (width, lines)
            assert any("x86_64 (this machine)" in line for line in lines)  # short columns keep their width
            assert len(app.query("DataTable")) == 1  # the long table stays a DataTable
            # every cell whole, in a table or a record
            for cell in (c for r in [*ships_rows, *ldd_rows] for c in r if c):
                assert _in_order("".join(cell.split()), flat), (width, cell, lines)
            if width == 40:  # a record a row: `column: value`, each value whole
                assert "file:loadscript(deploytui.families.pytorch.torch_runner)" in flat, lines
                assert "size:2.3MiB" in flat, lines
            if width == 200:  # wide enough: one line a row, its figures beside its name
                row = re.compile(r"libstdc\+\+\.so\.6 +/usr/\S+ +2\.3 MiB +system")
                assert any(row.search(ln) for ln in lines), lines

    for width in (40, 80, 200):  # 40: the detail pane's width at 80 columns
        asyncio.run(go(width))


def test_a_long_table_keeps_its_figures_in_view_and_shows_names_as_they_are():
    from textual.app import App

    from deploytui.views.form_view import Section
    from deploytui.views.tui.widgets.sections_view import MAX_ROWS, SectionsView

    # safetensors' tensors as a Hugging Face decoder names them: the names wider than the pane
    names = [f"model.layers.{i}.self_attn.q_proj.weight" for i in range(MAX_ROWS + 5)]
    names[1] = "std::to_string[abi:cxx11](int)"  # markup to Rich, a name here
    names[2] = "a[/b]c"  # a closing tag with no opening: a MarkupError when read as markup
    rows = [[n, "F32", "64×64", f"{16384 + i} B"] for i, n in enumerate(names)]
    columns = ["tensor", "dtype", "shape", "bytes"]
    tensors = Section("Artifact", "Tensors", "table", columns=columns, rows=rows)
    members = Section("Artifact", "a1.pt2", "tree", rows=[["a1[abi:cxx11]/data[b]c/0", "1.0 KiB"]])

    class Holder(App):
        def compose(self):
            yield SectionsView("Artifact", id="view")

    async def go(width: int) -> None:
        app = Holder()
        async with app.run_test(size=(width, 40)) as pilot:
            app.query_one("#view").show("torch-eager", [members, tensors])
            for _ in range(50):  # laid out for its width, then measured when idle (later when busy)
                await pilot.pause(0.1)
                lines = [line.rstrip() for line in screen_lines(app)]
                if sum(r[-1] in "".join(lines) for r in rows) >= 10:
                    break
            for folder in ("a1[abi:cxx11]/", "data[b]c/"):  # as named, brackets and all
                assert any(folder in ln for ln in lines), lines
            assert all(len(line) <= width for line in lines)
            shown = [r for r in rows if any(r[-1] in ln for ln in lines)]
            assert len(shown) >= 10, lines  # the rows in view, each with its figures
            for name, dtype, shape, size in shown:
                at = next(i for i, ln in enumerate(lines) if size in ln)
                assert dtype in lines[at] and shape in lines[at], (width, lines[at])
                named = lines[at - 1] if width == 40 else lines[at]  # 40: stacked, the name above
                both_ends = re.escape(name[:4]) + r"\S*…\S*" + re.escape(name[-4:])  # cut in the middle
                assert name in named or (width < 200 and re.search(both_ends, named)), (width, named)

    for width in (40, 60, 200):  # 40: the detail pane's width at 80 columns
        asyncio.run(go(width))


def _in_order(text: str, screen: str) -> bool:
    """`text`'s characters appear in `screen` in order (a cell wrapped beside other columns)."""
    rest = iter(screen)
    return all(ch in rest for ch in text)
