"""Keypress-to-repaint latency of the app, from the user's side, against tmux's own in the same run.

The real app (`.venv/bin/deploytui`, on a private copy of the artifacts folder: the model's
folder holds symlinks to the built files and its own results.json and outputs/, so a run-all
here never touches your stored results) runs in a tmux server of its own at a fixed size. A
sample: read which form the detail pane names, take the time, send one down (or up) key with
`tmux send-keys`, poll `tmux capture-pane` until
- `first`: the detail pane's first line names the newly highlighted form;
- `settled`: the whole pane shows it — its first line and its border title name the form, and
  the pane then stays the same for STABLE_S (the visible tab redrawn, nothing left to come); the
  time is when that pane first showed. The Run tab's two live gauges are left out of "the same":
  while the highlighted form runs they tick 10 times a second by themselves (a run-all shows the
  Run tab, and its first form runs through most of the phase), so the pane would otherwise
  count as settled only at the next tick.
The reference is the same path through tmux without the app: a key sent to a `cat` in a second
window, polled until the terminal's echo shows it. App and reference samples take turns, so a
busy shared machine weighs on both alike; the ratios to the reference are the figures to trust.

Two phases: idle, and while a run-all (`a`) is going (cancelled afterwards). Between samples the
bench waits `--gap` seconds, a brisk user's pace. Prints JSON: median and p95 of each phase (first
line and settled pane), of the reference measured beside it, their ratios, and whether the goals
hold (settled p95 < 50 ms idle, < 100 ms during a run).

    .venv/bin/python bench/ui_latency.py [-n 40] [--gap 0.25] [--quick] [--model REF]

Needs tmux (Debian/Ubuntu: apt-get install tmux) and a built model (make build; the model is
a1 unless --model names another; the artifacts folder is $DEPLOYTUI_ARTIFACTS or the checkout's).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLS, ROWS = 150, 45
FORMS_W = 46  # the form list's width at this size (app.tcss #forms)
GOAL_P95_MS = {"idle": 50.0, "run_all": 100.0}
POLL_S = 0.001  # between two capture-pane calls
TIMEOUT_S = 3.0  # a sample that never shows is counted as lost
TITLE = re.compile(r"│ ?([a-z][a-z0-9-]+) — ")  # first line of the detail pane: "key — title"
STABLE_S = 0.05  # a pane unchanged this long (3 frames of Textual's 60 a second) is settled
BORDER = re.compile(r"[╭┌━─] ?([a-z][a-z0-9-]+) ?[─━]")  # the pane's top border, its title in it


class Tmux:
    def __init__(self, sock: str) -> None:
        self.base = ["tmux", "-L", sock, "-f", "/dev/null"]

    def __call__(self, *args: str, check: bool = True) -> str:
        out = subprocess.run([*self.base, *args], capture_output=True, text=True, check=False)
        if check and out.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {out.stderr.strip()}")
        return out.stdout

    def screen(self, target: str) -> list[str]:
        return self("capture-pane", "-p", "-t", target, check=False).splitlines()


def detail_key(lines: list[str]) -> str | None:
    """The form the detail pane names (its first title line), or None."""
    for line in lines[1:8]:
        m = TITLE.search(line[FORMS_W - 1 :])
        if m:
            return m.group(1)
    return None


def border_key(lines: list[str]) -> str | None:
    """The form the detail pane's border title names, or None."""
    for line in lines[0:6]:
        m = BORDER.search(line[FORMS_W - 1 :])
        if m:
            return m.group(1)
    return None


# the Run tab's two gauges: while the highlighted form runs they tick 10 times a second on their
# own (its elapsed time and RSS), so a pane that shows them never stays the same for STABLE_S
LIVE_ROWS = re.compile(r"[│ ]*(start-up|RSS) ")


def pane(lines: list[str]) -> list[str]:
    """The detail pane's part of the screen (right of the form list, above the footer), without
    the live gauge rows: what a key changes."""
    return [line[FORMS_W - 1 :] for line in lines[:-1] if not LIVE_ROWS.match(line[FORMS_W - 1 :])]


