"""Serving figures: every form at batch sizes x thread counts, from the per-forward times its
runner prints (`deploytui bench --batch 1,8,32 --threads 1,2`).

A cell is one fresh run of one form at one batch size and one thread count: after load and the
first forward, W untimed warm-up forwards, then K timed ones (the runner protocol); its record is
a RunRecord with `batch`, `forwards` (p50/p90/p99/...) and `threads`. At a batch size the inputs
are the example's first item repeated along dim 0 (`batch_files`), the form runs on its
dynamic-batch export where it has one (`registry.for_batch`), and its outputs are compared with
eager's first item repeated the same way, so a form that accepts the size but computes something
else still fails. The cells of a model are kept in artifacts/<slug>/serve.json (serve_store),
so the view and the report redraw them without running anything.

Standard library only (the app imports it): the runs are subprocesses.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from deploytui.core import tensorfile
from deploytui.core.record import RunRecord
from deploytui.core.workspace import Workspace
from deploytui.families.registry import for_batch
from deploytui.scenarios.serving.store import ServeStore, key
from deploytui.scenarios.startup.bench import Load, bench_form
from deploytui.spec.forms import Form
from deploytui.spec.manifest import Manifest


def example_batch(inputs: Path) -> int | None:
    """dim 0 of the example's first input of rank >= 1 (None: it has none)."""
    tensors, meta = tensorfile.read_all(inputs)
    order = meta.get("inputs", "").split(",") if meta.get("inputs") else sorted(tensors)
    for name in order:
        t = tensors.get(name)
        if t is not None and t.shape:
            return t.shape[0]
    return None


def repeat_first(src: Path, dst: Path, batch: int) -> None:
    """`src`'s tensors with every one of rank >= 1 made of its first item repeated `batch` times
    along dim 0 (rank-0 tensors as they are), its metadata kept. TensorFileError when it cannot."""
    tensors, meta = tensorfile.read_all(src)
    out = {}
    for name, t in tensors.items():
        if not t.shape:
            out[name] = t
            continue
        if t.shape[0] == 0:
            raise tensorfile.TensorFileError(f"{src.name}: {name} has no item to repeat (dim 0 is 0)")
        row = len(t.values) // t.shape[0]
        out[name] = tensorfile.Tensor(t.dtype, (batch, *t.shape[1:]), t.values[:row] * batch)
    dst.parent.mkdir(parents=True, exist_ok=True)
    tensorfile.write(dst, out, meta)


def batch_files(ws: Workspace, batch: int) -> tuple[Path, Path]:
    """The inputs and eager's expected outputs at `batch` (artifacts/<slug>/serve/b<B>/), made
    from the example and eager's outputs of it."""
    folder = ws.model_dir / "serve" / f"b{batch}"
    inputs, reference = folder / "inputs.safetensors", folder / "reference.safetensors"
    repeat_first(ws.inputs_path, inputs, batch)
    repeat_first(ws.reference_path, reference, batch)
    return inputs, reference


@dataclass(frozen=True)
class Cell:
    """One cell to run: a form at a batch size (None: the example as built) and thread count."""

    form: Form
    batch: int | None
    threads: int

    @property
    def key(self) -> str:
        return key(self.form.key, self.batch, self.threads)


def cells(chosen: Sequence[Form], batches: Sequence[int], threads: Sequence[int]) -> list[Cell]:
    """Form by form, batch by batch, thread count by thread count; with no batch sizes, each form
    as built at its example's size. At a batch size a form runs on its dynamic export."""
    sizes: list[int | None] = list(batches) or [None]
    return [Cell(for_batch(f) if b is not None else f, b, t) for f in chosen for b in sizes for t in threads]


def run_cell(
    cell: Cell,
    *,
    repeat: int,
    warmup: int,
    timeout_s: float,
    manifest: Manifest,
    ws: Workspace,
    files: dict[int, tuple[Path, Path] | str],
    cancel: threading.Event | None = None,
    say: Callable[[str], None] = lambda _line: None,
) -> RunRecord:
    """One fresh run of the cell's form (one counted run, no warm-up run: start-up is bench's
    figure). `files`: the batch files made so far (or why they could not be), filled here."""
    if cell.batch is None:
        load = Load(warmup=warmup, threads=cell.threads)
    else:
        if cell.batch not in files:
            try:
                files[cell.batch] = batch_files(ws, cell.batch)
            except (OSError, tensorfile.TensorFileError) as e:
                files[cell.batch] = f"cannot make the batch-{cell.batch} inputs: {e}"
        made = files[cell.batch]
        if isinstance(made, str):
            return RunRecord(cell.form.key, model=ws.model.text, error=made, batch=cell.batch)
        load = Load(made[0], made[1], cell.batch, warmup, cell.threads)
    rec = bench_form(
        cell.form,
        n=1,
        warmup=0,
        repeat=repeat,
        timeout_s=timeout_s,
        manifest=manifest,
        ws=ws,
        cancel=cancel,
        say=say,
        feed=load,
    )
    if rec.batch is None:
        rec.batch = example_batch(ws.inputs_path)
    return rec


@dataclass(frozen=True)
class ServeEvent:
    """What a serving run is doing, for the app's Serve screen and the CLI: `build` (a
    dynamic-batch export is being built first), `start` (a cell is in flight), `cell` (it ended:
    its record, stored), `done` (every cell ended, or the run was cancelled: the cell in flight is
    then not stored)."""

    kind: str  # "build" | "start" | "cell" | "done"
    done: int  # cells ended so far
    total: int
    cell: str = ""  # the cell's key (serve_store.key)
    record: RunRecord | None = None  # `cell`: what it measured
    cancelled: bool = False
    text: str = ""  # `build`: what is being built


def dynamic_steps(todo: Sequence[Cell], ws: Workspace) -> list[str]:
    """The on-demand export steps (the dynamic-batch exports) the cells' forms need, in plan
    order: what the app's serving run builds before it times anything."""
    from deploytui.builder import plan, steps_for
    from deploytui.spec.context import BuildContext

    ctx = BuildContext.of(ws)
    on_demand = {s.name for s in plan(ctx) if s.on_demand}
    return [s for s in steps_for(ctx, [c.form for c in todo]) or [] if s in on_demand]


def run_cells(
    todo: Sequence[Cell],
    *,
    repeat: int,
    warmup: int,
    timeout_s: float,
    manifest: Manifest,
    ws: Workspace,
    store: ServeStore,
    on_event: Callable[[ServeEvent], None] = lambda _e: None,
    cancel: threading.Event | None = None,
    say: Callable[[str], None] = lambda _line: None,
) -> list[tuple[str, RunRecord]]:
    """Every cell in turn, each stored in `store` as it ends (a cancelled one is not); returns
    the (key, record) of the cells that ended."""
    files: dict[int, tuple[Path, Path] | str] = {}
    done: list[tuple[str, RunRecord]] = []
    for cell in todo:
        if cancel is not None and cancel.is_set():
            break
        on_event(ServeEvent("start", len(done), len(todo), cell.key))
        rec = run_cell(
            cell,
            repeat=repeat,
            warmup=warmup,
            timeout_s=timeout_s,
            manifest=manifest,
            ws=ws,
            files=files,
            cancel=cancel,
            say=say,
        )
        if cancel is not None and cancel.is_set():
            break
        store.put(cell.key, rec)
        done.append((cell.key, rec))
        on_event(ServeEvent("cell", len(done), len(todo), cell.key, rec))
    stopped = cancel is not None and cancel.is_set()
    on_event(ServeEvent("done", len(done), len(todo), cancelled=stopped))
    return done
