"""A fresh machine's `make test`, phase by phase, and `make run`'s first screen.

A new clone of HEAD in a scratch folder, with empty caches: `CACHE`/`DEPLOYTUI_CACHE` (pip's
downloads, the wheelhouse, inductor, the ship venvs), `CARGO_HOME` (cargo's registry) and
`CARGO_TARGET_DIR` all under it; rustup's toolchains are kept. Then the phases of `make test`:
each line of its recipe (`make -j3 rust-deps apt-parts lint-python build`, …), read from the Makefile and
run as it runs it, timed from spawn to exit (pytest's 15 slowest tests are kept), then `make
check` on the now warm venv (the quick loop). Inside a phase, the tools' own clocks split it:
the install's progress line, cargo's `Finished … in`, each build step's time, pytest's total.

`--run` measures `make run` instead, on its own fresh clone and caches: the time to the app's
first frame and to each form its background build finishes (the app writes them to
DEPLOYTUI_TIMELINE), under a pseudo-terminal, quitting once the first form is built.

The figures go to a JSON file and to `docs/results/setup-time.md` (`--write`); the reference
measured in the same run is the machine's own: its cores and its load average before and after,
which the table prints, because timings on a machine shared with other builds are inflated.
`--import-phases FILE` turns a log of tests' phases (lines `PHASE rc=N SECONDS`s, as the
coordinator's phases.sh writes them) into the same JSON, for a "before" column (`--before`).

    .venv/bin/python bench/fresh_setup.py --json /tmp/after.json [--before before.json] [--write]
    .venv/bin/python bench/fresh_setup.py --run --json /tmp/run.json
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import re
import resource
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECK = ("check", ["check"])


def test_groups(makefile: Path = ROOT / "Makefile") -> list[tuple[str, list[str]]]:
    """The lines of `make test`'s recipe, as (name, make arguments): the phases, run as it runs
    them (`$(MAKE) ... -j2 a b c` -> ("a+b+c", ["-j2", "a", "b", "c"]))."""
    recipe = makefile.read_text().split("\ntest:\n", 1)[1]
    groups = []
    for line in recipe.splitlines():
        if not line.startswith("\t"):
            break
        words = [w for w in line.split()[1:] if w != "--no-print-directory"]
        targets = [w for w in words if not w.startswith("-")]
        groups.append(("+".join(targets), words))
    return groups


GENERATED = "<!-- written by bench/fresh_setup.py --write from its JSON: do not edit -->"
DURATION = re.compile(r"^([\d.]+)s (call|setup|teardown)\s+(\S+)")


def fresh_clone(where: Path, share: list[str]) -> tuple[Path, dict[str, str]]:
    """A clone of HEAD (committed work only) and the environment of a machine that has never
    built deploytui: every cache empty, rustup's toolchains kept. The cache folders named in
    `share` (e.g. wheelhouse, ship: the ship checks' downloads and venvs, some GiB) are links to
    this user's instead, for a disk too small for two of them. An existing `where` (--resume) is
    used as it is."""
    clone, cache = where / "clone", where / "cache"
    if not clone.exists():
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(clone)], check=True)
    own = Path(os.environ.get("DEPLOYTUI_CACHE", Path.home() / ".cache" / "deploytui"))
    for name in share:
        link = cache / name
        if not link.exists():
            link.parent.mkdir(parents=True, exist_ok=True)
            (own / name).mkdir(parents=True, exist_ok=True)
            link.symlink_to(own / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CARGO_", "DEPLOYTUI_", "VIRTUAL_ENV"))}
    env["RUSTUP_HOME"] = os.environ.get("RUSTUP_HOME", str(Path.home() / ".rustup"))
    cargo_bin = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo")) / "bin"
    env["PATH"] = f"{cargo_bin}:{env.get('PATH', '')}"
    env.update(
        CACHE=str(cache),
        DEPLOYTUI_CACHE=str(cache),
        CARGO_HOME=str(where / "cargo-home"),
        CARGO_TARGET_DIR=str(cache / "cargo-target"),
    )
    return clone, env


def pick_lines(spec: str | None) -> list[tuple[str, list[str]]]:
    """`make test`'s lines to run: all of them then `make check` (no spec), or "N", "A-B", "A-"
    (1-based, of make test's lines only)."""
    groups = test_groups()
    if not spec:
        return [*groups, CHECK]
    first, _, last = spec.partition("-")
    end = int(last) if last else (len(groups) if _ else int(first))
    return groups[int(first) - 1 : end] + ([CHECK] if end >= len(groups) else [])


def machine() -> dict[str, object]:
    return {"cores": os.cpu_count(), "load_avg_1m": os.getloadavg()[0]}


def run_phases(clone: Path, env: dict[str, str], logs: Path, lines: str | None) -> dict[str, object]:
    phases: list[dict[str, object]] = []
    for name, args in pick_lines(lines):
        if "test-python" in args:
            args = [*args, "PYTEST_ADDOPTS=--durations=15"]
        log = logs / f"{name}.log"
        before = machine()
        cpu0 = _children_cpu()
        t0 = time.monotonic()
        loads: list[float] = []
        sampling = threading.Event()
        sampler = threading.Thread(target=_sample_load, args=(loads, sampling), daemon=True)
        sampler.start()
        with log.open("w") as out:
            rc = subprocess.run(
                ["make", *args], check=False, cwd=clone, env=env, stdout=out, stderr=subprocess.STDOUT
            ).returncode
        sampling.set()
        sampler.join()
        phase: dict[str, object] = {
            "phase": name,
            "seconds": round(time.monotonic() - t0, 1),
            "cpu_seconds": round(_children_cpu() - cpu0, 1),  # user + sys of every process it ran
            "rc": rc,
            "load_before": before["load_avg_1m"],
            "load_after": machine()["load_avg_1m"],
            "load_mean": round(sum(loads) / len(loads), 1) if loads else None,  # 1-min average, every 15 s
            "load_max": round(max(loads), 1) if loads else None,
            "log": str(log),
        }
        text = log.read_text(errors="replace")
        phase["inside"] = splits(text, clone)
        if "test-python" in args:
            phase["slowest"] = slowest(text)
            phase["summary"] = last_line(text)
        phases.append(phase)
        print(f"{name:16} {phase['seconds']:8.1f} s  rc={rc}", flush=True)
        if rc != 0:
            break
    return {"phases": phases}


STEP = re.compile(r"^\[\d+/\d+\] (\S+):")
STEP_END = re.compile(r"^\s+(?:(\S+): )?(?:ok|failed|up-to-date)\b.*?\(([\d.]+) s\)")
CARGO_DONE = re.compile(r"Finished `\w+` profile .* in (?:(\d+)m )?([\d.]+)s")
INSTALL_DONE = re.compile(r"^(pip|install): done .* (\d+):(\d\d)$")  # pip's line before uv
PYTEST_DONE = re.compile(r" in ([\d.]+)s")
FAMILIES = (("torch exports", "export-"), ("C++", "cpp-"), ("probes", "probe-"))


def splits(text: str, clone: Path) -> dict[str, float]:
    """What the tools' own clocks say inside one phase: the install's time, cargo's, the build steps'
    per family, pytest's."""
    found: dict[str, float] = {}
    for line in text.splitlines():
        if m := INSTALL_DONE.match(line):
            found[m[1]] = int(m[2]) * 60 + int(m[3])
    deps = clone / "artifacts" / "shared" / "logs" / "rust-deps.log"
    if "rust-deps" in text and deps.is_file():  # one cargo command per group, one after the other
        done = [
            int(m[1] or 0) * 60 + float(m[2]) for m in CARGO_DONE.finditer(deps.read_text(errors="replace"))
        ]
        found["cargo: rust-deps"] = round(sum(done), 1)
    step = ""  # the last step started: the end of a build from before steps ran side by side
    for line in text.splitlines():
        if m := STEP.match(line):
            step = m[1]
        elif (m := STEP_END.match(line)) and (m[1] or step):
            name = m[1] or step
            family = next((f for f, prefix in FAMILIES if name.startswith(prefix)), "Rust steps")
            key = f"build: {family}"
            found[key] = round(found.get(key, 0.0) + float(m[2]), 1)
            step = ""
    cargo = [int(m[1] or 0) * 60 + float(m[2]) for m in CARGO_DONE.finditer(text)]
    if cargo and "build:" not in " ".join(found):
        found["cargo (clippy, test)"] = round(sum(cargo), 1)
    done = [m for m in (PYTEST_DONE.search(ln) for ln in text.splitlines() if " passed" in ln) if m]
    if done:
        found["pytest"] = float(done[-1][1])
    return {k: v for k, v in found.items() if v >= 2.0}  # not a no-op build's up-to-date steps


def _sample_load(into: list[float], stop: threading.Event) -> None:
    while not stop.wait(15.0):
        into.append(os.getloadavg()[0])


def _children_cpu() -> float:
    """CPU seconds (user + sys) of every finished descendant so far: unlike the wall time, what
    other builds on the machine do not inflate much."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def slowest(text: str, n: int = 15) -> list[dict[str, object]]:
    found = [(float(m[1]), m[2], m[3]) for m in (DURATION.match(ln) for ln in text.splitlines()) if m]
    return [{"seconds": s, "when": w, "test": t} for s, w, t in sorted(found, reverse=True)[:n]]


def last_line(text: str) -> str:
    lines = [ln.strip("= ") for ln in text.splitlines() if re.search(r"\d+ (passed|failed)", ln)]
    return lines[-1] if lines else ""


def run_app(clone: Path, env: dict[str, str], logs: Path, timeout_s: float) -> dict[str, object]:
    """`make run` under a pseudo-terminal (150×45) until the app's build has finished one form."""
    timeline = logs / "timeline"
    env = {**env, "DEPLOYTUI_TIMELINE": str(timeline), "TERM": "xterm-256color"}
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 45, 150, 0, 0))
    t0 = time.monotonic_ns()
    proc = subprocess.Popen(
        ["make", "run"], cwd=clone, env=env, stdin=slave, stdout=slave, stderr=slave, start_new_session=True
    )
    os.close(slave)
    screen_log = (logs / "make-run.out").open("wb")
    events: list[tuple[float, str]] = []
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    screen_log.write(os.read(master, 65536))
                except OSError:
                    break
            if timeline.exists():
                events = [
                    ((int(t) - t0) / 1e9, what)
                    for t, what in (ln.split(" ", 1) for ln in timeline.read_text().splitlines())
                ]
                if any(what.startswith("built ") for _, what in events):
                    break
        os.write(master, b"q")
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 15)
            proc.wait()
        os.close(master)
        screen_log.close()
    first = {what: round(t, 1) for t, what in reversed(events)}
    built = [(t, what) for t, what in events if what.startswith("built ")]
    return {
        "first_screen_s": first.get("ready"),
        "first_form_built_s": round(built[0][0], 1) if built else None,
        "first_form": built[0][1].split(" ", 1)[1] if built else None,
        "timeout_s": timeout_s,
    }