def list_order() -> list[str]:
    """Form keys in the order the list shows them (grouped by family)."""
    sys.path.insert(0, str(ROOT / "src"))
    from deploytui.families import registry

    return [f.key for fam in registry.GROUPS for f in registry.FORMS if f.family == fam]


def model_slug(text: str) -> str:
    """The model the app will show: its folder's name."""
    sys.path.insert(0, str(ROOT / "src"))
    from deploytui.core.modelref import parse

    return parse(text).slug


def wait_for(pred, timeout: float, what: str, screen=None) -> None:
    """Poll `pred` until it holds; past `timeout`, exit saying what was awaited (and the last
    screen, when `screen` gives it)."""
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            seen = "\n".join(screen()) if screen is not None else ""
            raise SystemExit(f"timed out waiting for {what}" + (f"; the screen:\n{seen}" if seen else ""))
        time.sleep(0.05)


def mirror_artifacts(src: Path, dest: Path, slug: str) -> Path:
    """A folder of symlinks to `src`'s entries; the model's folder is one of its own, holding
    symlinks to the built files, a real copy of results.json (if any) and its own outputs/."""
    dest.mkdir()
    for entry in src.iterdir():
        if entry.name != slug:
            (dest / entry.name).symlink_to(entry)
    model = dest / slug
    model.mkdir()
    for entry in (src / slug).iterdir():
        if entry.name.startswith("results.json") or entry.name in ("outputs", ".locks"):
            continue
        (model / entry.name).symlink_to(entry)
    (model / "outputs").mkdir()
    if (src / slug / "results.json").exists():
        shutil.copy2(src / slug / "results.json", model / "results.json")
    return dest


def app_sample(tmux: Tmux, order: list[str], n_moved: int) -> tuple[float | None, float | None]:
    """One highlight move in the app: seconds from send-keys until the detail pane's first line
    names the form now highlighted, and until the whole pane is settled on it (None: never,
    within TIMEOUT_S)."""
    current = detail_key(tmux.screen("bench:app"))
    if current not in order:
        return None, None
    i = order.index(current)
    down = (n_moved % 2 == 0 and i + 1 < len(order)) or i == 0
    want = order[i + 1] if down else order[i - 1]
    first = shown = None
    before: list[str] = []
    t0 = time.perf_counter()
    tmux("send-keys", "-t", "bench:app", "Down" if down else "Up")
    while (now := time.perf_counter() - t0) < TIMEOUT_S:
        lines = tmux.screen("bench:app")
        if first is None and detail_key(lines) == want:
            first = now
        if first is not None and border_key(lines) == want and detail_key(lines) == want:
            if pane(lines) == before and shown is not None and now - shown >= STABLE_S:
                return first, shown  # the same pane for STABLE_S: settled when it was first shown
            if pane(lines) != before:
                before, shown = pane(lines), now
        time.sleep(POLL_S)
    return first, None


def ref_sample(tmux: Tmux, i: int) -> float | None:
    """The same path without the app: a token sent to `cat`, until the tty's echo shows it."""
    token = f"ref{i}x"
    t0 = time.perf_counter()
    tmux("send-keys", "-t", "bench:ref", token, "Enter")
    while time.perf_counter() - t0 < TIMEOUT_S:
        if any(token in line for line in tmux.screen("bench:ref")):
            return time.perf_counter() - t0
        time.sleep(POLL_S)
    return None


def stats(samples: list[float | None]) -> dict:
    """n, lost, median, p95 and max in ms."""
    ok = sorted(s * 1e3 for s in samples if s is not None)
    if not ok:
        return {"n": 0, "lost": len(samples)}
    p95 = statistics.quantiles(ok, n=20, method="inclusive")[18] if len(ok) > 1 else ok[0]
    return {
        "n": len(ok),
        "lost": len(samples) - len(ok),
        "median_ms": round(statistics.median(ok), 1),
        "p95_ms": round(p95, 1),
        "max_ms": round(ok[-1], 1),
    }


