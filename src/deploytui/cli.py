"""Command line: build, bench, measure, inspect, report; bare `deploytui` opens the app."""

from __future__ import annotations

import argparse
import sys


def cmd_build(args: argparse.Namespace) -> int:
    from deploytui.build import BuildEvent, run_build

    def show(e: BuildEvent) -> None:
        if e.kind == "start":
            print(f"[{e.index}/{e.total}] {e.step}: {e.title}", flush=True)
        elif e.kind == "line" and args.verbose:
            print(f"    {e.text}", flush=True)
        elif e.kind == "line":
            print(f"    {e.text[:150]}", flush=True) if _is_progress(e.text) else None
        elif e.kind == "end":
            extra = f" — {e.text}" if e.text else ""
            print(f"    {e.status} ({e.wall_s:.1f} s){extra}", flush=True)

    try:
        manifest = run_build(only=args.only, on_event=show)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    statuses = {n: r.get("status") for n, r in manifest["steps"].items()}
    failed = [n for n, s in statuses.items() if s == "failed" and (not args.only or n in args.only)]
    if failed:
        print(f"build: {len(failed)} step(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def _is_progress(line: str) -> bool:
    """Lines worth showing without --verbose: cargo's progress and warnings."""
    s = line.strip()
    return s.startswith(("Compiling", "Finished", "warning:", "error", "[torch.onnx]", "Building"))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="deploytui", description=__doc__)
    sub = p.add_subparsers(dest="command")

    b = sub.add_parser("build", help="build every artifact (incremental)")
    b.add_argument("--only", action="append", metavar="STEP", help="run only this step (repeatable)")
    b.add_argument("-v", "--verbose", action="store_true", help="show every line the steps print")
    b.set_defaults(func=cmd_build)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        print("app not yet available", file=sys.stderr)
        return 0
    return args.func(args)
