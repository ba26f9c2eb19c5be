"""What the Python runners share: stage timing, the module census, the JSON line, the error line."""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn, TextIO


class Stages:
    """Wall-clock stages since process start of the runner module (time.perf_counter), and the
    timed forwards' own figures (`timed_forwards` fills them, `emit_stages` prints them)."""

    def __init__(self) -> None:
        self.t = time.perf_counter()
        self.ms: dict[str, float | None] = {}
        self.forward_ms: list[float] = []  # each timed forward, in order
        self.warmup = 0
        self.cpu_ms: float | None = None  # the process's CPU time over the timed forwards
        self.loop_ms: float | None = None  # their wall time, end to end
        self.threads: dict[str, int | None] = {}  # {"requested": T, "reported": what the runtime says}

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
#          [--warmup W] [--threads T] [--samples LIST]
#
# --samples (the Python runners only): LIST is a text file of lines `IN<TAB>OUT`; after the
# protocol's forwards, one untimed forward on each IN, its outputs written to OUT (the accuracy
# set in one process: a Python runtime's start-up of seconds is paid once, not per sample).
#
# Inputs are named: input_0, input_1, ... are passed positionally, any other name (a forward's
# keyword, `attention_mask`) by keyword; the file's __metadata__ "inputs" lists them in call order
# (positional first, then the keywords as the export saw them): runtimes that take a flat list
# (AOTInductor, ExecuTorch) feed that order, ONNX runtimes feed the graph's inputs by name.
# A nested call (a dict or a list argument) names its tensors by their key paths (`batch.user_ids`,
# `images.0`: a dot marks one) and the __metadata__ "call" holds its structure (torch's treespec
# as JSON) for the runners that rebuild the call (the Python torch runners).
# Outputs are named by their pytree path (`logits`, `0.1`, `output` for a bare tensor) where the
# runtime knows it, else output_0, output_1, ... in the flattened order; numerics.compare_files
# matches either against the reference's names. The last stdout line is {"stages_ms": {"load",
# "first_forward", "steady_forward" (median of K more forwards, null when K is 0)}, "outputs": N,
# "warmup": W, "forward_ms": [K times], "cpu_ms", "loop_ms", "threads": {"requested", "reported"}};
# Python runners add "import" and the module census. After the first forward, W untimed warm-up
# forwards, then K forwards each timed alone with the monotonic clock (time.perf_counter,
# std::chrono::steady_clock, std::time::Instant); cpu_ms / loop_ms: the process's CPU time and
# the wall time over those K (null when K is 0). docs/runner-protocol.md has the definition.
# Failures: one `error:` line on stderr, exit 1. C++ and Rust runners speak the same.

DEFAULT_REPEAT = 10
MAX_REPEAT = 10_000  # K and W at most this: the line's raw times stay bounded
DEFAULT_THREADS = 1
# the keys of every runner's line, in every language (Python runners add their module census)
LINE_KEYS = ("stages_ms", "outputs", "warmup", "forward_ms", "cpu_ms", "loop_ms", "threads")

INPUTS_KEY = "inputs"  # the inputs file's __metadata__ entry: the names in call order, comma-joined
POSITIONAL = "input_"  # input_0, input_1, ...: passed positionally; any other name by keyword
CALL_KEY = "call"  # the inputs file's __metadata__ entry of a nested call: its treespec, JSON


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
    warmup: int = 0
    threads: int = DEFAULT_THREADS
    samples: list[tuple[str, str]] = field(default_factory=list)  # (inputs, outputs) of --samples


def _samples(path: str | None) -> list[tuple[str, str]]:
    """--samples LIST's (inputs, outputs) pairs, or the usage error."""
    if path is None:
        return []
    try:
        with open(path, encoding="utf-8") as f:
            lines = [ln.split("\t") for ln in f.read().splitlines() if ln.strip()]
    except OSError as e:
        fail(f"could not read --samples {path}: {e.strerror}")
    if any(len(words) != 2 for words in lines):
        fail(f"--samples {path}: each line is INPUTS<TAB>OUTPUTS", 2)
    return [(a, b) for a, b in lines]


def _count(flags: dict[str, str], name: str, default: int, least: int) -> int:
    """A whole-number flag between `least` and MAX_REPEAT, or the usage error."""
    text = flags.get(name)
    try:
        value = int(text) if text is not None else default
    except ValueError:
        value = least - 1
    if not least <= value <= MAX_REPEAT:
        fail(f"--{name} must be a whole number from {least} to {MAX_REPEAT}, got {text!r}", 2)
    return value


def parse_args(argv: list[str], usage: str) -> ProtocolArgs:
    """The protocol's flags (--inputs, --outputs, --repeat, --warmup, --threads, --model,
    --samples) and the positional rest."""
    pos: list[str] = []
    flags: dict[str, str] = {}
    it = iter(argv)
    for a in it:
        if a in ("--inputs", "--outputs", "--repeat", "--warmup", "--threads", "--model", "--samples"):
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
    return ProtocolArgs(
        pos,
        flags["inputs"],
        flags["outputs"],
        _count(flags, "repeat", DEFAULT_REPEAT, 0),
        flags.get("model"),
        _count(flags, "warmup", 0, 0),
        _count(flags, "threads", DEFAULT_THREADS, 1),
        _samples(flags.get("samples")),
    )


def model_file(args: ProtocolArgs, usage: str) -> str:
    """The one positional argument: a model file that exists (else a usage error, or a failure
    that names it)."""
    if len(args.positional) != 1:
        fail(f"usage: {usage}", 2)
    path = args.positional[0]
    if not os.path.isfile(path):
        fail(f"model file not found: {path}")
    return path


def timed_forwards(forward: Callable[[], Any], repeat: int, stages: Stages, warmup: int = 0) -> Any:
    """The first forward (stage first_forward), `warmup` untimed ones, then `repeat` more, each
    timed alone (perf_counter around the call): steady_forward is their median; the process's
    CPU time and the wall time over the `repeat` go in cpu_ms and loop_ms."""
    result = forward()
    stages.mark("first_forward")
    for _ in range(warmup):
        result = forward()
    times = []
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for _ in range(repeat):
        t = time.perf_counter()
        result = forward()
        times.append((time.perf_counter() - t) * 1000)
    if times:
        stages.cpu_ms = round((time.process_time() - cpu0) * 1000, 4)
        stages.loop_ms = round((time.perf_counter() - wall0) * 1000, 4)
    stages.ms["steady_forward"] = round(statistics.median(times), 4) if times else None
    stages.forward_ms = [round(x, 6) for x in times]
    stages.warmup = warmup
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
    line: dict[str, Any] = {
        "stages_ms": stages.ms,
        "outputs": n_outputs,
        "warmup": stages.warmup,
        "forward_ms": stages.forward_ms,
        "cpu_ms": stages.cpu_ms,
        "loop_ms": stages.loop_ms,
        "threads": stages.threads,
    }
    if modules_added is not None:
        line.update(
            modules_added=package_counts(modules_added),
            modules_added_torch=package_counts(modules_added, "torch"),
            modules_added_total=len(modules_added),
        )
    print(json.dumps(line), file=out or sys.stdout, flush=True)
