"""Serving cells on an SSH target (`deploytui bench --target NAME --batch … --threads …`): each
cell one fresh run of the form's bundle there (the dynamic-batch one at a batch size, placed
beside the fixed one), `./run OUT K INPUTS --warmup W --threads T` with the batch's inputs sent
once per content; the outputs come back and are judged here against eager's at that batch, as
a local cell is (serving.serve). The cells go to the model's targets/<name>/serve.json."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from deploytui.core import tensorfile
from deploytui.core.record import RunRecord
from deploytui.core.record_parts import Where
from deploytui.core.workspace import Workspace
from deploytui.launchers.ssh import TargetError
from deploytui.launchers.targets import Target
from deploytui.scenarios.remote.bench import fetch
from deploytui.scenarios.remote.bundles import Placed, arch_problem, place, send_inputs
from deploytui.scenarios.serving.serve import Cell, ServeEvent, batch_files, example_batch
from deploytui.scenarios.serving.store import ServeStore
from deploytui.scenarios.startup import bench
from deploytui.ship.bundler import ShipError
from deploytui.spec.manifest import Manifest, availability


def run_cell_on(
    cell: Cell,
    target: Target,
    ws: Workspace,
    *,
    repeat: int,
    warmup: int,
    timeout_s: float,
    manifest: Manifest,
    placed: dict[str, Placed | str],
    cancel: threading.Event | None = None,
    say: Callable[[str], None] = lambda _line: None,
) -> RunRecord:
    """One fresh run of the cell's form on the target. `placed`: the bundles placed there so
    far (or why one could not be), by form and batch-ness, filled here."""
    form = cell.form
    spot = f"{form.key}{'' if cell.batch is None else '-batch'}"
    if spot not in placed:
        why = availability(form, ws, manifest) or arch_problem(target)
        if not why:
            try:
                placed[spot] = place(form, target, ws, say, cancel)
            except (TargetError, ShipError, OSError) as e:
                why = str(e)
        if why:
            placed[spot] = why
    where = placed[spot]
    if isinstance(where, str):
        rec = bench.not_run(form, where, manifest, ws)
        rec.batch = cell.batch
        return rec
    argv = ["./run", f"{where.folder}.serve.safetensors", str(repeat)]
    reference = None
    if cell.batch is not None:
        try:
            inputs, reference = batch_files(ws, cell.batch)
            argv.append(send_inputs(where, target, [inputs])[0])
        except (OSError, tensorfile.TensorFileError, TargetError) as e:
            return RunRecord(
                form.key, model=ws.model.text, error=f"batch-{cell.batch} inputs: {e}", batch=cell.batch
            )
    argv += ["--warmup", str(warmup), "--threads", str(cell.threads)]
    m = where.launcher.measure(argv, n=1, warmup=0, timeout_s=timeout_s, cancel=cancel)
    local: Path = ws.target_dir(target.name) / "serve" / f"{cell.key}.safetensors"
    local.unlink(missing_ok=True)
    if m.runs and m.runs[-1].ok and (problem := fetch(target, argv[1], local)):
        say(f"{cell.key}: its outputs could not be fetched: {problem}")
    rec = bench.evaluate(form, m, ws, n=1, warmup=0, outputs=local, reference=reference)
    rec.cwd = m.cwd
    rec.batch = cell.batch if cell.batch is not None else example_batch(ws.inputs_path)
    return rec


def run_cells_on(
    todo: Sequence[Cell],
    target: Target,
    ws: Workspace,
    *,
    repeat: int,
    warmup: int,
    timeout_s: float,
    manifest: Manifest,
    store: ServeStore,
    on_event: Callable[[ServeEvent], None] = lambda _e: None,
    cancel: threading.Event | None = None,
    say: Callable[[str], None] = lambda _line: None,
) -> list[tuple[str, RunRecord]]:
    """Every cell in turn on the target, each stored in `store` (the target's serve.json) as it
    ends; returns the (key, record) of the cells that ended."""
    placed: dict[str, Placed | str] = {}
    done: list[tuple[str, RunRecord]] = []
    for cell in todo:
        if cancel is not None and cancel.is_set():
            break
        on_event(ServeEvent("start", len(done), len(todo), cell.key))
        rec = run_cell_on(
            cell,
            target,
            ws,
            repeat=repeat,
            warmup=warmup,
            timeout_s=timeout_s,
            manifest=manifest,
            placed=placed,
            cancel=cancel,
            say=say,
        )
        if cancel is not None and cancel.is_set():
            break
        rec.target = Where.of(target.name, target.facts)
        store.put(cell.key, rec)
        done.append((cell.key, rec))
        on_event(ServeEvent("cell", len(done), len(todo), cell.key, rec))
    on_event(ServeEvent("done", len(done), len(todo), cancelled=cancel is not None and cancel.is_set()))
    return done
