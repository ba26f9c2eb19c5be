"""Checking models without importing torch: `deploytui.models.describe` in a subprocess.

The light side calls these: `deploytui models`, the CLI's check before anything is built, the
app opening a model. The subprocess runs in its own process group; a cancel or a timeout kills
the group, so nothing is left running.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from typing import Any

TIMEOUT_S = 120.0
MARK = "deploytui-describe: "  # describe's own lines; what the model's code prints is never read


def describe(
    refs: list[str], cancel: threading.Event | None = None, timeout_s: float = TIMEOUT_S
) -> tuple[list[dict[str, Any]], str]:
    """Each model's description (or its `error`), from a subprocess; and "" or why there are
    none (it could not start, timed out, was cancelled, or printed nothing: its last stderr line)."""
    from deploytui import paths
    from deploytui.procs import kill_group

    try:
        proc = subprocess.Popen(
            [paths.python(), "-m", "deploytui.models.describe", *refs],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
    except OSError as e:
        return [], f"could not describe {' '.join(refs)}: {e}"
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            out, err = proc.communicate(timeout=0.1)
            break
        except subprocess.TimeoutExpired:
            if (cancel is not None and cancel.is_set()) or time.monotonic() > deadline:
                kill_group(proc.pid)
                proc.communicate()
                return [], "cancelled" if cancel is not None and cancel.is_set() else "timed out"
    lines = [_marked(ln) for ln in out.splitlines() if ln.startswith(MARK)]
    if lines:
        return lines, ""
    tail = (err.strip().splitlines() or ["no output"])[-1]
    return [], f"could not describe {' '.join(refs)}: {tail}"


def _marked(line: str) -> dict[str, Any]:
    try:
        value = json.loads(line[len(MARK) :])
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {"error": f"describe printed a damaged line: {line[:80]!r}"}


def check(ref: str, cancel: threading.Event | None = None) -> tuple[dict[str, Any] | None, str]:
    """One model's description and "", or None and the one clear message why it cannot be
    used (it does not import, its factory raises or returns the wrong thing, an input's dtype)."""
    lines, err = describe([ref], cancel)
    if err:
        return None, err
    if lines[0].get("error"):
        return None, str(lines[0]["error"])
    return lines[0], ""
