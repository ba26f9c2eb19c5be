"""`deploytui build`: every artifact, or the steps `--only` names (incremental)."""

from __future__ import annotations

import argparse
import sys

from deploytui.views.cli.common import build_progress


def cmd_build(args: argparse.Namespace) -> int:
    if args.arch:
        return build_arch(args)
    from deploytui.builder import BuildEvent, run_build
    from deploytui.spec.context import BuildContext

    show, ran = build_progress(args.verbose), set[str]()

    def on_event(e: BuildEvent) -> None:
        if e.kind == "plan":  # the steps this build runs, named by the build itself
            ran.update(e.text.split())
        show(e)

    try:
        manifest = run_build(BuildContext.of(args.ws), only=args.only, on_event=on_event)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    # this build's steps only: an on-demand step a serving run left cancelled is not its failure
    failed = [n for n in manifest.failed_steps() if n in ran]
    from deploytui.spec.steps import SAMPLES_STEP

    if args.ws.data is not None and SAMPLES_STEP in failed and (rec := manifest.steps.get(SAMPLES_STEP)):
        print(f"error: --data {args.ws.data.text}: {rec.reason.rsplit('error: ', 1)[-1]}", file=sys.stderr)
    if failed:
        print(f"build: {len(failed)} step(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def build_arch(args: argparse.Namespace) -> int:
    """`build --arch aarch64`: each form for that architecture from the native build (a line per
    form: built, or the stage and why not)."""
    from deploytui.scenarios.isolated import arch_state, cross

    try:
        arch = cross.arch_of(args.arch)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    results = cross.build(args.ws, arch, say=lambda line: print(f"  {line}", file=sys.stderr, flush=True))
    arch_state.write_build(args.ws, arch, results)  # the app shows each form's line beside its native state
    for key, why in results.items():
        print(f"{'✓' if not why else '✗'} {key} ({arch}){': ' + why if why else ''}")
    return 0 if all(not why for why in results.values()) else 1
