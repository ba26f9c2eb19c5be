"""A long script on a target (a Python bundle's venv made there: pip, minutes under qemu) that
stops whole when it is no longer wanted: cancelled, timed out, or deploytui killed.

There the script runs in a session of its own (`setsid`, util-linux, like the `flock` every run
takes), beside a watcher that reads the connection's input: when our end closes it (we never
write to it), the watcher kills the script's whole process group, pip and its children
included. Here the ssh client (or the emulated root's bwrap, which `--unshare-pid` and
`--die-with-parent` tie to us) runs in a session of its own too, killed as a group when stopped.
If deploytui itself is killed, the input's pipe closes with it, so the same watcher stops the
script there.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

from deploytui.launchers.ssh import Destination, TargetError, explain, remote_command, spawn_read, ssh_argv

# $1 the script, $2.. its arguments. The watcher reads the input through fd 5 (an asynchronous
# list's own stdin is /dev/null) and keeps no descriptor of the session's output, so the session
# ends when the script does; its `cat` ends when our end of the input closes.
WATCHED_SCRIPT = r"""
s="$1"; shift
command -v setsid >/dev/null 2>&1 || { echo "no setsid on the target (util-linux)" >&2; exit 96; }
exec 5<&0
setsid sh -c "$s" sh "$@" </dev/null 5<&- &
p=$!
( cat <&5 >/dev/null 2>&1; kill -KILL -"$p" 2>/dev/null ) >/dev/null 2>&1 &
w=$!
wait "$p"; c=$?
kill "$w" 2>/dev/null
exit "$c"
"""
GRACE_S = 5.0  # after our end of the input closes, how long the watcher there has to stop it


def run(
    dest: Destination,
    script: str,
    *args: str,
    timeout_s: float,
    cancel: threading.Event | None = None,
) -> str:
    """Run a POSIX sh `script` on the target, its whole process group there stopped when
    `cancel` is set, after `timeout_s`, or when this process dies; its stdout, or TargetError
    with one line ("cancelled" when cancelled)."""
    argv = [*ssh_argv(dest), remote_command(WATCHED_SCRIPT, script, *args)]
    try:
        proc, chunks, readers = spawn_read(argv)
    except OSError as e:
        raise TargetError(f"cannot run ssh: {e}") from None
    stopped = ""
    limit = time.monotonic() + timeout_s
    try:
        while proc.poll() is None and not stopped:
            try:
                proc.wait(0.2)
            except subprocess.TimeoutExpired:
                pass
            if cancel is not None and cancel.is_set():
                stopped = "cancelled"
            elif time.monotonic() > limit:
                stopped = f"{dest.text()} did not finish within {timeout_s:.0f} s"
    finally:  # also on KeyboardInterrupt: nothing is left running, here or there
        _stop(proc)
    for t in readers:
        t.join(10)
    if stopped:
        raise TargetError(stopped)
    out = b"".join(chunks["out"]).decode(errors="replace")
    if proc.returncode != 0:
        err = b"".join(chunks["err"]).decode(errors="replace")
        raise TargetError(explain(err, proc.returncode, dest))
    return out


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Close our end of the input (the watcher there kills the script's group), give it
    GRACE_S to end, then kill what is left here: the client's whole session."""
    assert proc.stdin is not None
    try:
        proc.stdin.close()
    except OSError:
        pass
    try:
        proc.wait(GRACE_S)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()
