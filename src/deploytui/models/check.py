"""Checking models without importing torch: `deploytui.models.describe` in a subprocess.

The light side calls these: `deploytui models`, the CLI's check before anything is built, the
app opening a model. The subprocess runs in its own process group; a cancel or a timeout kills
the group, so nothing is left running.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from deploytui.core import defaults

MARK = "deploytui-describe: "  # describe's own lines; what the model's code prints is never read


def describe(
    refs: list[str], cancel: threading.Event | None = None, timeout_s: float = defaults.CHILD_TIMEOUT_S
) -> tuple[list[dict[str, Any]], str]:
    """Each model's description (or its `error`), from a subprocess; and "" or why there are
    none (it could not start, timed out, was cancelled, or printed nothing: its last stderr line)."""
    from deploytui.core import paths, procs

    child = procs.run(
        [paths.python(), "-m", "deploytui.models.describe", *refs], timeout_s=timeout_s, cancel=cancel
    )
    if child.error or child.killed:
        return [], child.killed or f"could not describe {' '.join(refs)}: {child.error}"
    lines = [_marked(ln) for ln in child.stdout if ln.startswith(MARK)]
    if lines:
        return lines, ""
    tail = ([ln for ln in child.stderr if ln.strip()] or ["no output"])[-1]
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
