"""What the Python runners share: stage timing, the module census, the JSON line, the error line."""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from typing import Any


class Stages:
    """Wall-clock stages since process start of the runner module (time.perf_counter)."""

    def __init__(self) -> None:
        self.t = time.perf_counter()
        self.ms: dict[str, float] = {}

    def mark(self, name: str) -> None:
        now = time.perf_counter()
        self.ms[name] = round((now - self.t) * 1000, 3)
        self.t = now


def package_counts(names: set[str], parent: str = "") -> dict[str, int]:
    """Modules per top-level package, or per subpackage of `parent` (torch -> torch.distributed,
    torch._dynamo, ...), most first."""
    if not parent:
        return dict(Counter(n.split(".")[0] for n in names).most_common())
    depth = parent.count(".") + 2
    return dict(
        Counter(".".join(n.split(".")[:depth]) for n in names if n.startswith(parent + ".")).most_common()
    )


def emit(logits: list[Any], stages: Stages, modules_added: set[str]) -> None:
    print(
        json.dumps(
            {
                "logits": logits,
                "stages_ms": stages.ms,
                "modules_added": package_counts(modules_added),
                "modules_added_torch": package_counts(modules_added, "torch"),
                "modules_added_total": len(modules_added),
            }
        ),
        flush=True,
    )


def fail(message: str, code: int = 1) -> None:
    print(f"error: {message}".replace("\n", " ")[:500], file=sys.stderr, flush=True)
    sys.exit(code)
