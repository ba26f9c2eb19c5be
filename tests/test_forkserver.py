"""The fork server (deploytui.builder.forkserver): commands forked from one process that imported their
modules once, run by procs.run like any child; anything it cannot fork runs afresh."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from deploytui.builder.forkserver import ForkServer
from deploytui.core import procs

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
    elif what == "exit-text":
        sys.exit("the program's own words")
    elif what == "wait-for":  # until the file named exists (a minute at most), a line, exit 0
        deadline = time.monotonic() + 60
        while not os.path.exists(sys.argv[2]) and time.monotonic() < deadline:
            time.sleep(0.05)
        print("done", flush=True)
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
    texted = run(forks, env, cwd, "exit-text")
    assert texted.returncode == 1 and texted.stderr[-1] == "the program's own words"


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


def _server_process():
    import psutil

    (found,) = [p for p in psutil.Process().children() if "deploytui.builder.forkserver" in p.cmdline()]
    return found


def test_a_server_that_dies_loses_no_status_and_its_next_commands_run_afresh(server):
    forks, env, cwd = server
    assert run(forks, env, cwd, "echo").forked
    flag = cwd / "go-on"
    result = {}
    waiting = threading.Thread(target=lambda: result.update(done=run(forks, env, cwd, "wait-for", str(flag))))
    waiting.start()
    server_process = _server_process()
    deadline = time.monotonic() + 30
    while not server_process.children() and time.monotonic() < deadline:  # the child is forked
        time.sleep(0.05)
    server_process.kill()  # as the OOM killer would, while its child runs
    server_process.wait()
    flag.write_text("")
    waiting.join(30)
    assert result["done"].forked and result["done"].ok and result["done"].stdout == ["done"]
    after = run(forks, env, cwd, "echo")
    assert after.ok and not after.forked and "the fork server ended" in forks.why_not


def test_a_server_that_cannot_run_at_all_leaves_commands_afresh(tmp_path):
    (tmp_path / "forkee.py").write_text(PROGRAM)
    forks = ForkServer(str(tmp_path / "no-python"), [], dict(os.environ), tmp_path, tmp_path / "server.log")
    argv = [str(tmp_path / "no-python"), "-m", "forkee", "echo"]
    assert forks.spawn(argv, str(tmp_path), dict(os.environ)) is None  # no exception
    assert "no-python" in forks.why_not
    done = procs.run(argv, cwd=tmp_path, env=os.environ, fork=forks.spawn)
    assert done.error.startswith("could not start no-python") and not done.forked


def test_what_preloading_prints_stays_in_the_servers_log(tmp_path):
    (tmp_path / "forkee.py").write_text(PROGRAM)
    (tmp_path / "talky_module.py").write_text("print('hello from an import')\nprint('ready')\n")
    log = tmp_path / "server.log"
    forks = ForkServer(sys.executable, ["talky_module"], dict(os.environ), tmp_path, log)
    done = procs.run([sys.executable, "-m", "forkee", "echo"], cwd=tmp_path, env=os.environ, fork=forks.spawn)
    forks.close()
    assert done.forked and not forks.why_not and "hello from an import" in log.read_text()
    assert json.loads(done.stdout[-1])["argv"] == ["echo"]


def test_a_server_whose_preloads_start_a_thread_refuses_to_fork(tmp_path):
    starts = "import threading, time\nthreading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
    (tmp_path / "threads.py").write_text(starts)
    forks = ForkServer(
        sys.executable, ["colorsys", "threads"], dict(os.environ), tmp_path, tmp_path / "s.log"
    )
    assert forks.spawn([sys.executable, "-m", "json.tool", "--help"], str(tmp_path), dict(os.environ)) is None
    assert "importing threads started a thread" in forks.why_not


def test_every_familys_preloads_leave_the_server_free_to_fork(tmp_path):
    """A fork copies only the thread that forks: the server refuses when a module it imports
    after the first (torch, whose one idle native thread every DataLoader worker forks past)
    starts a thread. Every family's preloads, and every library kind's, pass that check."""
    from deploytui.builder import plan
    from deploytui.core.modelref import LIBRARY_KINDS, ModelRef
    from deploytui.core.workspace import Workspace
    from deploytui.families.common import export_steps
    from deploytui.families.pytorch.exports import export_model
    from deploytui.spec.context import BuildContext

    a1 = BuildContext.of(Workspace.from_env(ModelRef("zoo", "a1", "")))
    preload = [m for s in plan(a1) for m in s.preload]
    for kind in LIBRARY_KINDS:  # each library kind's package too
        ctx = BuildContext.of(Workspace.from_env(ModelRef(kind, "x", "")))
        preload += export_steps.preload(ctx, export_model)
    preload = list(dict.fromkeys(preload))
    assert preload[0] == "torch" and {"transformers", "timm", "executorch.exir"} <= set(preload)
    forks = ForkServer(sys.executable, preload, dict(os.environ), tmp_path, tmp_path / "server.log")
    done = procs.run(
        [sys.executable, "-m", "json.tool", "--help"], cwd=tmp_path, env=os.environ, fork=forks.spawn
    )
    forks.close()
    assert done.ok and done.forked, forks.why_not


def test_a_builds_exports_share_one_fork_server(tmp_path):
    """Two or more steps that preload share the build's server; one alone starts afresh."""
    from deploytui.builder import fork_server
    from deploytui.core.modelref import parse
    from deploytui.core.workspace import Workspace
    from deploytui.spec.context import BuildContext
    from deploytui.spec.steps import Step

    ctx = BuildContext.of(Workspace.at(parse("a1"), tmp_path))

    def step(name: str, preload: tuple[str, ...]) -> Step:
        return Step(name, name, (sys.executable, "-m", "x"), (), (), preload=preload)

    assert fork_server(ctx, [step("a", ("torch",)), step("b", ())]) is None
    forks = fork_server(ctx, [step("a", ("torch",)), step("b", ("torch", "onnx")), step("c", ())])
    assert forks is not None and forks.preload == ("torch", "onnx") and forks.cwd == Path(ctx.root)
    assert forks.log == ctx.mdir / "logs" / "fork-server.log"
