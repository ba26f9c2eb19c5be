"""The measuring core: spawn a command N times, each in a fresh process, and record what it cost.

Every run goes through a tiny compiled launcher (launcher.c) that spawns and wait4s the
command, so wall time is spawn-to-reaped-exit and peak RSS is the child's own `ru_maxrss`, not
the high-water mark of this (possibly large) Python process. The launcher also enforces the
timeout on the child's whole process group. While a run is going, its RSS can be sampled with
psutil for live gauges. One measuring path for the CLI, the app and the report. No Textual here.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import select
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from deploytui.core import paths
from deploytui.core.procs import kill_group
from deploytui.core.record_parts import Stats

LAUNCHER_SRC = Path(__file__).with_name("launcher.c")
FIRST_SAMPLE_S = 0.02  # no RSS sample before a run is this old (see _watch)
STDERR_TAIL_LINES = 12


Live = Callable[[int, float], None]  # live RSS samples of a run: (rss_bytes, elapsed_s)


class MeasureError(Exception):
    """The measuring machinery itself could not run (no C compiler for the launcher, ...)."""


@dataclass
class Sample:
    """One run of a command."""

    wall_s: float
    peak_rss_bytes: int
    exit_code: int | None  # None when killed by a signal
    signal: int = 0
    timed_out: bool = False
    error: str = ""  # why the run did not count as a success ("" when it exited 0)
    stdout: str = ""
    stderr_tail: list[str] = field(default_factory=list)
    measured: bool = True  # False: no launcher report came back (no time or memory to count)

    @property
    def ok(self) -> bool:
        return not self.error


# one run of argv (timeout_s, live RSS callback, cancel) wherever it happens
Once = Callable[[list[str], float, Live | None, "threading.Event | None"], Sample]


def launcher_path() -> Path:
    """The compiled launcher, built on first use into the cache (keyed by its source hash)."""
    src = LAUNCHER_SRC.read_bytes()
    exe = paths.cache_dir() / "launcher" / f"launcher-{hashlib.sha256(src).hexdigest()[:12]}"
    if exe.exists():
        return exe
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise MeasureError("measuring needs a C compiler (cc) to build its launcher; none found on PATH")
    exe.parent.mkdir(parents=True, exist_ok=True)
    tmp = exe.with_suffix(f".{os.getpid()}.tmp")
    res = subprocess.run(
        [cc, "-O2", "-o", str(tmp), str(LAUNCHER_SRC)], capture_output=True, text=True, check=False
    )
    if res.returncode != 0:
        raise MeasureError(f"could not compile the launcher: {res.stderr.strip()[:400]}")
    os.replace(tmp, exe)
    return exe


def run_once(
    argv: list[str],
    *,
    timeout_s: float = 60.0,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    on_rss: Callable[[int, float], None] | None = None,
    cancel: threading.Event | None = None,
) -> Sample:
    """Run `argv` once through the launcher. `on_rss(rss_bytes, elapsed_s)` gets live samples."""
    launcher = launcher_path()
    rfd, wfd = os.pipe()
    go_r, go_w = os.pipe()
    try:
        try:
            proc = subprocess.Popen(
                [str(launcher), str(wfd), str(go_r), str(int(timeout_s * 1000)), *argv],
                pass_fds=(wfd, go_r),
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        finally:
            os.close(wfd)
            os.close(go_r)
        report = os.fdopen(rfd)
        out_chunks: list[bytes] = []
        err_chunks: list[bytes] = []
        readers = [
            threading.Thread(target=lambda s=s, c=c: c.extend(iter(lambda: s.read(65536), b"")), daemon=True)
            for s, c in ((proc.stdout, out_chunks), (proc.stderr, err_chunks))
        ]
        for t in readers:
            t.start()
        os.write(go_w, b"g")  # our threads are up and blocked: the clock starts with nothing of ours running
    finally:
        os.close(go_w)
    child_pid = _child_pid(report)
    t0 = time.monotonic()
    cancelled = False
    if child_pid:
        cancelled = _watch(proc, report, child_pid, t0, timeout_s, on_rss, cancel)
    result_line = report.readline()
    report.close()
    try:
        proc.wait(timeout=timeout_s + 10)
    except subprocess.TimeoutExpired:
        kill_group(proc.pid)
        proc.wait()
    for t in readers:
        t.join(5)
    stdout = b"".join(out_chunks).decode(errors="replace")
    stderr_lines = b"".join(err_chunks).decode(errors="replace").splitlines()
    tail = [ln for ln in stderr_lines if ln.strip()][-STDERR_TAIL_LINES:]
    failed = f"launcher failed (exit {proc.returncode}): {' '.join(tail[-2:])}"
    return sample_of(result_line, stdout, tail, timeout_s, cancelled, failed)


def sample_of(
    result_line: str, stdout: str, tail: list[str], timeout_s: float, cancelled: bool, failed: str
) -> Sample:
    """The launcher's result line (its JSON report) as a Sample; `failed` says why when there
    is no report (the launcher itself did not run to its end). A launcher here or on a target
    (launchers/ssh.py) reports alike."""
    try:
        r = json.loads(result_line)
        if not isinstance(r, dict) or "wall_ns" not in r:
            raise ValueError
    except ValueError:
        why = "cancelled" if cancelled else failed
        return Sample(0.0, 0, None, error=why, stdout=stdout, stderr_tail=tail, measured=False)
    sample = Sample(
        wall_s=r["wall_ns"] / 1e9,
        peak_rss_bytes=r["maxrss_kb"] * 1024,
        exit_code=r["code"] if r["exited"] else None,
        signal=r["signal"],
        timed_out=r["timed_out"],
        stdout=stdout,
        stderr_tail=tail,
    )
    sample.error = sample_error(sample, r, timeout_s, cancelled)
    return sample


def _child_pid(report: IO[str]) -> int:
    line = report.readline()
    try:
        return int(json.loads(line)["pid"])
    except (ValueError, KeyError, TypeError):
        return 0


def _watch(
    proc: subprocess.Popen[bytes],
    report: IO[str],
    pid: int,
    t0: float,
    timeout_s: float,
    on_rss: Callable[[int, float], None] | None,
    cancel: threading.Event | None,
) -> bool:
    """Sample RSS while the run goes; kill it on cancel. True when cancelled.

    Between looks it waits on the launcher's report pipe, which becomes readable the moment the
    run ends (sleeping instead slowed short runs measurably). RSS is first read after
    FIRST_SAMPLE_S: reading /proc of a process that is still starting slows that start, so a
    short run is never sampled (its peak comes from the launcher anyway)."""
    watched = None
    while proc.poll() is None:
        if cancel is not None and cancel.is_set():
            kill_group(pid)
            kill_group(proc.pid)
            return True
        elapsed = time.monotonic() - t0
        if on_rss is not None and elapsed >= FIRST_SAMPLE_S:
            try:
                if watched is None:
                    import psutil

                    watched = psutil.Process(pid)
                rss = watched.memory_info().rss
                if rss:  # 0: it has exited and waits to be reaped (a zombie has no memory)
                    on_rss(rss, elapsed)
            except Exception:  # the process ended between poll and sample
                on_rss = None
        if elapsed > timeout_s + 5:  # the launcher should have done this
            kill_group(pid)
            kill_group(proc.pid)
        select.select([report], [], [], 0.02 if on_rss is not None else 0.05)
    return False


def sample_error(s: Sample, r: dict[str, Any], timeout_s: float, cancelled: bool) -> str:
    if cancelled or r.get("stopped_by"):
        return "cancelled"
    if s.timed_out:
        return f"timed out after {timeout_s:g} s (process group killed)"
    if r.get("exec_errno"):
        return f"could not start: {r.get('exec_error')}"
    if s.exit_code is None:
        name = (
            signal.Signals(s.signal).name if s.signal in signal.Signals._value2member_map_ else str(s.signal)
        )
        return f"killed by signal {name}" + _last(s)
    if s.exit_code != 0:
        return f"exit {s.exit_code}" + _last(s)
    return ""


def _last(s: Sample) -> str:
    return f": {s.stderr_tail[-1].strip()[:300]}" if s.stderr_tail else ""


@dataclass
class Measurement:
    """Warm-up runs (not counted) then counted runs of one command."""

    argv: list[str]
    cwd: str
    warmup: list[Sample]
    runs: list[Sample]

    @property
    def ok(self) -> bool:
        return bool(self.runs) and all(s.ok for s in self.warmup + self.runs)

    @property
    def error(self) -> str:
        bad = next((s for s in self.warmup + self.runs if not s.ok), None)
        return bad.error if bad else ("no runs" if not self.runs else "")

    @property
    def wall(self) -> Stats | None:
        return Stats.of([s.wall_s for s in self.runs if s.ok])

    @property
    def rss(self) -> Stats | None:
        return Stats.of([float(s.peak_rss_bytes) for s in self.runs if s.ok])

    def summary(self) -> dict[str, Any]:
        return {
            "argv": self.argv,
            "cwd": self.cwd,
            "status": "ok" if self.ok else "failed",
            "error": self.error or None,
            # the runs that reported: one whose report never came (the connection dropped, the
            # launcher did not start) has no figures, and its error says where it stopped
            "wall_s": [s.wall_s for s in self.runs if s.measured],
            "peak_rss_bytes": [s.peak_rss_bytes for s in self.runs if s.measured],
            "exit_codes": [s.exit_code for s in self.runs if s.measured],
        }


@dataclass(frozen=True)
class Progress:
    """What a live view needs while a command is measured."""

    phase: str  # "warmup" | "run"
    index: int  # 1-based within the phase
    total: int
    sample: Sample | None = None  # set when a run has just finished
    rss_bytes: int = 0  # live RSS of the running process
    elapsed_s: float = 0.0


def _live(
    on_progress: Callable[[Progress], None], phase: str, i: int, count: int, rss: int, elapsed: float
) -> None:
    on_progress(Progress(phase, i, count, rss_bytes=rss, elapsed_s=elapsed))


def measure(
    argv: list[str],
    *,
    n: int = 20,
    warmup: int = 1,
    timeout_s: float = 60.0,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
    stop_on_failure: bool = True,
    once: Once | None = None,
) -> Measurement:
    """Warm-up runs, then `n` counted runs; stops early on a failed run or on cancel. `once`
    runs one elsewhere (an SSH target: launchers/ssh.py); by default `run_once` here."""
    cwd = cwd or Path.cwd()
    if once is None:

        def once(
            argv: list[str], timeout_s: float, on_rss: Live | None, cancel: threading.Event | None
        ) -> Sample:
            return run_once(argv, timeout_s=timeout_s, cwd=cwd, env=env, on_rss=on_rss, cancel=cancel)

    m = Measurement(list(argv), str(cwd), [], [])
    for phase, count, bucket in (("warmup", warmup, m.warmup), ("run", n, m.runs)):
        for i in range(1, count + 1):
            if cancel is not None and cancel.is_set():
                return m
            live = None
            if on_progress is not None:
                live = functools.partial(_live, on_progress, phase, i, count)
            s = once(list(argv), timeout_s, live, cancel)
            bucket.append(s)
            if on_progress is not None:
                on_progress(Progress(phase, i, count, sample=s))
            if not s.ok and stop_on_failure:
                return m
    return m
