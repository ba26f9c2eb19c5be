"""Running a child process: the one way the builder, the model checks, the inspectors and the
sandbox run a program (`run`), and the helpers around it. The timed runs do not come here: the
measuring core (`measure.py` + `launcher.c`) spawns them, so that their own peak RSS and wall
time are what is measured.

`run` reads stdout and stderr line by line as they come (`on_line` sees each), kills the child's
whole process group when it is cancelled, runs past its time, or its `watch` says so (the
sweep's memory limit: `tree_rss`), and never raises: a program that cannot start is an `error`.
Its `fork` may start the child instead (a build's fork server, deploytui.builder.forkserver: the same
command forked from a process that imported its modules once); the rest is the same.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Protocol

POLL_S = 0.05  # how often a running child's cancel Event, deadline and watch are looked at

Watch = Callable[[int], str]  # pid of the child (its process group) -> "" or why to kill it


class Child(Protocol):
    """What `run` drives: a subprocess.Popen, or a child of the fork server."""

    @property
    def pid(self) -> int: ...
    @property
    def stdout(self) -> IO[str] | None: ...
    @property
    def stderr(self) -> IO[str] | None: ...

    def poll(self) -> int | None: ...
    def wait(self) -> int: ...
    def kill(self) -> None: ...


# (argv, cwd, env) -> the child it started in its own process group, or None: start it afresh
Fork = Callable[[list[str], str | None, dict[str, str] | None], Child | None]


@dataclass
class Finished:
    """How a child ended. `stdout` / `stderr` are its lines (without the newline)."""

    argv: list[str]
    returncode: int | None = None  # None when it could not start or was killed
    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    killed: str = ""  # "cancelled", "timed out after N s", or what the watch said
    error: str = ""  # it could not start: "could not start PROG: ..."
    wall_s: float = 0.0
    pid: int = 0
    forked: bool = False  # started by `run`'s fork (the fork server), not as a fresh process

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.killed and not self.error

    @property
    def why(self) -> str:
        """ "" when ok, else one line: could not start, killed, or `exit N`."""
        return self.error or self.killed or ("" if self.returncode == 0 else f"exit {self.returncode}")

    @property
    def text(self) -> str:
        return "\n".join(self.stdout)


def run(
    argv: Sequence[str | os.PathLike[str]],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    timeout_s: float | None = None,
    cancel: threading.Event | None = None,
    on_line: Callable[[str, str], None] | None = None,
    watch: Watch | None = None,
    own_group: bool = True,
    fork: Fork | None = None,
) -> Finished:
    """Run `argv` (no shell) to its end. `on_line(stream, line)` is called from reader threads for
    each line of "stdout" and "stderr" as it comes. With `own_group` the child leads a process
    group of its own, killed whole; else (a child of a build step, which the build kills whole)
    only the child is killed. `fork` (own group only) may start it instead."""
    args = [os.fspath(a) for a in argv]
    done = Finished(args)
    t0 = time.monotonic()
    env = None if env is None else dict(env)
    cwd = None if cwd is None else os.fspath(cwd)
    proc: Child | None = fork(args, cwd, env) if fork is not None and own_group else None
    done.forked = proc is not None
    try:
        proc = proc or subprocess.Popen(
            args,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            bufsize=1,
            start_new_session=own_group,
        )
    except OSError as e:
        done.error = f"could not start {Path(args[0]).name if args else '(nothing)'}: {e.strerror or e}"
        return done
    done.pid = proc.pid
    readers = [
        threading.Thread(target=_pump, args=(proc.stdout, done.stdout, "stdout", on_line), daemon=True),
        threading.Thread(target=_pump, args=(proc.stderr, done.stderr, "stderr", on_line), daemon=True),
    ]
    for r in readers:
        r.start()
    deadline = None if timeout_s is None else t0 + timeout_s
    while proc.poll() is None:
        if cancel is not None and cancel.is_set():
            done.killed = "cancelled"
        elif deadline is not None and time.monotonic() > deadline:
            done.killed = f"timed out after {timeout_s:.0f} s"
        elif watch is not None:
            done.killed = watch(proc.pid)
        if done.killed:
            kill_group(proc.pid) if own_group else proc.kill()
            break
        time.sleep(POLL_S)
    rc = proc.wait()
    for r in readers:
        r.join(5)
    done.returncode = None if done.killed else rc
    done.wall_s = time.monotonic() - t0
    return done


def _pump(
    stream: IO[str] | None, into: list[str], name: str, on_line: Callable[[str, str], None] | None
) -> None:
    for line in stream or ():
        line = line.rstrip("\n")
        into.append(line)
        if on_line is not None:
            on_line(name, line)


def kill_group(pgid: int) -> None:
    """SIGKILL a whole process group; a group that is already gone is not an error."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def tree_rss(pid: int) -> int:
    """Resident memory of a process and all its descendants, bytes (0 when it is gone)."""
    import psutil

    try:
        root = psutil.Process(pid)
        procs: Iterable[psutil.Process] = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total


def tool_version(exe: str, timeout_s: float = 30.0) -> str:
    """The first line of `exe --version`, or "?" when it cannot be run or prints nothing."""
    out = run([exe, "--version"], timeout_s=timeout_s).stdout
    return out[0].strip() if out and out[0].strip() else "?"
