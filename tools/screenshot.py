"""The README's picture: the app on the artifacts and results stored here, as Textual draws it.

    .venv/bin/python tools/screenshot.py [--form burn-embed] [--tab run] [-o docs/images/app.png]

Opens the app headless at 150×45 on the current artifacts (run `deploytui bench` first, so the
list has figures), highlights FORM, shows TAB, saves Textual's own SVG screenshot and turns it
into a PNG with `rsvg-convert` (Debian: librsvg2-bin). Nothing is typed: every figure on the
picture is one the app read from the store.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIZE = (150, 45)


async def svg(form: str, tab: str) -> str:
    from deploytui.views.tui.app import DeployApp
    from deploytui.views.tui.main_screen import TAB_KEYS
    from deploytui.views.tui.widgets.form_list import FormList

    app = DeployApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(1.0)
        await app.workers.wait_for_complete()
        app.main.query_one("#forms", FormList).select_key(form)
        await pilot.pause(0.5)
        await pilot.press(next(key for key, name in TAB_KEYS if name == tab))
        await pilot.pause(1.5)
        await app.workers.wait_for_complete()
        await pilot.pause(0.5)
        return app.export_screenshot(title="deploytui")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--form", default="torch-export")
    ap.add_argument("--tab", default="run")
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "docs" / "images" / "app.png")
    ap.add_argument("--width", type=int, default=1500, help="of the PNG, in pixels")
    args = ap.parse_args()
    if shutil.which("rsvg-convert") is None:
        print("error: rsvg-convert not found (apt-get install librsvg2-bin)", file=sys.stderr)
        return 1
    picture = asyncio.run(svg(args.form, args.tab))
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "app.svg"
        src.write_text(picture)
        args.output.parent.mkdir(parents=True, exist_ok=True)
        cmd = ["rsvg-convert", "-w", str(args.width), str(src), "-o", str(args.output)]
        subprocess.run(cmd, check=True)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