def phase(tmux: Tmux, order: list[str], n: int, gap: float) -> dict:
    first, settled, ref = [], [], []
    for i in range(n):
        ref.append(ref_sample(tmux, i))
        time.sleep(gap / 2)
        f, s = app_sample(tmux, order, i)
        first.append(f)
        settled.append(s)
        time.sleep(gap)
    r = stats(ref)
    out: dict = {"first_line": stats(first), "settled": stats(settled), "reference": r}
    for name in ("first_line", "settled"):
        a = out[name]
        if a.get("n") and r.get("n"):
            a["ratio_median"] = round(a["median_ms"] / r["median_ms"], 2)
            a["ratio_p95"] = round(a["p95_ms"] / r["p95_ms"], 2)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=40, help="samples per phase (each app sample beside a reference)")
    ap.add_argument("--gap", type=float, default=0.25, help="seconds between two key presses")
    ap.add_argument("--skip-run", action="store_true", help="the idle phase only")
    ap.add_argument("--quick", action="store_true", help="5 samples a phase, short waits (the test suite's)")
    ap.add_argument("--model", default="a1", metavar="REF", help="the model the app shows (default a1)")
    args = ap.parse_args()
    if args.quick:
        args.n, args.gap = min(args.n, 5), 0.1
    if not shutil.which("tmux"):
        raise SystemExit("tmux not found: install it (Debian/Ubuntu: apt-get install tmux)")
    exe = ROOT / ".venv" / "bin" / "deploytui"
    art = Path(os.environ.get("DEPLOYTUI_ARTIFACTS", ROOT / "artifacts")).resolve()
    slug = model_slug(args.model)
    if not exe.exists() or not (art / slug / "manifest.json").exists():
        raise SystemExit(f"build the project first: make build ({art / slug / 'manifest.json'} is missing)")
    order = list_order()
    sock = f"deploytui-latency-{os.getpid()}"
    tmux = Tmux(sock)
    with tempfile.TemporaryDirectory(prefix="deploytui-latency-") as tmp:
        mirror = mirror_artifacts(art, Path(tmp) / "artifacts", slug)
        app_args = ["--model", args.model, "--artifacts", str(mirror)]
        try:
            tmux(
                *("start-server", ";", "set-option", "-g", "status", "off", ";"),
                *("new-session", "-d", "-s", "bench", "-n", "app", "-x", str(COLS), "-y", str(ROWS)),
                # COLUMNS/LINES (a pytest-xdist worker has them) would size the app at 80x24 in
                # the 150x45 pane: Textual asks shutil, which reads them first
                shlex.join(["env", "-u", "COLUMNS", "-u", "LINES", str(exe), *app_args]),
            )
            tmux("new-window", "-d", "-t", "bench", "-n", "ref", "cat")
            wait_for(
                lambda: (
                    detail_key(tmux.screen("bench:app")) == order[0]
                    and any("Artifact" in ln for ln in tmux.screen("bench:app"))
                ),
                120,
                "the app to show its tabs",
                lambda: tmux.screen("bench:app"),
            )
            time.sleep(1.0)
            for i in range(3 if args.quick else 6):  # warm-up: the first visit of each form inspects it
                app_sample(tmux, order, i)
                time.sleep(0.5)
            result: dict = {"size": f"{COLS}x{ROWS}", "gap_s": args.gap}
            result["idle"] = phase(tmux, order, args.n, args.gap)
            if not args.skip_run:
                tmux("send-keys", "-t", "bench:app", "a")
                wait_for(
                    lambda: any("running" in ln for ln in tmux.screen("bench:app")),
                    30,
                    "the run-all to start",
                )
                time.sleep(0.5)
                result["run_all"] = phase(tmux, order, args.n, args.gap)
                tmux("send-keys", "-t", "bench:app", "Escape")
                time.sleep(1.0)
            tmux("send-keys", "-t", "bench:app", "q")
            time.sleep(1.0)
        finally:
            tmux("kill-server", check=False)
    for name, goal in GOAL_P95_MS.items():
        if name in result and "p95_ms" in result[name]["settled"]:
            result[name]["goal_settled_p95_ms"] = goal
            result[name]["within_goal"] = result[name]["settled"]["p95_ms"] < goal
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
