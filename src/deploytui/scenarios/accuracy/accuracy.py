"""A variant's accuracy against eager: its outputs on the example inputs (what the bench's run
wrote) and on each input of the model's accuracy set (`accuracy/inputs_K.safetensors`, written
by the export-samples step with eager's outputs beside them) — a Python runner's all in one
process (`--samples`), a compiled program's one fresh run each (`--repeat 0`) — tallied per
output (`precision.OutputTally`) and judged by the form's budget.

Reads tensors with tensorfile (no numpy): the app's bench worker runs this.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from deploytui.core import paths, procs, tensorfile
from deploytui.core.record_parts import Accuracy, OutputAccuracy
from deploytui.core.runenv import runner_env
from deploytui.core.workspace import Workspace
from deploytui.judge.numerics import match_outputs, reference_names
from deploytui.judge.precision import SAMPLES, Budget, OutputTally
from deploytui.spec.forms import Form

SET_DIR = "accuracy"


class AccuracyError(ValueError):
    """A sample could not be run or read: the message says which and why, in one line."""


def sample_paths(ws: Workspace, k: int) -> tuple[Path, Path]:
    """(inputs, eager's outputs) of sample k of the model's accuracy set."""
    folder = ws.model_dir / SET_DIR
    return folder / f"inputs_{k}.safetensors", folder / f"reference_{k}.safetensors"


def tally(got: Path, want: Path, tallies: dict[str, OutputTally]) -> None:
    """Add one sample: the form's outputs file against eager's, output by output."""
    w, meta = tensorfile.read_all(want)
    names = reference_names(w, meta)
    for name, g in zip(names, match_outputs(tensorfile.read(got), names), strict=True):
        if list(g.shape) != list(w[name].shape):
            raise AccuracyError(f"{name} has shape {list(g.shape)}, eager's is {list(w[name].shape)}")
        t = tallies.setdefault(name, OutputTally(name, list(w[name].shape)))
        t.add([float(v) for v in g.values], [float(v) for v in w[name].values])


def judged(form: Form, tallies: dict[str, OutputTally]) -> Accuracy:
    """The tallies as the record holds them, with the budget's verdict."""
    budget = form.budget or Budget()
    broken = [why for t in tallies.values() if (why := t.breaks(budget))]
    return Accuracy(
        precision=form.precision,
        parent=form.parent,
        samples=max((t.samples for t in tallies.values()), default=0),
        min_cosine=budget.min_cosine,
        min_top1=budget.min_top1,
        within_budget=not broken,
        outputs=[
            OutputAccuracy(t.name, t.shape, t.samples, t.max_abs, t.mean_abs, t.min_cosine, t.top1)
            for t in tallies.values()
        ],
        reason="; ".join(broken) or None,
    )


def on_example(form: Form, got: Path, ws: Workspace, want: Path | None = None) -> Accuracy:
    """The accuracy on the example inputs alone (the run's own outputs file) against eager's
    outputs of them (`want`: of the inputs it ran on, a serving cell's batch)."""
    tallies: dict[str, OutputTally] = {}
    tally(got, want or ws.reference_path, tallies)
    return judged(form, tallies)


def _failed(done: procs.Finished) -> str:
    """ "" when the run went well, else why not in one line (its last stderr line)."""
    if not (done.error or done.killed or done.returncode != 0):
        return ""
    last = next((ln for ln in reversed(done.stderr) if ln.strip()), "")
    return f"{done.error or done.killed or f'exit {done.returncode}'}: {last.strip()[:300]}"


def run_here(
    form: Form, ws: Workspace, *, timeout_s: float, cancel: threading.Event | None
) -> Callable[[Path, Path], None]:
    """How a sample runs on this machine: a fresh process of the form's runner."""

    def run_sample(inputs: Path, out: Path) -> None:
        argv = [*form.command(ws), "--inputs", str(inputs), "--outputs", str(out), "--repeat", "0"]
        done = procs.run(argv, cwd=paths.ROOT, env=runner_env(), timeout_s=timeout_s, cancel=cancel)
        if why := _failed(done):
            raise AccuracyError(why)

    return run_sample


def _all_in_one(
    form: Form,
    ws: Workspace,
    todo: list[tuple[Path, Path]],
    *,
    timeout_s: float,
    cancel: threading.Event | None,
) -> None:
    """Every sample in one process of a Python runner (`--samples`: its start-up, seconds,
    paid once); a failure names the sample its line names."""
    (first, first_out), rest = todo[0], todo[1:]
    listing = first_out.with_name("samples.txt")
    listing.write_text("".join(f"{i}\t{o}\n" for i, o in rest))
    argv = [*form.command(ws), "--inputs", str(first), "--outputs", str(first_out), "--repeat", "0"]
    argv += ["--samples", str(listing)]
    done = procs.run(argv, cwd=paths.ROOT, env=runner_env(), timeout_s=timeout_s * len(todo), cancel=cancel)
    if why := _failed(done):
        k = next((k for k, (i, _) in enumerate(todo) if str(i) in why), 0)  # the file its line names
        raise AccuracyError(f"sample {k}: {why.replace(f'sample {todo[k][0]}: ', '')}")


def evaluate(
    form: Form,
    ws: Workspace,
    got: Path,
    *,
    timeout_s: float = 120.0,
    cancel: threading.Event | None = None,
    run_sample: Callable[[Path, Path], None] | None = None,
) -> Accuracy:
    """The example inputs (`got`: the run's outputs on them) plus every sample of the set: here,
    a Python runner answers them all in one process, a compiled program is one fresh run a
    sample; elsewhere, `run_sample(inputs, outputs)` runs each (on a target). AccuracyError
    when a sample is missing, or its run fails."""
    tallies: dict[str, OutputTally] = {}
    tally(got, ws.reference_path, tallies)
    with tempfile.TemporaryDirectory(dir=paths.scratch_dir()) as tmp:
        todo = []
        for k in range(SAMPLES):
            inputs, want = sample_paths(ws, k)
            if not inputs.is_file() or not want.is_file():
                raise AccuracyError(f"sample {k} of the accuracy set is missing: run deploytui build")
            todo.append((inputs, Path(tmp) / f"outputs_{k}.safetensors"))
        if run_sample is None and form.needs_python:
            _all_in_one(form, ws, todo, timeout_s=timeout_s, cancel=cancel)
        else:
            run_one = run_sample or run_here(form, ws, timeout_s=timeout_s, cancel=cancel)
            for k, (inputs, out) in enumerate(todo):
                try:
                    run_one(inputs, out)
                except AccuracyError as e:
                    raise AccuracyError(f"sample {k}: {e}") from None
        for k, (_, out) in enumerate(todo):
            try:
                tally(out, sample_paths(ws, k)[1], tallies)
            except (ValueError, OSError) as e:
                raise AccuracyError(f"sample {k}: bad outputs: {e}") from None
    return judged(form, tallies)