def _what(data: dict) -> str:
    """What a measurement was: its source, or its date and commit."""
    if data.get("source"):
        return str(data["source"])
    return f"{data.get('when', '?')} at {data.get('commit', '?')}"


def import_phases(path: Path, label: str) -> dict[str, object]:
    """`PHASE rc=N SECONDSs` lines (the coordinator's phases.sh) as this script's JSON, with what
    each phase's log (`PREFIX.PHASE.log` beside `PREFIX.phases`) says inside it."""
    phases: list[dict[str, object]] = []
    prefix = str(path)[: -len(".phases")] if str(path).endswith(".phases") else str(path)
    for line in path.read_text().splitlines():
        m = re.match(r"^(\S+) rc=(\d+) (\d+)s$", line.strip())
        if not m:
            continue
        phase: dict[str, object] = {"phase": m[1], "seconds": float(m[3]), "rc": int(m[2])}
        log = Path(f"{prefix}.{m[1]}.log")
        if log.is_file():
            text = log.read_text(errors="replace")
            phase["inside"] = splits(text, Path("/nonexistent"))
            if m[1] == "test-python":
                phase["slowest"] = slowest(text)
                phase["summary"] = last_line(text)
        phases.append(phase)
    return {"phases": phases, "source": label or str(path)}


def render(after: dict, before: dict | None) -> str:
    """The Markdown page: the phase table (before/after), the machine, the slowest tests."""
    rows = [
        "| phase | before | after | after, CPU | load (mean/max) | inside it (the tools' own clocks) |",
        "|---|---|---|---|---|---|",
    ]
    b = {p["phase"]: p for p in (before or {}).get("phases", [])}
    a = {p["phase"]: p for p in after.get("phases", [])}
    for name in list(dict.fromkeys([*b, *a])):
        detail = "; ".join(
            f"{when}: " + ", ".join(f"{k} {_fmt(v)}" for k, v in inside.items())
            for when, inside in (
                ("before", (b.get(name) or {}).get("inside")),
                ("after", (a.get(name) or {}).get("inside")),
            )
            if inside
        )
        ap = a.get(name) or {}
        load = f"{ap['load_mean']}/{ap['load_max']}" if ap.get("load_mean") is not None else "–"
        rows.append(
            f"| {name} | {_mmss(b.get(name))} | {_mmss(a.get(name))} | {_fmt(ap.get('cpu_seconds'))} "
            f"| {load} | {detail} |"
        )
    total = {
        k: sum(p["seconds"] for p in d.values() if p["phase"] != "check") for k, d in (("b", b), ("a", a))
    }
    cpu_total = sum(p.get("cpu_seconds") or 0 for p in a.values() if p["phase"] != "check")
    before_total = _fmt(total["b"]) + _incomplete(b) if b else "–"
    rows.append(
        f"| **make test, the phases above** | {before_total} | {_fmt(total['a'])}{_incomplete(a)} "
        f"| {_fmt(cpu_total)} | | |"
    )
    load = [after.get(k) for k in ("load_start", "load_end")]
    parts = [
        GENERATED,
        "# A fresh machine's set-up, phase by phase",
        f"After: {after.get('when', '?')} at {after.get('commit', '?')}, {after.get('cores', '?')} cores, "
        "load average "
        + " before and ".join(f"{x:.1f}" if isinstance(x, float) else "?" for x in load)
        + " after "
        "(each phase's own in the JSON). Before: " + (_what(before) + "." if before else "–"),
        "\n".join(rows),
        "Each phase is one line of `make test`'s recipe, its targets run at once (`make -jN`); a "
        "phase named in one column only was added or renamed between the two. `check` is `make "
        "check` afterwards on the warm venv, not part of `make test`.",
    ]
    if after.get("shared_caches"):
        parts.append(
            "Taken from this user's warm cache, as the disk had no room for a second copy: "
            + ", ".join(f"`{c}`" for c in after["shared_caches"])
            + " (the ship checks' wheel downloads and venvs); every other cache was empty."
        )
    if after.get("run"):
        r = after["run"]
        parts.append(
            f"`make run` on its own fresh clone: first screen after {_fmt(r.get('first_screen_s'))}, first "
            f"form built ({r.get('first_form')}) after {_fmt(r.get('first_form_built_s'))}, from the "
            "command (pip included)."
        )
    slow = next((p.get("slowest") for p in after.get("phases", []) if p.get("slowest")), None)
    if slow:
        parts.append("The slowest tests (`--durations`):")
        parts.append(
            "\n".join(
                ["| s | test |", "|---|---|"] + [f"| {t['seconds']:.1f} | `{t['test']}` |" for t in slow]
            )
        )
    return "\n\n".join(parts) + "\n"


