"""An SSH target (or an emulated one, launchers/emulated.py, which speaks the same protocol
through a local shell in its root): another Linux host, reached with the OpenSSH client (`ssh`), so the user's
~/.ssh/config (aliases, ProxyJump, agent, keys) is honoured as `ssh` honours it. Host keys are
checked against known_hosts; a new host is accepted only when the user says so (`accept_new`:
StrictHostKeyChecking=accept-new), and BatchMode never lets ssh prompt.

On the target everything lives under REMOTE_ROOT in the login's home: the measuring launcher
(bin/launcher-<hash>, the same launcher.c as here), bundles by content hash (bundles/<hash>/),
the wheels Python bundles install from (wheels/), and a lock file: a run on a target holds
`flock` on it, so two deploytui processes measuring one target take turns. Each run is one ssh
session whose remote shell starts the launcher there: start-up and peak RSS are the target's
own, the SSH hop is in no figure. When the connection drops, the session's watcher sees its
input close and stops the launcher, which kills the run's process group.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from urllib.parse import urlsplit

from deploytui.core import measure as measuring
from deploytui.core.measure import Measurement, Progress, Sample
from deploytui.core.units import human
from deploytui.launchers import emulated

REMOTE_ROOT = ".cache/deploytui-target"  # relative to the login's home
SSH_OPTIONS = (
    "-o", "BatchMode=yes",
    "-o", "ConnectTimeout=10",
    "-o", "ServerAliveInterval=5",
    "-o", "ServerAliveCountMax=3",
    "-o", "LogLevel=ERROR",
)  # fmt: skip
CONNECT_TIMEOUT_S = 30.0
FORMS = "ssh://user@host[:port], user@host, or a ~/.ssh/config alias"
UNREACHABLE = (
    "Connection refused",
    "Connection timed out",
    "No route to host",
    "Could not resolve hostname",
    "Network is unreachable",
    "Connection closed",
    "Connection reset",
    "timed out",
    "Broken pipe",
)


class TargetError(Exception):
    """One line saying what went wrong with a target (unreachable, auth, host key, disk, ...)."""


@dataclass(frozen=True)
class Destination:
    """Where a target is: `host` (a name, an address or a ~/.ssh/config alias), with the user,
    port, config file (-F) and identity (-i) when given."""

    host: str
    user: str | None = None
    port: int | None = None
    config: str | None = None
    identity: str | None = None

    @staticmethod
    def parse(text: str, *, config: str | None = None, identity: str | None = None) -> Destination:
        """`ssh://user@host[:port]`, `user@host` or an alias."""
        if "://" in text:
            url = urlsplit(text)
            if url.scheme != "ssh" or not url.hostname:
                raise TargetError(f"not an ssh:// address: {text!r} ({FORMS})")
            try:
                port = url.port
            except ValueError:
                raise TargetError(f"bad port in {text!r}") from None
            return Destination(url.hostname, url.username, port, config, identity)
        if not re.fullmatch(r"[A-Za-z0-9_.@:\[\]-]+", text) or text.startswith("-"):
            raise TargetError(f"not a host: {text!r} ({FORMS})")
        user, _, host = text.rpartition("@")
        return Destination(host, user or None, None, config, identity)

    def text(self) -> str:
        if self.user is None and self.port is None:
            return self.host
        where = f"{self.user}@{self.host}" if self.user else self.host
        return f"ssh://{where}" + (f":{self.port}" if self.port else "")


def ssh_argv(dest: Destination, *, accept_new: bool = False) -> list[str]:
    """The words before a remote command line: `ssh … host`, or for an emulated target
    (launchers/emulated.py) a shell inside its root; TargetError when that root is not ready."""
    if emulated.is_emulated(dest.host):
        arch = emulated.parse(dest.host) or ""
        if why := emulated.problem(arch):
            raise TargetError(why)
        return emulated.shell_prefix(arch)
    argv = ["ssh", *SSH_OPTIONS, "-o", f"StrictHostKeyChecking={'accept-new' if accept_new else 'yes'}"]
    if dest.config:
        argv += ["-F", dest.config]
    if dest.identity:
        argv += ["-i", dest.identity, "-o", "IdentitiesOnly=yes"]
    if dest.port:
        argv += ["-p", str(dest.port)]
    if dest.user:
        argv += ["-l", dest.user]
    return [*argv, "--", dest.host]


def remote_command(script: str, *args: str) -> str:
    """One command line for the remote shell: `sh -c SCRIPT sh ARGS...`, every word quoted."""
    return " ".join(shlex.quote(w) for w in ["sh", "-c", script, "sh", *args])


def explain(stderr: str, code: int, dest: Destination) -> str:
    """ssh's own words turned into one line saying what went wrong."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    text = " ".join(lines)
    name = dest.text()
    if "REMOTE HOST IDENTIFICATION HAS CHANGED" in text or ("Host key for" in text and "has changed" in text):
        return f"the host key of {name} changed since it was accepted: refusing to connect (check the host)"
    if "Host key verification failed" in text or "host key is known" in text:
        return (
            f"the host key of {name} is not known: `deploytui target add NAME {name} --accept-new` accepts it"
        )
    if "Permission denied" in text:
        return f"{name} refused the login: {lines[-1]}"
    if any(words in text for words in UNREACHABLE):
        return f"{name} is unreachable: {lines[-1]}"
    if "No space left on device" in text:
        return f"no disk space left on {name}: {lines[-1]}"
    if code == 255:
        return f"ssh to {name} failed: {lines[-1] if lines else 'exit 255'}"
    return lines[-1] if lines else f"exit {code}"


