"""`deploytui bench --batch B1,B2 --threads T1,T2`: the serving cells of every chosen form, run
(or, with --show, read back from serve.json), printed as a table or as JSON."""

from __future__ import annotations

import argparse
import json
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from deploytui.core.record import RunRecord, RunStatus
from deploytui.views.cli.common import build_progress

if TYPE_CHECKING:
    from deploytui.core.workspace import Workspace
    from deploytui.launchers.targets import Target
    from deploytui.scenarios.serving.serve import Cell, ServeEvent


def cell_line(cell: str, rec: RunRecord) -> str:
    """One cell as the table prints it: the percentiles and throughput, or the ✗ and why."""
    from deploytui.scenarios.serving import text as serve_text

    r = serve_text.row(cell, rec)
    if not serve_text.ok(rec):
        return f"  {cell:<34} {r[-1]}"
    verdict = "" if r[9] == "ok" else f"  {r[9]}"
    return (
        f"  {cell:<34} p50 {r[3]:>7} p90 {r[4]:>7} p99 {r[5]:>7} {r[6]:>10} items/s"
        f"  threads {r[7]} busy {r[8]}{verdict}"
    )


def cell_json(cell: str, rec: RunRecord) -> dict[str, Any]:
    from deploytui.scenarios.serving import store as serve_store

    return {"cell": cell, "items_per_s": serve_store.items_per_s(rec), **rec.to_json()}


def _sizes(text: str | None, what: str, least: int) -> list[int]:
    """`1,8,32` as whole numbers >= least (ValueError naming `what` otherwise)."""
    if not text:
        return []
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        values = []
    if not values or any(v < least for v in values):
        raise ValueError(f"{what} wants whole numbers >= {least} separated by commas, got {text!r}")
    return list(dict.fromkeys(values))


def build_cells(todo: list[Any], ws: Workspace, *, shipped: bool = False) -> None:
    """What the cells need (their dynamic-batch exports among it; with `shipped`, what their
    bundles need: a target's cells), built here first; its progress on stderr."""
    from deploytui.builder import run_build, steps_for
    from deploytui.spec.context import BuildContext

    ctx = BuildContext.of(ws)
    only = steps_for(ctx, [c.form for c in todo], shipped=shipped)
    run_build(ctx, only=only, on_event=build_progress(False, quiet_up_to_date=True, out=sys.stderr))


def cmd_serve(args: argparse.Namespace) -> int:
    from deploytui.core import defaults, machine
    from deploytui.families import registry
    from deploytui.scenarios.serving import serve
    from deploytui.scenarios.serving import store as serve_store
    from deploytui.spec.manifest import load as load_manifest

    try:
        batches = _sizes(args.batch, "--batch", 1)
        threads = _sizes(args.threads, "--threads", 1) or [1]
        chosen = [registry.get(k) for k in args.forms] if args.forms else list(registry.FORMS)
    except (ValueError, KeyError) as e:
        print(f"error: {e.args[0] if isinstance(e, KeyError) else e}", file=sys.stderr)
        return 2
    repeat = defaults.SERVE_REPEAT if args.repeat is None else args.repeat
    warmup = defaults.SERVE_WARMUP if args.forward_warmup is None else args.forward_warmup
    if repeat < 1 or warmup < 0 or args.timeout <= 0:
        print("error: need --repeat >= 1, --forward-warmup >= 0, --timeout > 0", file=sys.stderr)
        return 2
    ws = args.ws
    ref = ws.model
    todo = serve.cells(chosen, batches, threads)
    if args.target and not args.show:
        return _serve_on_targets(args, todo, ws, repeat=repeat, warmup=warmup)
    if args.target and "," in args.target:
        print("error: --show reads the cells of one target at a time", file=sys.stderr)
        return 2
    store = serve_store.load(ws, args.target or None)
    for msg in store.dropped:
        print(f"warning: {msg}", file=sys.stderr)
    out = sys.stderr if args.json else sys.stdout
    done: list[tuple[str, RunRecord]] = []
    if args.show:
        done = [(c.key, store.forms[c.key]) for c in todo if c.key in store.forms]
        if not done:
            print(
                f"no serving cells stored for {ref.text} at these sizes: run it without --show",
                file=sys.stderr,
            )
    else:
        if not args.no_build:
            build_cells(todo, ws)
        manifest = load_manifest(ws)
        print(
            f"serve: {len(todo)} cells ({len(chosen)} forms x batch {batches or ['example']} x threads "
            f"{threads}), each one fresh run: {warmup} warm-up then {repeat} timed forwards",
            file=out,
            flush=True,
        )

        def show(e: serve.ServeEvent) -> None:
            if e.kind == "cell" and e.record is not None:
                print(cell_line(e.cell, e.record), file=out, flush=True)

        done = serve.run_cells(
            todo,
            repeat=repeat,
            warmup=warmup,
            timeout_s=args.timeout,
            manifest=manifest,
            ws=ws,
            store=store,
            on_event=show,
            say=lambda line: print(line, file=sys.stderr, flush=True),
        )
    if args.json:
        print(
            json.dumps(
                {
                    "machine": machine.info(),
                    "model": ref.text,
                    "batches": batches,
                    "threads": threads,
                    "cells": [cell_json(k, r) for k, r in done],
                },
                indent=1,
            )
        )
    elif args.show:
        for k, r in done:
            print(cell_line(k, r))
    failed = [r for _, r in done if r.status not in (RunStatus.OK, RunStatus.NOT_APPLICABLE)]
    return 1 if failed or not done else 0


