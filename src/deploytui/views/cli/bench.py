"""`deploytui bench`: the start-up of the chosen forms, measured and stored, printed as a table or
as JSON (`--batch`/`--threads` hand over to serve.py)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from deploytui.views.cli.common import build_progress, check_counts, failing
from deploytui.views.cli.table import name_width, table_line

if TYPE_CHECKING:
    from deploytui.core.record import RunRecord
    from deploytui.core.workspace import Workspace


def cmd_bench(args: argparse.Namespace) -> int:
    import json

    from deploytui.core import defaults, machine
    from deploytui.core.record import RunStatus
    from deploytui.families import registry
    from deploytui.scenarios.accuracy import variants
    from deploytui.scenarios.startup import bench, results
    from deploytui.spec.manifest import load as load_manifest
    from deploytui.spec.manifest import model_info, nonfinite_outputs

    if args.batch or args.threads:
        from deploytui.views.cli.serve import cmd_serve

        return cmd_serve(args)
    if args.repeat is None:
        args.repeat = defaults.REPEAT
    if args.repeat < 0:
        print("error: need --repeat >= 0", file=sys.stderr)
        return 2
    if err := check_counts(args):
        print(f"error: {err}", file=sys.stderr)
        return 2
    try:
        chosen = [registry.get(k) for k in args.forms] if args.forms else list(registry.FORMS)
    except KeyError as e:
        print(f"error: {e.args[0]}", file=sys.stderr)
        return 2
    ws = args.ws
    if not args.no_build:  # what the chosen forms need, built first (incremental: usually nothing)
        from deploytui.builder import run_build, steps_for
        from deploytui.spec.context import BuildContext
        from deploytui.spec.steps import SAMPLES_STEP

        ctx = BuildContext.of(ws)
        progress = build_progress(False, quiet_up_to_date=True, out=sys.stderr if args.json else None)
        needed = steps_for(ctx, chosen, shipped=bool(args.target))  # a target gets bundles
        if ws.data is not None and needed is not None and SAMPLES_STEP not in needed:  # judged on it
            needed = [*needed, SAMPLES_STEP]
        manifest = run_build(ctx, only=needed, on_event=progress)
        if ws.data is not None and SAMPLES_STEP in manifest.failed_steps():
            step = manifest.steps.get(SAMPLES_STEP)
            why = step.reason.rsplit("error: ", 1)[-1] if step else "the samples step failed"
            print(f"error: --data {ws.data.text}: {why}", file=sys.stderr)
            return 2
    if args.target:
        from deploytui.views.cli.target import bench_on_targets

        return bench_on_targets(args, chosen, ws)
    store = results.load(ws.results_path)
    for msg in store.dropped:
        print(f"warning: {msg}", file=sys.stderr)
    if odd := nonfinite_outputs(model_info(ws.model_dir)):  # what every form is judged against
        print(f"warning: eager gives NaN or inf on the example input: {odd}", file=sys.stderr)
    manifest = load_manifest(ws)
    records = []
    for form in chosen:
        if not args.json and sys.stderr.isatty():
            print(f"{form.key} …", end="\r", file=sys.stderr, flush=True)
        rec = bench.bench_form(
            form,
            n=args.n,
            warmup=args.warmup,
            repeat=args.repeat,
            timeout_s=args.timeout,
            manifest=manifest,
            ws=ws,
            say=lambda line: print(line, file=sys.stderr, flush=True),
            feed=bench.Load(warmup=args.forward_warmup) if args.forward_warmup else None,
        )
        if rec.status != RunStatus.UNAVAILABLE or form.key not in store.forms:  # keep an earlier one
            store.put(rec)
        records.append(rec)
        if not args.json:
            print(table_line(rec), flush=True)
            if form.variant:
                ratios = variants.ratios_text(_vs_parent(rec, store, ws), form.parent)
                print(f"{'':<{name_width()}} {ratios}", flush=True)
    if args.json:
        print(
            json.dumps(
                {
                    "machine": machine.info(),
                    "tools": manifest.tools,
                    "model": ws.model.text,
                    "forms": [
                        {**r.to_json(), **({"vs_parent": _vs_parent(r, store, ws)} if r.accuracy else {})}
                        for r in records
                    ],
                },
                indent=1,
            )
        )
    return 1 if failing(records) else 0


def _vs_parent(rec: RunRecord, store: Any, ws: Workspace) -> dict[str, float | None]:
    """A variant's ratios to its fp32 parent's stored record (`variants.ratios`)."""
    from deploytui.families import registry
    from deploytui.scenarios.accuracy import variants
    from deploytui.views import report

    parent = registry.get(rec.form or "").parent
    return variants.ratios(
        rec, parent, store.forms.get(parent), lambda key: report.ship_bytes(registry.get(key), ws)
    )
