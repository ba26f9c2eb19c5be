"""Command line: build, bench, measure, inspect, ship, choose, report, models, sweep; bare `deploytui`
opens the app.

`--model REF` (default a1) names the model on every subcommand and on the bare `deploytui`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from deploytui.views.cli import target
from deploytui.views.cli.bench import cmd_bench
from deploytui.views.cli.build import cmd_build
from deploytui.views.cli.choose import choose_parser
from deploytui.views.cli.common import MODEL_HELP, CommandParser, data_opt, model_opts, place_opts, shape_opts
from deploytui.views.cli.inspect_form import cmd_inspect
from deploytui.views.cli.measure import cmd_measure
from deploytui.views.cli.models import cmd_models
from deploytui.views.cli.report import cmd_report
from deploytui.views.cli.ship import cmd_ship
from deploytui.views.cli.sweep import cmd_sweep

if TYPE_CHECKING:
    from deploytui.core.modelref import ModelRef


def check_model(
    text: str | None, input_shape: str | None = None, seq_len: int | None = None
) -> tuple[ModelRef | None, str]:
    """The model `--model` names, and "" when it loads; else None and the one clear message why
    not (parsed here, loaded in a subprocess: a model that does not import, a factory that raises
    or returns the wrong thing, an input of an unsupported dtype, a library model that would need
    the network), before anything is built."""
    from deploytui.core.modelref import ModelRefError, parse, with_options
    from deploytui.models.check import check

    try:
        ref = with_options(parse(text), input_shape, seq_len)
    except ModelRefError as e:
        return None, str(e)
    if ref.kind == "zoo" and not ref.params:
        return ref, ""  # the zoo's own factories, without parameters, are tested
    err = check(ref.text)[1]
    return (None, err) if err else (ref, "")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="deploytui", description=__doc__)
    p.add_argument("--model", default=None, metavar="REF", help=MODEL_HELP)
    data_opt(p, None)
    shape_opts(p, None)
    place_opts(p, None)
    sub = p.add_subparsers(dest="command", parser_class=CommandParser)

    b = sub.add_parser("build", help="build every artifact (incremental)")
    b.add_argument(
        "--only",
        action="append",
        metavar="STEP",
        help="run only this step (repeatable; an unknown name prints the known ones)",
    )
    b.add_argument("-v", "--verbose", action="store_true", help="show every line the steps print")
    b.add_argument(
        "--arch",
        metavar="ARCH",
        help="build for another architecture (aarch64) from the native build: its wheels, "
        "its cross-compiled programs",
    )
    model_opts(b)
    data_opt(b, argparse.SUPPRESS)
    b.set_defaults(func=cmd_build)

    from deploytui.core import defaults

    def counts(q: argparse.ArgumentParser, n: int) -> None:
        q.add_argument("-n", type=int, default=n, help=f"counted runs (default {n})")
        w, t = defaults.WARMUP, defaults.RUN_TIMEOUT_S
        q.add_argument("--warmup", type=int, default=w, help=f"runs before counting (default {w})")
        q.add_argument(
            "--timeout", type=float, default=t, help=f"seconds before a run is killed (default {t:g})"
        )
        q.add_argument("--json", action="store_true", help="print JSON (schema in README)")

    be = sub.add_parser(
        "bench", help="measure forms (all by default); exits 1 if one fails or misses tolerance"
    )
    be.add_argument("forms", nargs="*", metavar="FORM", help="form keys (see `deploytui inspect --help`)")
    counts(be, defaults.RUNS)
    be.add_argument(
        "--repeat",
        type=int,
        default=None,
        help=f"timed forwards per run after the first (default {defaults.REPEAT}; "
        f"{defaults.SERVE_REPEAT} with --batch/--threads)",
    )
    be.add_argument(
        "--batch",
        metavar="B1,B2",
        help="serving figures at these batch sizes (the example's first item repeated along dim 0, "
        "on each form's dynamic-batch export): p50/p90/p99 and items/s per cell, kept in serve.json",
    )
    be.add_argument(
        "--threads",
        metavar="T1,T2",
        help="serving figures at these thread counts (each runtime's own knob), default 1",
    )
    be.add_argument(
        "--forward-warmup",
        type=int,
        default=None,
        help=f"untimed forwards before the timed ones (default 0; {defaults.SERVE_WARMUP} "
        "with --batch/--threads)",
    )
    be.add_argument(
        "--show", action="store_true", help="with --batch/--threads: print the stored cells, run nothing"
    )
    be.add_argument(
        "--no-build",
        action="store_true",
        help="measure what is built as it is (default: build what the forms need first, incrementally)",
    )
    be.add_argument(
        "--target",
        metavar="NAME[,NAME]",
        help="measure on these targets (deploytui target add), each in turn, the targets at once",
    )
    model_opts(be)
    data_opt(be, argparse.SUPPRESS)
    be.set_defaults(func=cmd_bench)

    me = sub.add_parser("measure", help="measure any command the same way: deploytui measure -- CMD ARG...")
    counts(me, defaults.RUNS)
    me.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARG ...]")
    me.set_defaults(func=cmd_measure)

    from deploytui.families.registry import BY_KEY

    ins = sub.add_parser("inspect", help="what a form ships and what is inside its artifacts")
    ins.add_argument("form", choices=list(BY_KEY), metavar="FORM", help=", ".join(BY_KEY))
    ins.add_argument("--full", action="store_true", help="print long code sections whole")
    model_opts(ins)
    ins.set_defaults(func=cmd_inspect)

    sh = sub.add_parser("ship", help="a self-contained bundle of a form; --check runs it isolated (bwrap)")
    sh.add_argument("form", choices=list(BY_KEY), metavar="FORM", help=", ".join(BY_KEY))
    sh.add_argument("-o", "--output", type=Path, help="bundle folder (default bundles/MODEL/FORM)")
    sh.add_argument("--tar", action="store_true", help="also write FOLDER.tar.gz")
    sh.add_argument(
        "--check",
        action="store_true",
        help="run the bundle in a sandbox that sees only it and /usr (Python forms: builds its venv "
        "there from a local wheelhouse first: slow), compare with eager, store the verdict",
    )
    sh.add_argument(
        "--arch",
        metavar="ARCH",
        help="bundle for another architecture (aarch64); --check runs it in the emulated arm64 root",
    )
    counts(sh, defaults.SHIP_RUNS)
    model_opts(sh)
    sh.set_defaults(func=cmd_ship)

    choose_parser(sub)

    rep = sub.add_parser("report", help="write the report from the stored results")
    rep.add_argument(
        "-o", "--output", type=Path, help="file to write (default reports/deploytui-report-DATE.FMT)"
    )
    rep.add_argument("--format", choices=["md", "json", "csv"], default="md")
    rep.add_argument(
        "--results",
        type=Path,
        metavar="DIR",
        help="write the results of every model built here, their matrix and the sweep as Markdown "
        "files into DIR (docs/results)",
    )
    model_opts(rep)
    rep.set_defaults(func=cmd_report)

    sw = sub.add_parser(
        "sweep", help="build and measure every form across mlp sizes, fit and chart the costs"
    )
    sw.add_argument(
        "--sizes",
        metavar="SIZES",
        help="parameter counts (1e3,1e5) or mlp refs separated by ';' (default: 7 from 1e2 to 2e8)",
    )
    sw.add_argument("--forms", metavar="F1,F2", help="form keys, comma-separated (default: every form)")
    counts(sw, defaults.SWEEP_RUNS)
    sw.add_argument(
        "--repeat",
        type=int,
        default=defaults.REPEAT,
        help=f"steady-state forwards per run (default {defaults.REPEAT})",
    )
    sw.add_argument(
        "--build-timeout",
        type=float,
        default=defaults.BUILD_TIMEOUT_S,
        help=f"seconds before a build step is killed (default {defaults.BUILD_TIMEOUT_S:g})",
    )
    sw.add_argument(
        "--memory-limit-gib",
        type=float,
        default=defaults.BUILD_MEMORY_LIMIT / (1 << 30),
        help="a build step whose processes pass this many GiB is killed "
        f"(default {defaults.BUILD_MEMORY_LIMIT >> 30})",
    )
    sw.add_argument("--force", action="store_true", help="measure sizes already measured again")
    sw.add_argument("--show", action="store_true", help="print the stored points' fit and chart, run nothing")
    place_opts(sw, argparse.SUPPRESS)
    sw.set_defaults(func=cmd_sweep)

    mo = sub.add_parser("models", help="the zoo and the models built under artifacts/")
    mo.add_argument("--json", action="store_true", help="print JSON")
    place_opts(mo, argparse.SUPPRESS)
    mo.set_defaults(func=cmd_models)
    target.add_parser(sub)
    return p


NEEDS_MODEL = ("build", "bench", "inspect", "report", "ship", "choose", None)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from deploytui.core.workspace import Workspace

    ref = None
    if args.command in NEEDS_MODEL:
        ref, err = check_model(args.model, args.input_shape, args.seq_len)
        if err:
            print(f"error: {err}", file=sys.stderr)
            return 2
    data = None
    if getattr(args, "data", None):
        from deploytui.core.dataref import DataRefError
        from deploytui.core.dataref import parse as parse_data

        try:
            data = parse_data(args.data)
        except DataRefError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        if why := data.problem():
            print(f"error: --data: {why}", file=sys.stderr)
            return 2
    # the one place the process reads where its files go; everything below is handed `args.ws`
    args.ws = Workspace.from_env(ref, args.artifacts, args.bundles).with_data(data)
    if args.command is None and not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(
            "deploytui: the app needs a terminal; for headless use see "
            "`deploytui bench`, `deploytui report` and `deploytui --help`",
            file=sys.stderr,
        )
        return 2
    try:
        if args.command is None:
            from deploytui.views.tui import run_app

            code: int = run_app(args.ws).return_code or 0
            return code
        status: int = args.func(args)
        return status
    except BrokenPipeError:  # e.g. `deploytui inspect X | head`
        sys.stderr.close()
        return 0
    except OSError as e:  # a folder that cannot be made, a file that cannot be written: one line
        where = f": {e.filename}" if e.filename else ""
        who = f"deploytui {args.command}" if args.command else "deploytui"
        print(f"{who}: error: {e.strerror or e}{where}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # ctrl+c: the launcher has already killed the run in flight
        print("deploytui: interrupted", file=sys.stderr)
        return 130
