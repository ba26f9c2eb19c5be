"""Command line: build, bench, measure, inspect, report, models; bare `deploytui` opens the app.

`--model REF` (default a1) names the model on every subcommand and on the bare `deploytui`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from deploytui.record import RunRecord


def cmd_build(args: argparse.Namespace) -> int:
    from deploytui.builder import BuildEvent, run_build

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
    """Lines worth showing without --verbose: why a step runs, cargo's progress and warnings."""
    s = line.strip()
    return s.startswith(("stale:", "Compiling", "Finished", "warning:", "error", "[torch.onnx]", "Building"))


def _table_line(rec: RunRecord, label: str | None = None) -> str:
    """One record as `bench` and `measure` print it; `label` in place of the form key."""
    from deploytui.units import human, ms

    name = label if label is not None else rec.form
    wall, rss = rec.wall_s, rec.peak_rss_bytes
    if rec.status in ("unavailable", "not-applicable") or not wall:
        line = f"{name:<20} {_problem(rec)}"
        if rec.stage:
            line += f"\n{'':<20} stage {rec.stage} failed" + (f"; full log: {rec.log}" if rec.log else "")
        return line
    ws = sorted(wall)
    med = ws[len(ws) // 2] if len(ws) % 2 else (ws[len(ws) // 2 - 1] + ws[len(ws) // 2]) / 2
    rs = sorted(rss)
    line = (
        f"{name:<20} n={len(wall):<3} min={ms(ws[0], 9)} median={ms(med, 9)} "
        f"max={ms(ws[-1], 9)}  rss={human(rs[len(rs) // 2]):>10}"
    )
    if rec.max_abs_diff is not None:
        line += f"  max|diff|={rec.max_abs_diff:.3g} {'OK' if rec.within_tol else 'FAIL'}"
    if rec.stages_ms:
        st = rec.stages_ms

        def stage(key: str) -> str:
            v = st.get(key)
            return f"{v:.3g} ms" if isinstance(v, (int, float)) else "–"

        line += f"\n{'':<20} " + (f"import {stage('import')}  " if "import" in st else "")
        line += f"load {stage('load')}  forward#1 {stage('first_forward')}  steady {stage('steady_forward')}"
        if rec.modules_added_total is not None:
            line += f"  load added {rec.modules_added_total} modules"
        top = list((rec.modules_added or {}).items())[:4]
        if top:
            line += ": " + ", ".join(f"{k} {v}" for k, v in top)
        sub = list((rec.modules_added_torch or {}).items())[:3]
        if sub:
            line += " (" + ", ".join(f"{k} {v}" for k, v in sub) + ")"
    for d in rec.outputs or []:
        if len(rec.outputs or []) > 1 or not d.within_tol:
            line += f"\n{'':<20} {d.line()}"
    if rec.error:
        line += f"\n{'':<20} {_problem(rec)}"
        if rec.stage:
            line += f"\n{'':<20} stage {rec.stage} failed" + (f"; full log: {rec.log}" if rec.log else "")
    return line


def _problem(rec: RunRecord) -> str:
    """`failed: exit 1: …`, `unavailable: step …`, or `FAIL: output_0 differs …` for a run that is
    ok but beyond tolerance; the status is not repeated when the reason starts with it."""
    if rec.status == "not-applicable":
        return rec.error or "not applicable"
    label = rec.status if rec.status != "ok" else "FAIL"
    error = rec.error or ""
    return error if error.startswith(label + ":") else f"{label}: {error}"


def _check_counts(args: argparse.Namespace) -> str:
    if args.n < 1 or args.warmup < 0 or args.timeout <= 0:
        return "need -n >= 1, --warmup >= 0, --timeout > 0"
    return ""


def cmd_bench(args: argparse.Namespace) -> int:
    import json

    from deploytui import bench, forms, machine, paths, results
    from deploytui.manifest import load as load_manifest

    if args.repeat < 0:
        print("error: need --repeat >= 0", file=sys.stderr)
        return 2
    if err := _check_counts(args):
        print(f"error: {err}", file=sys.stderr)
        return 2
    try:
        chosen = [forms.get(k) for k in args.forms] if args.forms else list(forms.FORMS)
    except KeyError as e:
        print(f"error: {e.args[0]}", file=sys.stderr)
        return 2
    store = results.load()
    for msg in store.dropped:
        print(f"warning: {msg}", file=sys.stderr)
    manifest = load_manifest()
    records = []
    for form in chosen:
        if not args.json and sys.stderr.isatty():
            print(f"{form.key} …", end="\r", file=sys.stderr, flush=True)
        rec = bench.bench_form(
            form, n=args.n, warmup=args.warmup, repeat=args.repeat, timeout_s=args.timeout, manifest=manifest
        )
        if rec.status != "unavailable" or form.key not in store.forms:  # keep an earlier measurement
            store.put(rec)
        records.append(rec)
        if not args.json:
            print(_table_line(rec), flush=True)
    if args.json:
        print(
            json.dumps(
                {
                    "machine": machine.info(),
                    "tools": manifest.get("tools", {}),
                    "model": paths.model().text,
                    "forms": [r.to_json() for r in records],
                },
                indent=1,
            )
        )
    bad = [r for r in records if r.status not in ("ok", "not-applicable") or r.within_tol is False]
    return 1 if bad else 0


def cmd_measure(args: argparse.Namespace) -> int:
    import json
    import os

    from deploytui.measure import MeasureError, measure
    from deploytui.record import RunRecord

    if err := _check_counts(args):
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
        status=s["status"],
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
        print(_table_line(rec, label=" ".join(command)[:20]))
    return 0 if m.ok else 1


def cmd_inspect(args: argparse.Namespace) -> int:
    from deploytui import forms
    from deploytui.inspectors import form_view
    from deploytui.manifest import load as load_manifest

    try:
        form = forms.get(args.form)
    except KeyError as e:
        print(f"error: {e.args[0]}", file=sys.stderr)
        return 2
    manifest = load_manifest()
    print(f"{form.key}: {form.title} ({form.family})")
    if form.note:
        print(f"  {form.note}")
    errors = 0
    for sec in form_view.sections(form, manifest):
        print(f"\n== {sec.tab}: {sec.title}")
        if sec.error:
            errors += 1
            print(f"  ! {sec.error}")
        elif sec.kind in ("table", "tree"):
            widths = [
                max([len(c)] + [len(r[i]) for r in sec.rows if i < len(r)]) for i, c in enumerate(sec.columns)
            ]
            widths[-1] = 0
            print("  " + "  ".join(c.ljust(w) for c, w in zip(sec.columns, widths, strict=False)))
            for r in sec.rows:
                print("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)))
        else:
            text = (
                sec.text if args.full or len(sec.text) < 6000 else sec.text[:6000] + "\n… (--full shows all)"
            )
            print("\n".join("  " + ln for ln in text.splitlines()))
    return 1 if errors else 0


def cmd_report(args: argparse.Namespace) -> int:
    from deploytui import results
    from deploytui.manifest import load as load_manifest
    from deploytui.report import write_report

    store = results.load()
    for msg in store.dropped:
        print(f"warning: {msg}", file=sys.stderr)
    if not store.forms:
        print("error: no results yet: run `deploytui bench` (or r / a in the app) first", file=sys.stderr)
        return 1
    path = write_report(store, load_manifest(), args.format, args.output)
    print(f"wrote {path}")
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    """The zoo and every model already built under artifacts/, with parameter count and inputs
    (described by `deploytui.models.describe` in a subprocess: this process never imports torch)."""
    import json

    from deploytui import manifest
    from deploytui.models import ZOO
    from deploytui.models.check import describe

    built = manifest.built_models()
    lines, err = describe([*ZOO, *(m for m in built if m not in ZOO)])
    if err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps([{**d, "built": d.get("model") in built} for d in lines], indent=1))
        return 0
    for d in lines:
        name = d.get("model", "?")
        mark = f"built (artifacts/{built[name]})" if name in built else ""
        if "error" in d:
            print(f"{name:<24} error: {d['error']}")
            continue
        ins = ", ".join(f"{i.get('dtype')}{i.get('shape')}" for i in d.get("inputs", []))
        print(f"{name:<24} {d.get('params', 0):>10,} params  inputs {ins:<28} {mark}".rstrip())
        if name in ZOO:
            print(f"{'':<24} {ZOO[name]}")
    return 1 if any("error" in d for d in lines) else 0


def check_model(text: str | None) -> str:
    """Set the current model; "" when it loads, else the one clear message why not (parsed here,
    loaded in a subprocess: a model that does not import, a factory that raises or returns the
    wrong thing, an input of an unsupported dtype), before anything is built."""
    from deploytui import paths
    from deploytui.models import ModelRefError, parse
    from deploytui.models.check import check

    try:
        ref = parse(text)
    except ModelRefError as e:
        return str(e)
    paths.set_model(ref)
    if ref.kind == "zoo" and not ref.params:
        return ""  # the zoo's own factories, without parameters, are tested
    return check(ref.text)[1]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="deploytui", description=__doc__)
    p.add_argument("--model", default=None, metavar="REF", help=MODEL_HELP)
    sub = p.add_subparsers(dest="command")

    def model_opt(q: argparse.ArgumentParser) -> None:
        q.add_argument("--model", default=argparse.SUPPRESS, metavar="REF", help=MODEL_HELP)

    b = sub.add_parser("build", help="build every artifact (incremental)")
    b.add_argument(
        "--only",
        action="append",
        metavar="STEP",
        help="run only this step (repeatable; an unknown name prints the known ones)",
    )
    b.add_argument("-v", "--verbose", action="store_true", help="show every line the steps print")
    model_opt(b)
    b.set_defaults(func=cmd_build)

    def counts(q: argparse.ArgumentParser, n: int) -> None:
        q.add_argument("-n", type=int, default=n, help=f"counted runs (default {n})")
        q.add_argument("--warmup", type=int, default=1, help="runs before counting (default 1)")
        q.add_argument(
            "--timeout", type=float, default=120.0, help="seconds before a run is killed (default 120)"
        )
        q.add_argument("--json", action="store_true", help="print JSON (schema in README)")

    be = sub.add_parser(
        "bench", help="measure forms (all by default); exits 1 if one fails or misses tolerance"
    )
    be.add_argument("forms", nargs="*", metavar="FORM", help="form keys (see `deploytui inspect --help`)")
    counts(be, 20)
    be.add_argument(
        "--repeat", type=int, default=10, help="steady-state forwards per run after the first (default 10)"
    )
    model_opt(be)
    be.set_defaults(func=cmd_bench)

    me = sub.add_parser("measure", help="measure any command the same way: deploytui measure -- CMD ARG...")
    counts(me, 20)
    me.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARG ...]")
    me.set_defaults(func=cmd_measure)

    from deploytui.forms import BY_KEY

    ins = sub.add_parser("inspect", help="what a form ships and what is inside its artifacts")
    ins.add_argument("form", choices=list(BY_KEY), metavar="FORM", help=", ".join(BY_KEY))
    ins.add_argument("--full", action="store_true", help="print long code sections whole")
    model_opt(ins)
    ins.set_defaults(func=cmd_inspect)

    rep = sub.add_parser("report", help="write the report from the stored results")
    rep.add_argument(
        "-o", "--output", type=Path, help="file to write (default reports/deploytui-report-DATE.FMT)"
    )
    rep.add_argument("--format", choices=["md", "json", "csv"], default="md")
    model_opt(rep)
    rep.set_defaults(func=cmd_report)

    mo = sub.add_parser("models", help="the zoo and the models built under artifacts/")
    mo.add_argument("--json", action="store_true", help="print JSON")
    mo.set_defaults(func=cmd_models)
    return p


MODEL_HELP = (
    "the model: a zoo name (a1, mlp:hidden=512,depth=4, convnet, tinylm), "
    "package.module:factory or path/to/file.py:factory (default a1)"
)
NEEDS_MODEL = ("build", "bench", "inspect", "report", None)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command in NEEDS_MODEL:
        err = check_model(args.model)
        if err:
            print(f"error: {err}", file=sys.stderr)
            return 2
    if args.command is None:
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            print(
                "deploytui: the app needs a terminal; for headless use see "
                "`deploytui bench`, `deploytui report` and `deploytui --help`",
                file=sys.stderr,
            )
            return 2
        from deploytui.tui import run_app

        code: int = run_app().return_code or 0
        return code
    try:
        status: int = args.func(args)
        return status
    except BrokenPipeError:  # e.g. `deploytui inspect X | head`
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:  # ctrl+c: the launcher has already killed the run in flight
        print("deploytui: interrupted", file=sys.stderr)
        return 130