def _serve_on_targets(
    args: argparse.Namespace, todo: list[Any], ws: Workspace, *, repeat: int, warmup: int
) -> int:
    """`bench --target a,b --batch … --threads …`: what the cells need built here, then the
    cells on each target at once (views/cli/target.py)."""
    from deploytui.views.cli.target import resolve

    found, why = resolve(args.target, ws)
    if why:
        print(f"error: {why}", file=sys.stderr)
        return 2
    if not args.no_build:
        build_cells(todo, ws, shipped=True)
    out = sys.stderr if args.json else sys.stdout
    print(
        f"serve on {', '.join(t.name for t in found)}: {len(todo)} cells each, one fresh run a cell: "
        f"{warmup} warm-up then {repeat} timed forwards",
        file=out,
        flush=True,
    )
    per_target = serve_on_targets(args, found, todo, ws, repeat=repeat, warmup=warmup)
    if args.json:
        facts = {t.name: t.facts for t in found}
        doc = {
            "model": ws.model.text,
            "targets": [
                {"target": name, "machine": facts[name], "cells": [cell_json(k, r) for k, r in done]}
                for name, done in per_target
            ],
        }
        print(json.dumps(doc, indent=1))
    records = [r for _, done in per_target for _, r in done]
    failed = [r for r in records if r.status not in (RunStatus.OK, RunStatus.NOT_APPLICABLE)]
    return 1 if failed or not records else 0


def serve_on_targets(
    args: argparse.Namespace,
    found: list[Target],
    todo: list[Cell],
    ws: Workspace,
    *,
    repeat: int,
    warmup: int,
) -> list[tuple[str, list[tuple[str, RunRecord]]]]:
    """The serving cells on each target at once (a thread per target, its cells in turn), each
    cell printed as it ends; (target, its (cell, record) list) per target."""
    from deploytui.scenarios.remote import serve as remote
    from deploytui.scenarios.serving import store as serve_store
    from deploytui.spec.manifest import load as load_manifest
    from deploytui.views.cli.target import each_target

    manifest = load_manifest(ws)
    done: dict[str, list[tuple[str, RunRecord]]] = {t.name: [] for t in found}

    def serve_on(target: Target, say: Callable[[str], None], cancel: threading.Event) -> None:
        store = serve_store.load(ws, target.name)
        for msg in store.dropped:
            say(f"warning: {msg}")

        def show(e: ServeEvent) -> None:
            if e.kind == "start":
                say(f"{e.cell} ({e.done + 1}/{e.total})")
            if e.kind == "cell" and e.record is not None and not args.json:
                print(f"[{target.label}] {cell_line(e.cell, e.record).strip()}", flush=True)

        done[target.name] = remote.run_cells_on(
            todo,
            target,
            ws,
            repeat=repeat,
            warmup=warmup,
            timeout_s=args.timeout,
            manifest=manifest,
            store=store,
            on_event=show,
            say=say,
            cancel=cancel,
        )

    each_target(found, serve_on)
    return [(t.name, done[t.name]) for t in found]