def run(
    dest: Destination,
    script: str,
    *args: str,
    stdin: bytes | None = None,
    timeout_s: float = 60.0,
    accept_new: bool = False,
) -> str:
    """Run a POSIX sh `script` on the target; its stdout, or TargetError with one line."""
    argv = [*ssh_argv(dest, accept_new=accept_new), remote_command(script, *args)]
    try:
        res = subprocess.run(argv, input=stdin, capture_output=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        raise TargetError(f"{dest.text()} did not answer within {timeout_s:.0f} s") from None
    except OSError as e:
        raise TargetError(f"cannot run ssh: {e}") from None
    if res.returncode != 0:
        raise TargetError(explain(res.stderr.decode(errors="replace"), res.returncode, dest))
    return res.stdout.decode(errors="replace")


FACTS_SCRIPT = r"""
printf 'arch=%s\n' "$(uname -m)"
printf 'kernel=%s\n' "$(uname -r)"
if [ -r /etc/os-release ]; then . /etc/os-release; fi
printf 'os=%s\n' "${PRETTY_NAME:-$(uname -s)}"
printf 'glibc=%s\n' "$(getconf GNU_LIBC_VERSION 2>/dev/null)"
cpu=$(grep -m1 -E '^(model name|Model|Hardware)' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')
printf 'cpu=%s\n' "$cpu"
printf 'cores=%s\n' "$(getconf _NPROCESSORS_ONLN 2>/dev/null)"
while read -r k v _; do [ "$k" = MemTotal: ] && printf 'memory_kb=%s\n' "$v"; done </proc/meminfo
df -Pk "$HOME" 2>/dev/null | { read -r _; read -r _ _ _ avail _; printf 'free_disk_kb=%s\n' "$avail"; }
for p in python3 python3.9 python3.10 python3.11 python3.12 python3.13 python3.14; do
  if command -v "$p" >/dev/null 2>&1; then
    v=$("$p" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null)
    printf 'python=%s %s\n' "$(command -v "$p")" "$v"
  fi
done
printf 'flock=%s\n' "$(command -v flock)"
"""


def facts(dest: Destination, *, accept_new: bool = False) -> dict[str, object]:
    """What the target is, measured there: arch, OS, glibc, kernel, CPU, cores, memory, free
    disk, the Python 3 interpreters it has."""
    out = run(dest, FACTS_SCRIPT, timeout_s=CONNECT_TIMEOUT_S, accept_new=accept_new)
    found: dict[str, object] = {}
    pythons: dict[str, str] = {}
    for line in out.splitlines():
        key, _, value = line.partition("=")
        if key == "python":
            path, _, version = value.partition(" ")
            if version:
                pythons.setdefault(version, path)
        elif key == "cores":
            found[key] = int(value) if value.isdigit() else None
        elif key in ("memory_kb", "free_disk_kb"):
            found[key.replace("_kb", "_bytes")] = int(value) * 1024 if value.isdigit() else None
        elif key:
            found[key] = value
    found["pythons"] = {v: p for v, p in sorted(pythons.items())}
    if emulated.is_emulated(dest.host):  # qemu-user's timings: stored, marked, never ranked
        found["emulated"] = True
        found["cpu"] = f"qemu-user {emulated.qemu_cpu()}"  # /proc/cpuinfo there is this machine's
    return found


# One run, on the target: take the target's lock (measurements there never overlap), start the
# launcher with its report on our stdout, say it is ready, wait for our go byte, watch our stdin
# (the connection) while it runs, then send what the run printed. $1 root, $2 launcher, $3 timeout
# ms, $4 folder, $5.. argv. The go byte is sent once `READY` has come back: the run starts after the
# connection's own start-up (key exchange, session, the first packets) is over, not during it —
# the libtorch programs started 5-6 % slower over ssh when the byte went with the connection.
READY = "@@ready"  # RUN_SCRIPT's line before it waits for the go byte
RUN_SCRIPT = r"""
R="$HOME/$1"; L="$2"; T="$3"; D="$4"; shift 4
command -v flock >/dev/null 2>&1 || { echo "no flock on the target (util-linux)" >&2; exit 96; }
exec 9>"$R/measure.lock" && flock 9 || exit 95
f=$(mktemp -d "$R/run.XXXXXX") || exit 94
mkfifo "$f/go" || exit 94
exec 5<&0
cd "$D" || exit 93
"$L" 3 4 "$T" "$@" 3>&1 4<"$f/go" >"$f/out" 2>"$f/err" 9>&- 5<&- &
l=$!
printf 'READY\n'; head -c 1 <&5 >"$f/go"
( cat <&5 >/dev/null 2>&1; kill -TERM "$l" 2>/dev/null ) >/dev/null 2>&1 9>&- &
w=$!
wait "$l"
kill "$w" 2>/dev/null
printf '\n@@stdout\n'; cat "$f/out"; printf '\n@@stderr\n'; tail -n 40 "$f/err"
rm -rf "$f"
""".replace("READY", READY)


def _sample(out: str, err: str, code: int, dest: Destination, timeout_s: float, cancelled: bool) -> Sample:
    head, _, rest = out.partition("\n@@stdout\n")
    stdout, _, stderr = rest.partition("\n@@stderr\n")
    lines = [ln for ln in head.splitlines() if ln.strip() and ln != READY]
    tail = [ln for ln in stderr.splitlines() if ln.strip()][-measuring.STDERR_TAIL_LINES :]
    result = lines[-1] if lines else ""
    return measuring.sample_of(result, stdout, tail, timeout_s, cancelled, explain(err, code, dest))


def run_once(
    dest: Destination,
    launcher: str,
    folder: str,
    argv: list[str],
    *,
    timeout_s: float,
    cancel: threading.Event | None = None,
    via: tuple[str, ...] = (),
) -> Sample:
    """One run of `argv` in `folder` on the target, through the launcher there. `via`: a command
    that starts the run's shell there instead of ssh (bench/target_fidelity.py runs the same
    script in the target's own sandbox, without the SSH hop)."""
    args = [REMOTE_ROOT, launcher, str(int(timeout_s * 1000)), folder, *argv]
    try:
        command = (
            [*via, "sh", "-c", RUN_SCRIPT, "sh", *args]
            if via
            else [*ssh_argv(dest), remote_command(RUN_SCRIPT, *args)]
        )
    except TargetError as e:
        return Sample(0.0, 0, None, error=str(e), measured=False)
    try:
        proc, chunks, readers = spawn_read(command, ready := threading.Event())
    except OSError as e:
        return Sample(0.0, 0, None, error=f"cannot run ssh: {e}", measured=False)
    assert proc.stdin is not None
    cancelled = gone = False
    limit = time.monotonic() + timeout_s + CONNECT_TIMEOUT_S
    while proc.poll() is None:
        if not gone and ready.wait(0.1):
            try:  # the go byte; our stdin then stays open while the run lasts (its closing stops it)
                proc.stdin.write(b"g")
                proc.stdin.flush()
            except OSError:
                pass
            gone = True
        elif gone:
            try:
                proc.wait(0.1)
            except subprocess.TimeoutExpired:
                pass
        if (cancel is not None and cancel.is_set()) or time.monotonic() > limit:
            cancelled = cancel is not None and cancel.is_set()
            proc.kill()  # the connection closes: the watcher there stops the launcher
            proc.wait()
    for t in readers:
        t.join(10)
    try:
        proc.stdin.close()
    except OSError:
        pass
    out = b"".join(chunks["out"]).decode(errors="replace")
    err = b"".join(chunks["err"]).decode(errors="replace")
    code = proc.returncode
    return _sample(out, err, code, dest, timeout_s, cancelled)


@dataclass(frozen=True)
class SshLauncher:
    """A launcher on an SSH target: `argv` is run in `folder` there (a bundle's folder) through
    the launcher at `launcher` there."""

    dest: Destination
    name: str
    launcher: str
    folder: str
    via: tuple[str, ...] = ()  # see run_once

    @property
    def where(self) -> str:
        return f"target {self.name}"

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
        def once(argv: list[str], timeout_s: float, _live: object, cancel: threading.Event | None) -> Sample:
            return run_once(
                self.dest, self.launcher, self.folder, argv, timeout_s=timeout_s, cancel=cancel, via=self.via
            )

        m = measuring.measure(
            argv, n=n, warmup=warmup, timeout_s=timeout_s, on_progress=on_progress, cancel=cancel, once=once
        )
        m.cwd = f"{self.name}:{self.folder}"
        return m


def home(dest: Destination) -> str:
    """The target's REMOTE_ROOT as an absolute path (made if missing)."""
    out = run(dest, 'mkdir -p "$HOME/$1" && cd "$HOME/$1" && pwd', REMOTE_ROOT, timeout_s=CONNECT_TIMEOUT_S)
    return out.strip()


def _inside(dest: Destination, remote: str) -> Path | None:
    """Where an absolute path of an emulated target is on this machine (its root is a folder
    here: files go in and out by plain copies, not through emulated `cat`); None for a host."""
    if not emulated.is_emulated(dest.host):
        return None
    return emulated.root_dir(emulated.parse(dest.host) or "") / remote.lstrip("/")


def send_file(dest: Destination, local: Path, remote: str, *, mode: str = "644") -> None:
    """Copy one file to `remote` (absolute) unless it is there already."""
    if (there := _inside(dest, remote)) is not None:
        if not there.exists():
            there.parent.mkdir(parents=True, exist_ok=True)
            part = there.with_name(f"{there.name}.part")
            shutil.copyfile(local, part)
            part.chmod(int(mode, 8))
            part.rename(there)
        return
    script = (
        'test -e "$1" && exit 0; mkdir -p "$(dirname "$1")" && p="$1.part.$$"'
        ' && cat > "$p" && chmod "$2" "$p" && mv "$p" "$1"'
    )
    run(dest, script, remote, mode, stdin=local.read_bytes(), timeout_s=600)


def send_tree(dest: Destination, local: Path, remote: str, *, exclude: tuple[str, ...] = ()) -> bool:
    """Copy a folder to `remote` (absolute) as a tar stream unless it is there already; True
    when it was sent, False when the target had it."""
    if (there := _inside(dest, remote)) is not None:
        if there.is_dir():
            return False
        part = there.with_name(f"{there.name}.part")
        shutil.rmtree(part, ignore_errors=True)
        shutil.copytree(local, part, symlinks=True, ignore=lambda d, _n: exclude if Path(d) == local else ())
        part.rename(there)
        return True
    if (
        run(dest, 'test -d "$1" && echo present || true', remote, timeout_s=CONNECT_TIMEOUT_S).strip()
        == "present"
    ):
        return False
    tar = ["tar", "-C", str(local), "-cf", "-", *(f"--exclude=./{e}" for e in exclude), "."]
    data = subprocess.run(tar, capture_output=True, check=True).stdout
    script = 'p="$1.part.$$"; mkdir -p "$p" && tar -xf - -C "$p" && mv "$p" "$1" || { rm -rf "$p"; exit 1; }'
    try:
        run(dest, script, remote, stdin=data, timeout_s=1800)
    except TargetError as e:
        free = free_bytes(dest, remote)
        if free is not None and free < len(data):
            raise TargetError(
                f"no disk space left on {dest.text()}: {local.name} needs {human(len(data))}, "
                f"{human(free)} free there"
            ) from e
        raise
    return True


def free_bytes(dest: Destination, remote: str) -> int | None:
    """The free space of the file system holding `remote`'s folder, or None if unknown."""
    script = 'df -Pk "$(dirname "$1")" 2>/dev/null | { read -r _; read -r _ _ _ a _; echo "$a"; }'
    try:
        out = run(dest, script, remote, timeout_s=CONNECT_TIMEOUT_S).strip()
    except TargetError:
        return None
    return int(out) * 1024 if out.isdigit() else None


def fetch_file(dest: Destination, remote: str) -> bytes:
    """A file of the target, whole."""
    if (there := _inside(dest, remote)) is not None:
        try:
            return there.read_bytes()
        except OSError as e:
            raise TargetError(f"{dest.text()}: {e}") from None
    argv = [*ssh_argv(dest), remote_command('cat "$1"', remote)]
    res = subprocess.run(argv, capture_output=True, timeout=600, check=False)
    if res.returncode != 0:
        raise TargetError(explain(res.stderr.decode(errors="replace"), res.returncode, dest))
    return res.stdout


def clean(dest: Destination) -> None:
    """Remove everything deploytui put on the target."""
    run(dest, 'rm -rf "$HOME/$1"', REMOTE_ROOT, timeout_s=600)


def spawn_read(
    argv: list[str], ready: threading.Event | None = None
) -> tuple[subprocess.Popen[bytes], dict[str, list[bytes]], list[threading.Thread]]:
    """Start `argv` in a session of its own, stdin a pipe, its stdout and stderr read whole into
    `chunks["out"]` / `chunks["err"]` by the two threads returned (started: a pipe never fills;
    join them once the process ended). `ready` is set once stdout has said `READY` (or ended).
    OSError when it cannot start."""
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    assert proc.stdout is not None and proc.stderr is not None
    chunks: dict[str, list[bytes]] = {"out": [], "err": []}

    def read(stream: IO[bytes], into: list[bytes], ready: threading.Event | None) -> None:
        for chunk in iter(lambda: stream.read1(65536), b""):  # type: ignore[attr-defined]
            into.append(chunk)
            if ready is not None and not ready.is_set() and READY.encode() in b"".join(into):
                ready.set()
        if ready is not None:
            ready.set()

    readers = [
        threading.Thread(target=read, args=(proc.stdout, chunks["out"], ready), daemon=True),
        threading.Thread(target=read, args=(proc.stderr, chunks["err"], None), daemon=True),
    ]
    for t in readers:
        t.start()
    return proc, chunks, readers