def _incomplete(phases: dict) -> str:
    """ " (incomplete)" unless every phase passed and pytest ran."""
    done = all(p.get("rc", 0) == 0 for p in phases.values()) and any("test-python" in n for n in phases)
    return "" if done else " (incomplete)"


def _fmt(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    return f"{int(seconds) // 60} min {int(seconds) % 60:02d} s"


def _mmss(phase: dict | None) -> str:
    if phase is None:
        return "–"
    return _fmt(phase["seconds"]) + ("" if phase.get("rc", 0) == 0 else f" (failed, rc {phase['rc']})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, help="write the figures here")
    ap.add_argument("--before", type=Path, help="a JSON of an earlier measurement, for the before column")
    ap.add_argument("--write", action="store_true", help="write docs/results/setup-time.md")
    ap.add_argument("--run", action="store_true", help="measure make run's first screen instead")
    ap.add_argument("--run-timeout", type=float, default=1800.0)
    ap.add_argument("--import-phases", type=Path, help="convert a phases log to JSON (--json) and stop")
    ap.add_argument("--label", default="", help="what --import-phases's log was (commit, machine, date)")
    ap.add_argument(
        "--render",
        type=Path,
        nargs="+",
        help="render JSONs already measured, one after the other (runs of --lines), with --before, --write",
    )
    ap.add_argument("--keep", action="store_true", help="keep the scratch clone and caches")
    ap.add_argument("--lines", help="only these lines of make test: N, A-B or A- (a disk too small for all)")
    ap.add_argument("--resume", type=Path, help="go on in the scratch folder an earlier --keep run left")
    ap.add_argument(
        "--share",
        default="",
        help="cache folders to take from this user's cache, comma-separated (wheelhouse,ship: "
        "the ship checks' downloads and venvs), for a disk too small for two; the page says so",
    )
    args = ap.parse_args()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], check=True, cwd=ROOT, capture_output=True, text=True
    ).stdout
    if args.import_phases:
        data = import_phases(args.import_phases, args.label)
    elif args.render:
        parts = [json.loads(p.read_text()) for p in args.render]
        data = {**parts[0], "phases": [ph for part in parts for ph in part.get("phases", [])]}
        data["shared_caches"] = sorted({c for part in parts for c in part.get("shared_caches", [])})
        data["load_end"] = parts[-1].get("load_end")
        runs = [part["run"] for part in parts if part.get("run")]  # a `--run` JSON among them
        if runs:
            data["run"] = runs[0]
    else:
        where = args.resume or Path(tempfile.mkdtemp(prefix="deploytui-fresh-"))
        share = [s for s in args.share.split(",") if s]
        clone, env = fresh_clone(where, share)
        logs = where / "logs"
        logs.mkdir(exist_ok=True)
        data = {"when": time.strftime("%Y-%m-%d %H:%M"), "commit": commit.strip(), "cores": os.cpu_count()}
        data["shared_caches"] = share
        data["load_start"] = os.getloadavg()[0]
        try:
            if args.run:
                data["run"] = run_app(clone, env, logs, args.run_timeout)
            else:
                data.update(run_phases(clone, env, logs, args.lines))
        finally:
            data["load_end"] = os.getloadavg()[0]
            if not args.keep:
                shutil.rmtree(where, ignore_errors=True)
            else:
                print(f"kept {where}")
    text = json.dumps(data, indent=2)
    if args.json:
        args.json.write_text(text + "\n")
    print(text)
    if args.write:
        before = json.loads(args.before.read_text()) if args.before else None
        out = ROOT / "docs" / "results" / "setup-time.md"
        out.write_text(render(data, before))
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
