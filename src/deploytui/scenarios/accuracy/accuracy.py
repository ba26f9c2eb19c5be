"""A form judged on the model's evaluation set (`accuracy/`, written by the export-samples step:
inputs_K, eager's outputs on each in reference_K, labels_K with `--data`'s labels, set.json).

A variant's accuracy against eager: its outputs on the example inputs (what the bench's run
wrote) and on each sample, tallied per output (`precision.OutputTally`) and judged by its budget.
With labelled data, every form (fp32 too) is also scored by the task's metric, its own and
eager's on the same rows (`judge.task.TaskTally`) → `TaskScore`. Here a Python runner answers
every sample in one process (`--samples`: its start-up, seconds, paid once), a compiled program
is one fresh run a sample (`--repeat 0`); on a target, each sample is a run there.

Reads tensors with tensorfile (no numpy): the app's bench worker runs this.
"""

from __future__ import annotations

import json
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from deploytui.core import paths, procs, tensorfile
from deploytui.core.record_parts import Accuracy, OutputAccuracy, TaskScore
from deploytui.core.runenv import runner_env
from deploytui.core.workspace import Workspace
from deploytui.judge.numerics import match_outputs, reference_names
from deploytui.judge.precision import Budget, OutputTally
from deploytui.judge.task import CONFIDENCE, TOP1, TaskTally, wilson
from deploytui.spec.forms import Form

SET_DIR = "accuracy"
LABELS_KEY = "labels"  # the tensor of labels_K.safetensors, as the export-samples step writes it


class AccuracyError(ValueError):
    """A sample could not be run or read: the message says which and why, in one line."""


@dataclass(frozen=True)
class SampleSet:
    """What the evaluation set is (set.json): the data or None (drawn), its split and fingerprint."""

    samples: int
    calibration: int
    seed: int
    data: str | None = None
    fingerprint: str | None = None
    labels: bool = False
    labelled_output: str | None = None
    skipped: int = 0


