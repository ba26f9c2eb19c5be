"""The fork server (deploytui.forkserver): commands forked from one process that imported their
modules once, run by procs.run like any child; anything it cannot fork runs afresh."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from deploytui import procs
from deploytui.forkserver import ForkServer

PROGRAM = textwrap.dedent(
    """
    import json, os, sys, time
    import colorsys  # preloaded by the server: found in sys.modules

    what = sys.argv[1]
    print("to stderr", file=sys.stderr)
    if what == "echo":
        print(json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd(), "pgid": os.getpgid(0),
                          "pid": os.getpid(), "env": os.environ.get("FORKEE"),
                          "name": __name__, "preloaded": "colorsys" in sys.modules}))
    elif what == "exit":
        sys.exit(int(sys.argv[2]))
    elif what == "raise":
        raise RuntimeError("the program's own words")
    elif what == "sleep":
        print("sleeping", flush=True)
        time.sleep(60)
    elif what == "atexit":
        import atexit
        atexit.register(lambda: print("atexit ran", flush=True))
    """
)


@pytest.fixture
def server(tmp_path):
    (tmp_path / "forkee.py").write_text(PROGRAM)
    env = {**os.environ, "FORKEE": "from the server"}
    forks = ForkServer(sys.executable, ["colorsys"], env, tmp_path, tmp_path / "logs" / "server.log")
    yield forks, env, tmp_path
    forks.close()


def run(forks, env, cwd, *args, **kw):
    return procs.run([sys.executable, "-m", "forkee", *args], cwd=cwd, env=env, fork=forks.spawn, **kw)


def test_a_command_runs_forked_as_python_would_run_it(server):
    forks, env, cwd = server
    done = run(forks, env, cwd, "echo", "a b", "c")
    assert done.ok and done.forked, done
    seen = json.loads(done.stdout[-1])
    assert seen["argv"] == ["echo", "a b", "c"] and seen["name"] == "__main__"
    assert seen["cwd"] == str(cwd) and seen["env"] == "from the server" and seen["preloaded"]
    assert seen["pgid"] == seen["pid"] == done.pid  # its own process group: killed whole
    assert done.stderr == ["to stderr"]
    again = run(forks, env, cwd, "echo")
    assert again.forked and json.loads(again.stdout[-1])["pid"] != seen["pid"]  # one server, a child each


def test_exit_codes_tracebacks_and_atexit_as_a_fresh_interpreter_has_them(server):
    forks, env, cwd = server
    assert run(forks, env, cwd, "exit", "3").returncode == 3
    failed = run(forks, env, cwd, "raise")
    assert failed.forked and failed.returncode == 1
    assert failed.stderr[-1] == "RuntimeError: the program's own words"
    assert any(line.startswith("Traceback") for line in failed.stderr)
    assert run(forks, env, cwd, "atexit").stdout == ["atexit ran"]


def test_a_late_child_is_killed_with_its_group_and_the_server_serves_on(server):
    forks, env, cwd = server
    done = run(forks, env, cwd, "sleep", timeout_s=2)
    assert done.forked and done.killed == "timed out after 2 s" and done.stdout == ["sleeping"]
    with pytest.raises(ProcessLookupError):
        os.kill(done.pid, 0)
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    assert run(forks, env, cwd, "sleep", cancel=cancel).killed == "cancelled"
    assert run(forks, env, cwd, "echo").ok


def test_what_it_cannot_fork_runs_afresh(server):
    forks, env, cwd = server
    other_env = run(forks, {**env, "FORKEE": "elsewhere"}, cwd, "echo")
    assert other_env.ok and not other_env.forked and json.loads(other_env.stdout[-1])["env"] == "elsewhere"
    other_cwd = procs.run([sys.executable, "-c", "print('not -m')"], cwd=cwd, env=env, fork=forks.spawn)
    assert other_cwd.ok and not other_cwd.forked and other_cwd.stdout == ["not -m"]


def test_a_server_that_cannot_start_says_why_and_its_commands_run_afresh(tmp_path):
    (tmp_path / "forkee.py").write_text(PROGRAM)
    log = tmp_path / "server.log"
    forks = ForkServer(sys.executable, ["no_such_module_here"], dict(os.environ), tmp_path, log)
    done = procs.run([sys.executable, "-m", "forkee", "echo"], cwd=tmp_path, env=os.environ, fork=forks.spawn)
    assert done.ok and not done.forked
    assert "no_such_module_here" in forks.why_not and "did not start" in forks.why_not
    forks.close()


def test_a_server_that_dies_leaves_its_commands_to_run_afresh(server):
    forks, env, cwd = server
    assert run(forks, env, cwd, "echo").forked
    assert forks._proc is not None
    forks._proc.kill()  # as the OOM killer would
    forks._proc.wait()
    done = run(forks, env, cwd, "echo")
    assert done.ok and not done.forked and "the fork server ended" in forks.why_not


def test_a_server_whose_preloads_start_a_thread_refuses_to_fork(tmp_path):
    starts = "import threading, time\nthreading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
    (tmp_path / "threads.py").write_text(starts)
    forks = ForkServer(sys.executable, ["threads"], dict(os.environ), tmp_path, tmp_path / "server.log")
    assert forks.spawn([sys.executable, "-m", "json.tool", "--help"], str(tmp_path), dict(os.environ)) is None
    assert "started threads" in forks.why_not


def test_the_families_preloads_start_no_thread():
    """A fork copies only the thread that forks: the modules the build's fork server imports
    for the exports must leave it with no thread but torch's own (`import torch` starts one
    native thread, idle in a futex, as every DataLoader worker that forks after it knows)."""
    from deploytui.builder import plan
    from deploytui.builder.context import BuildContext
    from deploytui.families.common import export_steps
    from deploytui.families.pytorch.exports import export_model
    from deploytui.models import LIBRARY_KINDS, ModelRef
    from deploytui.workspace import Workspace

    a1 = BuildContext.of(Workspace.from_env(ModelRef("zoo", "a1", "")))
    preload = [m for s in plan(a1) for m in s.preload]
    for kind in LIBRARY_KINDS:  # each library kind's package too
        ctx = BuildContext.of(Workspace.from_env(ModelRef(kind, "x", "")))
        preload += export_steps.preload(ctx, export_model)
    assert {"torch", "transformers", "timm", "torchvision", "executorch.exir"} <= set(preload)
    script = textwrap.dedent(
        f"""
        import importlib, json, os, threading
        import torch
        after_torch = len(os.listdir("/proc/self/task"))
        for m in {sorted(set(preload))!r}:
            importlib.import_module(m)
        print(json.dumps([after_torch, len(os.listdir("/proc/self/task")), threading.active_count()]))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    after_torch, after_all, python_threads = json.loads(out.stdout.strip().splitlines()[-1])
    assert (after_all, python_threads) == (after_torch, 1), sorted(set(preload))


def test_a_builds_exports_share_one_fork_server(tmp_path):
    """Two or more steps that preload share the build's server; one alone starts afresh."""
    from deploytui.builder import fork_server
    from deploytui.builder.context import BuildContext
    from deploytui.builder.steps import Step
    from deploytui.models import parse
    from deploytui.workspace import Workspace

    ctx = BuildContext.of(Workspace.at(parse("a1"), tmp_path))

    def step(name: str, preload: tuple[str, ...]) -> Step:
        return Step(name, name, (sys.executable, "-m", "x"), (), (), preload=preload)

    assert fork_server(ctx, [step("a", ("torch",)), step("b", ())]) is None
    forks = fork_server(ctx, [step("a", ("torch",)), step("b", ("torch", "onnx")), step("c", ())])
    assert forks is not None and forks.preload == ("torch", "onnx") and forks.cwd == Path(ctx.root)
    assert forks.log == ctx.mdir / "logs" / "fork-server.log"
