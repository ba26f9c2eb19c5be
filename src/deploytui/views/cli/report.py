"""`deploytui report`: the report written from the stored results (`--results DIR`: docs/results)."""

from __future__ import annotations

import argparse
import sys


def cmd_report(args: argparse.Namespace) -> int:
    from deploytui.scenarios.startup import results
    from deploytui.ship import store as ship_store
    from deploytui.spec.manifest import load as load_manifest
    from deploytui.views.report import write_report

    if args.results is not None:
        from deploytui.views.report import write_results

        written = write_results(args.results, args.ws)
        for path in written:
            print(f"wrote {path}")
        if not written:
            print("error: no results yet: run `deploytui bench` first", file=sys.stderr)
        return 0 if written else 1
    ws = args.ws
    store = results.load(ws.results_path)
    for msg in [*store.dropped, *ship_store.load(ws.ship_path).dropped]:
        print(f"warning: {msg}", file=sys.stderr)
    if not store.forms:
        print("error: no results yet: run `deploytui bench` (or r / a in the app) first", file=sys.stderr)
        return 1
    path = write_report(ws, store, load_manifest(ws), args.format, args.output)
    print(f"wrote {path}")
    return 0
