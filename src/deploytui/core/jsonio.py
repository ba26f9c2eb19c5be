"""JSON files that survive a crash (written to a temp file in the same folder, then renamed), and
the JSON line a subprocess prints last. The stores on top of them: `store.py`."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def write_atomic(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, path.stat().st_mode & 0o777 if path.exists() else 0o644)  # mkstemp makes it 0600
        with os.fdopen(fd, "w") as f:
            json.dump(obj, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read(path: Path) -> Any:
    """The parsed file; raises OSError or ValueError (json.JSONDecodeError) when it cannot be read."""
    with open(path) as f:
        return json.load(f)


def last_object(output: str | Iterable[str]) -> dict[str, Any] | None:
    """The JSON object on the last line of a program's output that starts with `{` (runners and
    build steps print their result that way, after any chatter); None when there is none, or when
    that line is not valid JSON. `output` is the whole text or its lines."""
    lines = output.splitlines() if isinstance(output, str) else list(output)
    for line in reversed(lines):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                return None
            return value if isinstance(value, dict) else None
    return None
