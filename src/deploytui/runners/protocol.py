"""What the Python runners share: stage timing, the module census, the JSON line, the error line."""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn


class Stages:
    """Wall-clock stages since process start of the runner module (time.perf_counter)."""

    def __init__(self) -> None:
        self.t = time.perf_counter()
        self.ms: dict[str, float | None] = {}

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


def fail(message: str, code: int = 1) -> NoReturn:
    print(f"error: {message}".replace("\n", " ")[:500], file=sys.stderr, flush=True)
    sys.exit(code)


# ---------------------------------------------------------------- the runner protocol
#
#   RUNNER [MODE] MODEL_FILE --inputs IN.safetensors --outputs OUT.safetensors [--repeat K]
#
# Inputs are input_0, input_1, ...; outputs output_0, ... in the model's order. The last stdout
# line is {"stages_ms": {"load", "first_forward", "steady_forward" (median of K more forwards,
# null when K is 0)}, "outputs": N}; Python runners add "import" and the module census.
# Failures: one `error:` line on stderr, exit 1. C++ and Rust runners speak the same.

DEFAULT_REPEAT = 10


@dataclass
class ProtocolArgs:
    positional: list[str]
    inputs: str
    outputs: str
    repeat: int
    model: str | None


def parse_args(argv: list[str], usage: str) -> ProtocolArgs:
    """The protocol's flags (--inputs, --outputs, --repeat, --model) and the positional rest."""
    pos: list[str] = []
    flags: dict[str, str] = {}
    it = iter(argv)
    for a in it:
        if a in ("--inputs", "--outputs", "--repeat", "--model"):
            value = next(it, None)
            if value is None:
                fail(f"{a} needs a value; usage: {usage}", 2)
            flags[a[2:]] = value
        elif a.startswith("--"):
            fail(f"unknown option {a}; usage: {usage}", 2)
        else:
            pos.append(a)
    if "inputs" not in flags or "outputs" not in flags:
        fail(f"--inputs and --outputs are required; usage: {usage}", 2)
    try:
        repeat = int(flags.get("repeat", DEFAULT_REPEAT))
    except ValueError:
        repeat = -1
    if repeat < 0:
        fail(f"--repeat must be a whole number >= 0, got {flags.get('repeat')!r}", 2)
    return ProtocolArgs(pos, flags["inputs"], flags["outputs"], repeat, flags.get("model"))


def timed_forwards(forward: Callable[[], Any], repeat: int, stages: Stages) -> Any:
    """The first forward (stage first_forward), then `repeat` more: steady_forward is their median."""
    result = forward()
    stages.mark("first_forward")
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        result = forward()
        times.append((time.perf_counter() - t) * 1000)
    stages.ms["steady_forward"] = round(statistics.median(times), 4) if times else None
    stages.t = time.perf_counter()
    return result


def emit_stages(stages: Stages, n_outputs: int, modules_added: set[str] | None = None) -> None:
    line: dict[str, Any] = {"stages_ms": stages.ms, "outputs": n_outputs}
    if modules_added is not None:
        line.update(
            modules_added=package_counts(modules_added),
            modules_added_torch=package_counts(modules_added, "torch"),
            modules_added_total=len(modules_added),
        )
    print(json.dumps(line), flush=True)
