"""Python commands forked from one process that imported their heavy modules once.

A build's exports are Python commands (`python -m MODULE ...`, one step each); most of their
time went to starting Python, importing torch and an exporter, and tearing it all down at exit
(2–6 s a step, about fifteen steps a model, the export itself often under a second). A build
starts one fork server (`python -m deploytui.builder.forkserver NAME MODULE...`): it imports the modules
named once, then for each request forks a child that runs `python -m MODULE ARGS` as the
interpreter would (runpy, sys.argv, its exit status), with the requester's stdin, stdout and
stderr, in a process group of its own, and ends it without the teardown (`run_child`). The
builder sees a child like any other (`procs.run`: its lines as they come, its pid for the
memory watch, its group killed when cancelled or late): each step keeps its own process, log
and fingerprint.

A child inherits the server's environment and working folder, so `ForkServer.spawn` forks only
a command whose interpreter, environment and folder are the server's; anything else (or a
server that could not start) runs as a fresh process (`spawn` returns None). Forking is safe
only while the server has one thread: the server refuses to serve when a module it imported
started one, and the families' preload lists are checked for that by a test.

Protocol, on an abstract unix socket: one connection per child. The client sends one JSON line
{"module", "args", "cwd"} with three descriptors (stdin, stdout, stderr); the forked child
answers {"pid": N} itself, in its own process group already (so a server killed right after the
fork loses no answer); the client answers "g" (the child waits for it: a client that gave up
leaves it unrun); the child ends with {"exit": CODE}, and the server says it too when it reaps it
(negative: the signal that ended it).
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import runpy
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, NoReturn

from deploytui.core import procs

READY = b"ready\n"  # the server's one line to the builder once it serves
GO = b"g"  # the client's word to a forked child once it knows the child's pid
START_TIMEOUT_S = 120.0  # importing torch and the exporters from a cold disk
ANSWER_TIMEOUT_S = 30.0  # from a request to the forked child's pid


@dataclass
class Request:
    module: str
    args: list[str]
    cwd: str


# -- the server ---------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    if len(argv) < 1:
        print("usage: python -m deploytui.builder.forkserver NAME [MODULE ...]", file=sys.stderr)
        return 2
    name, preload = argv[0], argv[1:]
    ready = os.fdopen(os.dup(1), "wb", buffering=0)  # the builder's pipe: the ready line only
    os.dup2(2, 1)  # what importing prints goes to the server's log
    why = _preload(preload)
    if why:
        print(f"error: {why}", file=sys.stderr)
        return 1
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind("\0" + name)
    listener.listen(16)
    ready.write(READY)
    ready.close()
    forked = serve(listener)
    if forked is None:  # the builder is done: leave without tearing down what was imported
        sys.stderr.flush()
        os._exit(0)
    run_child(*forked)


def _preload(modules: list[str]) -> str:
    """Import `modules` in order; why the server must not fork, or "". The first module may start
    threads of its own (torch's one native thread, idle: every DataLoader worker forks after
    it); a thread any later one starts would be missing from every child."""
    baseline = None
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception as e:  # the steps then run as fresh processes and say it themselves
            return f"importing {module}: {type(e).__name__}: {e}"
        threads = len(os.listdir("/proc/self/task"))
        baseline = threads if baseline is None else baseline
        if threads > baseline or threading.active_count() > 1:
            return f"importing {module} started a thread (a fork copies only the caller's): no fork"
    return ""


def serve(listener: socket.socket) -> tuple[Request, socket.socket] | None:
    """Accept requests until stdin closes (the builder is done or gone); returns None then, and
    in each forked child its request and its connection."""
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "accept")
    sel.register(sys.stdin, selectors.EVENT_READ, "stdin")
    sel.register(wake_r, selectors.EVENT_READ, "child")
    children: dict[int, socket.socket] = {}
    while True:
        for key, _ in sel.select():
            if key.data == "stdin" and not os.read(sys.stdin.fileno(), 4096):
                return None
            if key.data == "child":
                os.read(wake_r, 4096)
                _reap(children)
            if key.data == "accept":
                conn, _ = listener.accept()
                request = _fork(conn, children)
                if request is not None:  # in the child: leave the server's world behind
                    sel.close()
                    listener.close()
                    for other in children.values():
                        other.close()
                    signal.set_wakeup_fd(-1)
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    os.close(wake_r)
                    os.close(wake_w)
                    return request, conn


def _fork(conn: socket.socket, children: dict[int, socket.socket]) -> Request | None:
    """Fork a child for the request on `conn`: the request in the child (once the client said
    go: a client that gave up closes the connection and the child leaves unrun), None here."""
    conn.settimeout(10)
    fds: list[int] = []
    try:
        data, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
        msg = json.loads(data)
        request = Request(str(msg["module"]), [str(a) for a in msg["args"]], str(msg["cwd"]))
        if len(fds) != 3:
            raise ValueError("three descriptors expected")
        sys.stderr.flush()
        pid = os.fork()
    except (OSError, ValueError, KeyError, TypeError) as e:  # this request fails, the server serves on
        print(f"request refused: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        for fd in fds:
            os.close(fd)
        conn.close()
        return None
    if pid == 0:
        os.setpgid(0, 0)  # before the pid is told: the group exists when the builder kills it
        for i, fd in enumerate(fds):
            os.dup2(fd, i)
            os.close(fd)
        conn.settimeout(None)
        _send(conn, {"pid": os.getpid()})
        if conn.recv(1) != GO:
            os._exit(0)
        return request
    for fd in fds:
        os.close(fd)
    children[pid] = conn
    return None


def _reap(children: dict[int, socket.socket]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = children.pop(pid, None)
        if conn is not None:
            _send(conn, {"exit": os.waitstatus_to_exitcode(status)})
            conn.close()


def _send(conn: socket.socket, msg: dict[str, Any]) -> None:
    try:
        conn.sendall(json.dumps(msg).encode() + b"\n")
    except OSError:  # the builder gave up on this child
        pass


def run_child(request: Request, conn: socket.socket) -> NoReturn:
    """`python -m MODULE ARGS` in this forked child, ended as a fresh interpreter ends (its
    SystemExit's code, an uncaught exception's traceback and exit 1; the threads it started
    joined, its atexit functions run, its output flushed), but without tearing down the modules
    one by one: with torch loaded that takes about two seconds, and a fresh process pays it too.
    multiprocessing ends its forked children the same way; what is left to the garbage
    collector is not finalized, so a file must be closed by whoever wrote it (every export
    writes through `with` or its library's save). The child tells its exit status
    itself (the server tells it too, and alone when a signal ended the child): a server that
    died meanwhile loses none."""
    os.chdir(request.cwd)
    sys.argv = [request.module, *request.args]
    code = 0
    try:
        runpy.run_module(request.module, run_name="__main__", alter_sys=True)
    except SystemExit as e:
        code = _exit_code(e.code)
    except BaseException:
        sys.excepthook(*sys.exc_info())
        code = 1
    shutdown = getattr(threading, "_shutdown", None)  # the interpreter's own first step at exit
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    _send(conn, {"exit": code})
    os._exit(code)


def _exit_code(code: object) -> int:
    """The process's status for `sys.exit(code)`, as the interpreter makes it."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


# -- the client ---------------------------------------------------------------------------------


class ForkServer:
    """The build's fork server, started on the first `spawn` (one thread at a time starts it);
    `close` stops it. `log` gets its stderr (what importing the modules printed). Once it fails
    (cannot start, dies, stops answering) it is retired: `why_not` says why, and every later
    command runs afresh."""

    def __init__(
        self, python: str, preload: Sequence[str], env: Mapping[str, str], cwd: Path, log: Path
    ) -> None:
        self.python, self.preload, self.env, self.cwd, self.log = python, tuple(preload), dict(env), cwd, log
        self.name = f"deploytui-fork-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.why_not = ""  # why it is retired: its commands run as fresh processes
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def spawn(
        self, argv: Sequence[str], cwd: str | None, env: Mapping[str, str] | None
    ) -> ForkedChild | None:
        """`argv` (`PYTHON -m MODULE ARGS`) forked from the server; None when it must run as a
        fresh process (another interpreter, environment or folder, or a retired server). Never
        raises: whatever goes wrong retires the server."""
        if len(argv) < 3 or argv[0] != self.python or argv[1] != "-m":
            return None
        try:
            if (
                Path(cwd or os.getcwd()).resolve() != self.cwd.resolve()
                or dict(env or os.environ) != self.env
            ):
                return None
            if not self._started():
                return None
            return ForkedChild(self.name, Request(argv[2], list(argv[3:]), str(self.cwd)))
        except Exception as e:  # OSError, a garbled answer: the command runs afresh
            self._retire(f"the fork server failed: {type(e).__name__}: {e}")
            return None

    def _started(self) -> bool:
        with self._lock:
            if self._proc is None and not self.why_not:
                self._start()
            if self._proc is not None and self._proc.poll() is not None:
                self.why_not = f"the fork server ended (exit {self._proc.returncode}); see {self.log}"
                self._proc = None
            return self._proc is not None

    def _start(self) -> None:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("w") as err:
            proc = subprocess.Popen(
                [self.python, "-m", "deploytui.builder.forkserver", self.name, *self.preload],
                cwd=self.cwd,
                env=self.env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                start_new_session=True,
            )
        assert proc.stdout is not None
        said, deadline = b"", time.monotonic() + START_TIMEOUT_S
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            while time.monotonic() < deadline and READY not in said:
                if sel.select(0.2):
                    chunk = os.read(proc.stdout.fileno(), 256)
                    if not chunk:
                        break
                    said += chunk
        if READY in said:
            self._proc = proc
            return
        proc.kill()
        proc.wait()
        tail = self.log.read_text(errors="replace").strip().splitlines()[-1:] if self.log.is_file() else []
        self.why_not = f"the fork server did not start: {tail[0] if tail else 'no ready line'}"

    def _retire(self, why: str) -> None:
        with self._lock:
            self.why_not = self.why_not or why
            proc, self._proc = self._proc, None
        if proc is not None:
            proc.kill()
            proc.wait()

    def close(self) -> None:
        """Stop the server (its children, if any, run on: each is its builder's to end)."""
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is None:
            return
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class ForkedChild:
    """A child of the fork server, as `procs.run` drives a Popen: pid (its own process group),
    stdout and stderr to read, poll, wait, kill. It starts once its pid is known here."""

    def __init__(self, server: str, request: Request) -> None:
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        stdin = os.open(os.devnull, os.O_RDONLY)
        self._conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._buf = b""
        self._closed = False  # the connection ended: no exit status is coming
        self.returncode: int | None = None
        try:
            self._conn.connect("\0" + server)
            msg = json.dumps({"module": request.module, "args": request.args, "cwd": request.cwd})
            socket.send_fds(self._conn, [msg.encode()], [stdin, out_w, err_w])
            first = self._next(block=True)
            if first is None or "pid" not in first:
                raise OSError("the fork server forked nothing")  # closing: a late child leaves unrun
            self.pid = int(first["pid"])
            self._conn.sendall(GO)
        except BaseException:
            for fd in (out_r, err_r):
                os.close(fd)
            self._conn.close()
            raise
        finally:
            for fd in (stdin, out_w, err_w):
                os.close(fd)
        self.stdout: IO[str] = open(out_r, errors="replace")  # read to its end by procs.run
        self.stderr: IO[str] = open(err_r, errors="replace")

    def _next(self, block: bool) -> dict[str, Any] | None:
        """The next message (the child's or the server's); None when none is there yet or the
        connection ended."""
        while b"\n" not in self._buf:
            if self._closed:
                return None
            self._conn.settimeout(ANSWER_TIMEOUT_S if block else 0.0)
            try:
                chunk = self._conn.recv(4096)
            except (BlockingIOError, TimeoutError):
                return None
            except OSError:
                chunk = b""
            if not chunk:
                self._closed = True
                return None
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        msg: dict[str, Any] = json.loads(line)
        return msg

    def poll(self) -> int | None:
        while self.returncode is None:
            msg = self._next(block=False)
            if msg is not None and "exit" in msg:
                self.returncode = int(msg["exit"])
                self._conn.close()
            elif msg is None:
                if self._closed and self._gone():
                    self.returncode = -signal.SIGKILL  # a signal ended it, and the server is gone
                break
        return self.returncode

    def _gone(self) -> bool:
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return True
        return False

    def wait(self) -> int:
        while self.poll() is None:
            time.sleep(0.05)
        assert self.returncode is not None
        return self.returncode

    def kill(self) -> None:
        procs.kill_group(self.pid)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
