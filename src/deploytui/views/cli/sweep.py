"""`deploytui sweep`: every form built and measured across the mlp sizes, then the fit and chart."""

from __future__ import annotations

import argparse
import sys

from deploytui.views.cli.common import check_counts


def cmd_sweep(args: argparse.Namespace) -> int:
    """Build and measure every form across the mlp sizes (scenarios.sweep), then print the fit."""
    from deploytui.core import defaults
    from deploytui.core.units import human
    from deploytui.families import registry
    from deploytui.scenarios.sweep import store as sweep_store
    from deploytui.scenarios.sweep import sweep

    try:
        refs = (
            sweep.parse_sizes(args.sizes)
            if args.sizes
            else [sweep.shape_for(t) for t in sweep.default_targets()]
        )
        chosen = [registry.get(k) for k in args.forms.split(",")] if args.forms else list(registry.FORMS)
    except (ValueError, KeyError) as e:
        print(f"error: {e.args[0] if isinstance(e, KeyError) else e}", file=sys.stderr)
        return 2
    if err := check_counts(args):
        print(f"error: {err}", file=sys.stderr)
        return 2
    store = sweep_store.load(args.ws.sweep_path)
    for msg in store.dropped:
        print(f"warning: {msg}", file=sys.stderr)
    out = sys.stderr if args.json else sys.stdout  # progress; --json prints only the JSON on stdout
    if not args.show:
        print(
            f"sweep: {len(refs)} sizes x {len(chosen)} forms, n={args.n} runs per form after {args.warmup} "
            f"warm-up (fewer where {args.n} runs would pass {defaults.SWEEP_RUN_BUDGET_S:.0f} s); "
            f"build steps killed past {human(args.memory_limit_gib * (1 << 30))} "
            f"or {args.build_timeout:.0f} s",
            flush=True,
            file=out,
        )

        def show(e: sweep.SweepEvent) -> None:
            head = f"[{e.index}/{e.total} {e.elapsed_s:6.0f} s]"
            if e.kind in ("point", "skip"):
                print(f"{head} {e.model} (~{e.params:,} params) {e.text}".rstrip(), flush=True, file=out)
            elif e.kind == "step":
                print(f"{head}   build {e.what}: {e.text}", flush=True, file=out)
            elif e.kind == "record":
                print(f"{head}   {e.what:<20} {e.text}", flush=True, file=out)
            elif e.kind == "form" and e.text:
                print(f"{head}   {e.what:<20} ({e.text})", flush=True, file=out)
            elif e.kind == "done":
                print(
                    f"sweep: {e.done} of {e.total} sizes measured in {e.elapsed_s:.0f} s",
                    flush=True,
                    file=out,
                )

        store = sweep.run_sweep(
            refs,
            chosen,
            base=args.ws,
            runs=args.n,
            warmup=args.warmup,
            repeat=args.repeat,
            timeout_s=args.timeout,
            build_timeout_s=args.build_timeout,
            memory_limit=int(args.memory_limit_gib * (1 << 30)),
            force=args.force,
            on_event=show,
            store=store,
        )
    wanted = {r.text for r in refs}
    points = [p for p in store.ordered() if p.model in wanted] if args.sizes else store.ordered()
    if not points:
        print("error: no sweep points yet: run `deploytui sweep`", file=sys.stderr)
        return 1
    keys = [f.key for f in chosen]
    if args.json:
        import dataclasses
        import json

        from deploytui.scenarios.sweep import fit

        fits = [dataclasses.asdict(f) for f in fit.fit_all(points, keys)]
        print(json.dumps({"points": [p.to_json() for p in points], "fit": fits}, indent=1))
        return 0
    from deploytui.scenarios.sweep import text as scale_text

    print(scale_text.render(points, keys))
    return 0
