"""What the Python runners share: stage timing, the module census, the JSON line, the error line."""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn, TextIO


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
# Inputs are named: input_0, input_1, ... are passed positionally, any other name (a forward's
# keyword, `attention_mask`) by keyword; the file's __metadata__ "inputs" lists them in call order
# (positional first, then the keywords as the export saw them): runtimes that take a flat list
# (AOTInductor, ExecuTorch) feed that order, ONNX runtimes feed the graph's inputs by name.
# Outputs are named by their pytree path (`logits`, `0.1`, `output` for a bare tensor) where the
# runtime knows it, else output_0, output_1, ... in the flattened order; numerics.compare_files
# matches either against the reference's names. The last stdout line is {"stages_ms": {"load",
# "first_forward", "steady_forward" (median of K more forwards, null when K is 0)}, "outputs": N};
# Python runners add "import" and the module census.
# Failures: one `error:` line on stderr, exit 1. C++ and Rust runners speak the same.

DEFAULT_REPEAT = 10

INPUTS_KEY = "inputs"  # the inputs file's __metadata__ entry: the names in call order, comma-joined
POSITIONAL = "input_"  # input_0, input_1, ...: passed positionally; any other name by keyword


def positional_index(name: str) -> int | None:
    digits = name[len(POSITIONAL) :]
    ok = name.startswith(POSITIONAL) and digits.isdigit() and str(int(digits)) == digits
    return int(digits) if ok else None


def call_order(names: list[str], metadata: dict[str, str] | None) -> list[str]:
    """The inputs' names in call order: as the file's metadata lists them, else input_0, input_1,
    ... by number. ValueError when the file and its list disagree."""
    listed = (metadata or {}).get(INPUTS_KEY)
    if listed is not None:
        order = listed.split(",") if listed else []
        if sorted(order) != sorted(names):
            raise ValueError(f"holds {sorted(names)} but its metadata lists {order}")
        return order
    by_index = {positional_index(n): n for n in names}
    if sorted(i for i in by_index if i is not None) != list(range(len(names))):
        raise ValueError(f"holds {sorted(names)}: without a metadata list, inputs are input_0, input_1, ...")
    return [by_index[i] for i in range(len(names))]


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


def own_stdout() -> TextIO:
    """Keep stdout for this program's own line: from here on whatever the model's code prints
    (a config dump, a log line that starts with `{`), from Python or C, goes to stderr, and the
    returned file writes to the real stdout."""
    sys.stdout.flush()
    ours = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    return ours


def emit_stages(
    stages: Stages, n_outputs: int, modules_added: set[str] | None = None, out: TextIO | None = None
) -> None:
    line: dict[str, Any] = {"stages_ms": stages.ms, "outputs": n_outputs}
    if modules_added is not None:
        line.update(
            modules_added=package_counts(modules_added),
            modules_added_torch=package_counts(modules_added, "torch"),
            modules_added_total=len(modules_added),
        )
    print(json.dumps(line), file=out or sys.stdout, flush=True)
