"""`deploytui measure -- CMD ARG...`: any command measured the way `bench` measures a form."""

from __future__ import annotations

import argparse
import sys

from deploytui.views.cli.common import check_counts
from deploytui.views.cli.table import table_line


def cmd_measure(args: argparse.Namespace) -> int:
    import json
    import os

    from deploytui.core.measure import MeasureError, measure
    from deploytui.core.record import RunRecord, RunStatus

    if err := check_counts(args):
        print(f"error: {err}", file=sys.stderr)
        return 2
    command = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not command:
        print("error: give a command after --", file=sys.stderr)
        return 2
    try:
        m = measure(command, n=args.n, warmup=args.warmup, timeout_s=args.timeout)
    except MeasureError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    s = m.summary()
    last = (m.runs or m.warmup)[-1] if (m.runs or m.warmup) else None
    rec = RunRecord(
        None,
        s["argv"],
        os.getcwd(),
        status=RunStatus(s["status"]),
        error=s["error"],
        wall_s=s["wall_s"],
        peak_rss_bytes=s["peak_rss_bytes"],
        exit_codes=s["exit_codes"],
        n=args.n,
        warmup=args.warmup,
        stderr_tail=last.stderr_tail if last else [],
    )
    if args.json:
        print(json.dumps(rec.to_json(), indent=1))
    else:
        print(table_line(rec, label=" ".join(command)[:20]))
    return 0 if m.ok else 1
