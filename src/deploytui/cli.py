"""Command line: build, bench, measure, inspect, report, models, sweep; bare `deploytui` opens the app.

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
        elif e.kind == "end":  # steps run side by side: the end names its step
            extra = f" — {e.text}" if e.text else ""
            print(f"    {e.step}: {e.status} ({e.wall_s:.1f} s){extra}", flush=True)

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

    if args.results is not None:
        from deploytui.report import write_results

        written = write_results(args.results)
        for path in written:
            print(f"wrote {path}")
        if not written:
            print("error: no results yet: run `deploytui bench` first", file=sys.stderr)
        return 0 if written else 1
    store = results.load()
    for msg in store.dropped:
        print(f"warning: {msg}", file=sys.stderr)
    if not store.forms:
        print("error: no results yet: run `deploytui bench` (or r / a in the app) first", file=sys.stderr)
        return 1
    path = write_report(store, load_manifest(), args.format, args.output)
    print(f"wrote {path}")
    return 0


def cmd_ship(args: argparse.Namespace) -> int:
    from deploytui import forms, paths, shipping
    from deploytui.ship.bundler import ShipError
    from deploytui.units import human, ms

    form = forms.get(args.form)
    ref = paths.model()
    out = args.output.resolve() if args.output else shipping.default_dir(form, ref)
    if not args.check:
        try:
            b = shipping.make(form, out, tar=args.tar, ref=ref)
        except (ShipError, OSError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        print(_bundle_line(form.key, b.manifest, b.root, b.tarball))
        return 0
    if not args.json:
        print(
            f"{form.key} ({ref.text}): bundling into {out} and running it isolated "
            "(bwrap: the bundle, /usr, no network, no home)"
        )
    fact = shipping.check(
        form,
        out,
        ref=ref,
        tar=args.tar,
        n=args.n,
        warmup=args.warmup,
        timeout_s=args.timeout,
        on_step=None if args.json else (lambda msg: print(f"  {msg}", flush=True)),
    )
    if args.json:
        import json

        print(json.dumps({"form": form.key, "model": ref.text, "isolated": fact}, indent=1))
    else:
        size = (
            f"bundle {human(fact['unpacked_bytes'])} unpacked, {human(fact['compressed_bytes'])} .tar.gz"
            if "compressed_bytes" in fact
            else "no bundle"
        )
        if fact["verdict"] == "✓":
            print(
                f"✓ {form.key} runs isolated — {size}; start-up median {ms(fact['startup_median_s'])}, "
                f"peak RSS {human(fact['peak_rss_median_bytes'])}, "
                f"max|diff| vs eager {fact['max_abs_diff']:.3g}"
            )
            if fact.get("sandbox_floor_s"):
                print(f"  (the sandbox itself: /usr/bin/true in it takes {ms(fact['sandbox_floor_s'])})")
        else:
            print(f"✗ {form.key} does not run isolated — {size}\n  reason: {fact.get('reason')}")
        if fact.get("libraries"):
            print(f"  lib/: {', '.join(fact['libraries'])}")
        if fact.get("venv_bytes"):
            print(f"  its venv, made on the target from requirements.txt: {human(fact['venv_bytes'])}")
        if fact.get("cuda_bytes"):
            print(
                f"  of which CUDA's: {human(fact['cuda_bytes'])} unpacked, "
                f"{human(fact['cuda_compressed_bytes'])} compressed (a CPU-only libtorch needs none of it)"
            )
    return 0 if fact["verdict"] == "✓" else 1


def _bundle_line(key: str, manifest: dict[str, object], root: Path, tarball: Path | None) -> str:
    from deploytui.units import human

    files = manifest["files"]
    assert isinstance(files, dict)
    line = (
        f"{key}: {root} — {len(files)} files, {human(float(str(manifest['unpacked_bytes'])))} unpacked, "
        f"{human(float(str(manifest['compressed_bytes'])))} as .tar.gz"
    )
    libs = manifest.get("libraries") or []
    if libs:
        assert isinstance(libs, list)
        line += f"\n  lib/: {', '.join(map(str, libs))}"
    if tarball:
        line += f"\n  wrote {tarball}"
    return line


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


def cmd_sweep(args: argparse.Namespace) -> int:
    """Build and measure every form across the mlp sizes (deploytui.sweep), then print the fit."""
    from deploytui import forms, sweep, sweep_store
    from deploytui.units import human

    try:
        refs = (
            sweep.parse_sizes(args.sizes)
            if args.sizes
            else [sweep.shape_for(t) for t in sweep.default_targets()]
        )
        chosen = [forms.get(k) for k in args.forms.split(",")] if args.forms else list(forms.FORMS)
    except (ValueError, KeyError) as e:
        print(f"error: {e.args[0] if isinstance(e, KeyError) else e}", file=sys.stderr)
        return 2
    if err := _check_counts(args):
        print(f"error: {err}", file=sys.stderr)
        return 2
    store = sweep_store.load()
    for msg in store.dropped:
        print(f"warning: {msg}", file=sys.stderr)
    out = sys.stderr if args.json else sys.stdout  # progress; --json prints only the JSON on stdout
    if not args.show:
        print(
            f"sweep: {len(refs)} sizes x {len(chosen)} forms, n={args.n} runs per form after {args.warmup} "
            f"warm-up (fewer where {args.n} runs would pass {sweep.RUN_BUDGET_S:.0f} s); build steps killed "
            f"past {human(args.memory_limit_gib * (1 << 30))} or {args.build_timeout:.0f} s",
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

        from deploytui import fit

        fits = [dataclasses.asdict(f) for f in fit.fit_all(points, keys)]
        print(json.dumps({"points": [p.to_json() for p in points], "fit": fits}, indent=1))
        return 0
    from deploytui import scale_text

    print(scale_text.render(points, keys))
    return 0


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
    counts(sh, 5)
    model_opt(sh)
    sh.set_defaults(func=cmd_ship)

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
    model_opt(rep)
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
    counts(sw, 5)
    sw.add_argument("--repeat", type=int, default=10, help="steady-state forwards per run (default 10)")
    sw.add_argument(
        "--build-timeout",
        type=float,
        default=1800.0,
        help="seconds before a build step is killed (default 1800)",
    )
    sw.add_argument(
        "--memory-limit-gib",
        type=float,
        default=10.0,
        help="a build step whose processes pass this many GiB is killed (default 10)",
    )
    sw.add_argument("--force", action="store_true", help="measure sizes already measured again")
    sw.add_argument("--show", action="store_true", help="print the stored points' fit and chart, run nothing")
    sw.set_defaults(func=cmd_sweep)

    mo = sub.add_parser("models", help="the zoo and the models built under artifacts/")
    mo.add_argument("--json", action="store_true", help="print JSON")
    mo.set_defaults(func=cmd_models)
    return p


MODEL_HELP = (
    "the model: a zoo name (a1, mlp:hidden=512,depth=4, convnet, tinylm), "
    "package.module:factory or path/to/file.py:factory (default a1)"
)
NEEDS_MODEL = ("build", "bench", "inspect", "report", "ship", None)


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