def sample_set(ws: Workspace) -> SampleSet | None:
    """The model's evaluation set as built, or None (not built, or unreadable)."""
    try:
        d = json.loads(ws.sample_set_path.read_text())
        return SampleSet(
            samples=int(d["evaluation_samples"]),
            calibration=int(d["calibration_samples"]),
            seed=int(d["seed"]),
            data=d.get("data"),
            fingerprint=d.get("fingerprint"),
            labels=bool(d.get("labels")),
            labelled_output=d.get("labelled_output"),
            skipped=int(d.get("skipped") or 0),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def sample_paths(ws: Workspace, k: int) -> tuple[Path, Path]:
    """(inputs, eager's outputs) of sample k of the model's evaluation set."""
    folder = ws.model_dir / SET_DIR
    return folder / f"inputs_{k}.safetensors", folder / f"reference_{k}.safetensors"


def labels_path(ws: Workspace, k: int) -> Path:
    return ws.model_dir / SET_DIR / f"labels_{k}.safetensors"


def tally(
    got: Path,
    want: Path,
    tallies: dict[str, OutputTally],
    task: TaskTally | None = None,
    labels: Path | None = None,
) -> None:
    """Add one sample: the form's outputs file against eager's, output by output; with labels,
    the labelled output's scores (the form's and eager's) against them too."""
    w, meta = tensorfile.read_all(want)
    names = reference_names(w, meta)
    for name, g in zip(names, match_outputs(tensorfile.read(got), names), strict=True):
        if list(g.shape) != list(w[name].shape):
            raise AccuracyError(f"{name} has shape {list(g.shape)}, eager's is {list(w[name].shape)}")
        t = tallies.setdefault(name, OutputTally(name, list(w[name].shape)))
        gv, wv = [float(v) for v in g.values], [float(v) for v in w[name].values]
        t.add(gv, wv)
        if task is not None and labels is not None and name == task.output:
            task.add(gv, wv, [int(v) for v in tensorfile.read(labels)[LABELS_KEY].values])


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


def scored(task: TaskTally, s: SampleSet) -> TaskScore:
    """A task tally as the record holds it."""
    value, eager = task.accuracy()
    drop, lo, hi = task.drop()
    v_lo, v_hi = wilson(sum(task.form_right), task.rows)
    ppl = task.perplexity()
    return TaskScore(
        metric=TOP1,
        output=task.output,
        rows=task.rows,
        value=value,
        eager=eager,
        drop=drop,
        drop_low=lo,
        drop_high=hi,
        value_low=v_lo,
        value_high=v_hi,
        confidence=CONFIDENCE,
        agreement=task.agree / task.rows if task.rows else 1.0,
        samples=s.samples,
        calibration=s.calibration,
        seed=s.seed,
        data=s.data or "",
        fingerprint=s.fingerprint or "",
        perplexity=ppl[0] if ppl else None,
        eager_perplexity=ppl[1] if ppl else None,
    )


def on_example(form: Form, got: Path, ws: Workspace, want: Path | None = None) -> Accuracy:
    """The accuracy on the example inputs alone (the run's own outputs file) against eager's
    outputs of them (`want`: of the inputs it ran on, a serving cell's batch)."""
    tallies: dict[str, OutputTally] = {}
    tally(got, want or ws.reference_path, tallies)
    return judged(form, tallies)


def judges_on_set(form: Form, ws: Workspace) -> bool:
    """Whether a run of `form` goes on to the evaluation set: a variant always (its budget), any
    form when the set is the user's labelled data (the task's metric)."""
    s = sample_set(ws)
    return bool(form.variant) or (s is not None and s.labels)


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
    say: Callable[[str], None] | None = None,
    run_sample: Callable[[Path, Path], None] | None = None,
) -> tuple[Accuracy | None, TaskScore | None]:
    """The form on every sample of the evaluation set: a variant's accuracy (the example inputs,
    `got` its run's outputs on them, plus the set) and, with labels, the task's score. Here a
    Python runner answers the set in one process, a compiled program is one fresh run a sample;
    `run_sample(inputs, outputs)` runs each elsewhere (on a target). AccuracyError when the set
    is missing, a sample's run fails or its files are bad."""
    s = sample_set(ws)
    if s is None:
        raise AccuracyError("the evaluation set is missing: run deploytui build")
    tallies: dict[str, OutputTally] = {}
    if form.variant:
        tally(got, ws.reference_path, tallies)
    task = None
    if s.labels and s.labelled_output:
        w = tensorfile.read(sample_paths(ws, 0)[1]).get(s.labelled_output)
        shape = list(w.shape) if w is not None else []
        task = TaskTally(s.labelled_output, shape[-1] if shape else 0, next_token=len(shape) >= 3)
    with tempfile.TemporaryDirectory(dir=paths.scratch_dir()) as tmp:
        todo = []
        for k in range(s.samples):
            inputs, want = sample_paths(ws, k)
            if not inputs.is_file() or not want.is_file():
                raise AccuracyError(f"sample {k} of the evaluation set is missing: run deploytui build")
            todo.append((inputs, Path(tmp) / f"outputs_{k}.safetensors"))
        if run_sample is None and form.needs_python:
            if say is not None and s.samples >= 20:
                say(f"{form.key}: the {s.samples} samples of the evaluation set, in one process")
            _all_in_one(form, ws, todo, timeout_s=timeout_s, cancel=cancel)
        else:
            run_one = run_sample or run_here(form, ws, timeout_s=timeout_s, cancel=cancel)
            for k, (inputs, out) in enumerate(todo):
                if say is not None and s.samples >= 20 and k and k % 10 == 0:
                    say(f"{form.key}: sample {k}/{s.samples} of the evaluation set")
                try:
                    run_one(inputs, out)
                except AccuracyError as e:
                    raise AccuracyError(f"sample {k}: {e}") from None
        for k, (_, out) in enumerate(todo):
            try:
                tally(out, sample_paths(ws, k)[1], tallies, task, labels_path(ws, k) if task else None)
            except (ValueError, OSError, KeyError) as e:
                raise AccuracyError(f"sample {k}: bad outputs: {e}") from None
    accuracy = judged(form, tallies) if form.variant else None
    return accuracy, scored(task, s) if task is not None else None
