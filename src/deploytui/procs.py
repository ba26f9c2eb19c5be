"""Small process helpers shared by the measuring core, the builder and the inspectors."""

from __future__ import annotations

import os
import signal
import subprocess


def kill_group(pgid: int) -> None:
    """SIGKILL a whole process group; a group that is already gone is not an error."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def tool_version(exe: str, timeout_s: float = 30.0) -> str:
    """The first line of `exe --version`, or "?" when it cannot be run or prints nothing."""
    try:
        out = subprocess.run(
            [exe, "--version"], capture_output=True, text=True, timeout=timeout_s, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return "?"
    return out.splitlines()[0].strip() if out.strip() else "?"
