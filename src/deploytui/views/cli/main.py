"""Command line: build, bench, measure, inspect, ship, choose, report, models, sweep; bare `deploytui`
opens the app.

`--model REF` (default a1) names the model on every subcommand and on the bare `deploytui`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from deploytui.core.modelref import ModelRef
    from deploytui.core.record import RunRecord
    from deploytui.core.workspace import Workspace


def build_progress(verbose: bool, quiet_up_to_date: bool = False, out: TextIO | None = None) -> Any:
    """The build's progress lines, as `build` prints them; with `quiet_up_to_date` a step that
    is up to date prints nothing (its start line waits until the step does something)."""
    from deploytui.builder import BuildEvent

    pending: dict[str, str] = {}  # per step: its start line, until it does something

    def say(step: str, text: str) -> None:
        for line in [pending.pop(step, None), text]:
            if line is not None:
                print(line, flush=True, file=out or sys.stdout)

    def show(e: BuildEvent) -> None:
        if e.kind == "start":
            start = f"[{e.index}/{e.total}] {e.step}: {e.title}"
            if quiet_up_to_date:
                pending[e.step] = start
            else:
                say(e.step, start)
        elif e.kind == "line" and (verbose or _is_progress(e.text)):
            say(e.step, f"    {e.text}" if verbose else f"    {e.text[:150]}")
        elif e.kind == "end" and not (quiet_up_to_date and e.status == "up-to-date"):
            extra = f" — {e.text}" if e.text else ""  # steps run side by side: the end names its step
            say(e.step, f"    {e.step}: {e.status} ({e.wall_s:.1f} s){extra}")
        elif e.kind == "end":
            pending.pop(e.step, None)

    return show


def cmd_build(args: argparse.Namespace) -> int:
    from deploytui.builder import run_build
    from deploytui.spec.context import BuildContext

    try:
        manifest = run_build(BuildContext.of(args.ws), only=args.only, on_event=build_progress(args.verbose))
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    failed = [n for n in manifest.failed_steps() if not args.only or n in args.only]
    if failed:
        print(f"build: {len(failed)} step(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def _is_progress(line: str) -> bool:
    """Lines worth showing without --verbose: why a step runs or waits, cargo's progress and
    warnings."""
    s = line.strip()
    return s.startswith(
        ("stale:", "waiting:", "Compiling", "Finished", "warning:", "error", "[torch.onnx]", "Building")
    )


def _table_line(rec: RunRecord, label: str | None = None) -> str:
    """One record as `bench` and `measure` print it; `label` in place of the form key."""
    from deploytui.core.record import RunStatus
    from deploytui.core.units import human, ms

    name = label if label is not None else rec.form
    wall, rss = rec.wall, rec.rss
    if rec.status in (RunStatus.UNAVAILABLE, RunStatus.NOT_APPLICABLE) or wall is None or rss is None:
        line = f"{name:<20} {_problem(rec)}"
        if rec.stage:
            line += f"\n{'':<20} stage {rec.stage} failed" + (f"; full log: {rec.log}" if rec.log else "")
        return line
    line = (
        f"{name:<20} n={wall.n:<3} min={ms(wall.min, 9)} median={ms(wall.median, 9)} "
        f"max={ms(wall.max, 9)}  rss={human(rss.median):>10}"
    )
    if rec.max_abs_diff is not None and rec.accuracy is not None:  # a variant: judged by its budget
        line += f"  max|diff|={rec.max_abs_diff:.3g} ({rec.accuracy.precision})"
    elif rec.max_abs_diff is not None:
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
    for d in [] if rec.accuracy is not None else rec.outputs or []:
        if len(rec.outputs or []) > 1 or not d.within_tol:
            line += f"\n{'':<20} {d.line()}"
    if rec.accuracy is not None:
        from deploytui.scenarios.accuracy.variants import accuracy_text

        line += f"\n{'':<20} accuracy: {accuracy_text(rec.accuracy)}"
    if rec.error:
        line += f"\n{'':<20} {_problem(rec)}"
        if rec.stage:
            line += f"\n{'':<20} stage {rec.stage} failed" + (f"; full log: {rec.log}" if rec.log else "")
    return line


def _problem(rec: RunRecord) -> str:
    """`failed: exit 1: …`, `unavailable: step …`, or `FAIL: output_0 differs …` for a run that is
    ok but beyond tolerance; the status is not repeated when the reason starts with it."""
    from deploytui.core.record import RunStatus

    if rec.status == RunStatus.NOT_APPLICABLE:
        return rec.error or "not applicable"
    label = str(rec.status) if rec.status != RunStatus.OK else "FAIL"
    error = rec.error or ""
    return error if error.startswith(label + ":") else f"{label}: {error}"


def _check_counts(args: argparse.Namespace) -> str:
    if args.n < 1 or args.warmup < 0 or args.timeout <= 0:
        return "need -n >= 1, --warmup >= 0, --timeout > 0"
    return ""


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


def cmd_bench(args: argparse.Namespace) -> int:
    import json

    from deploytui.core import defaults, machine
    from deploytui.core.record import RunStatus
    from deploytui.families import registry
    from deploytui.scenarios.accuracy import variants
    from deploytui.scenarios.startup import bench, results
    from deploytui.spec.manifest import load as load_manifest

    if args.batch or args.threads:
        from deploytui.views.cli.serve import cmd_serve

        return cmd_serve(args)
    if args.repeat is None:
        args.repeat = defaults.REPEAT
    if args.repeat < 0:
        print("error: need --repeat >= 0", file=sys.stderr)
        return 2
    if err := _check_counts(args):
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

        ctx = BuildContext.of(ws)
        progress = build_progress(False, quiet_up_to_date=True, out=sys.stderr if args.json else None)
        run_build(ctx, only=steps_for(ctx, chosen), on_event=progress)
    store = results.load(ws.results_path)
    for msg in store.dropped:
        print(f"warning: {msg}", file=sys.stderr)
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
            print(_table_line(rec), flush=True)
            if form.variant:
                print(f"{'':<20} {variants.ratios_text(_vs_parent(rec, store, ws), form.parent)}", flush=True)
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
    bad = [
        r
        for r in records
        if r.status not in (RunStatus.OK, RunStatus.NOT_APPLICABLE)
        or (r.status == RunStatus.OK and not bench.judged_ok(r))
    ]
    return 1 if bad else 0


def _vs_parent(rec: RunRecord, store: Any, ws: Workspace) -> dict[str, float | None]:
    """A variant's ratios to its fp32 parent's stored record (`variants.ratios`)."""
    from deploytui.families import registry
    from deploytui.scenarios.accuracy import variants
    from deploytui.views import report

    parent = registry.get(rec.form or "").parent
    return variants.ratios(
        rec, parent, store.forms.get(parent), lambda key: report.ship_bytes(registry.get(key), ws)
    )


def cmd_measure(args: argparse.Namespace) -> int:
    import json
    import os

    from deploytui.core.measure import MeasureError, measure
    from deploytui.core.record import RunRecord, RunStatus

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
        print(_table_line(rec, label=" ".join(command)[:20]))
    return 0 if m.ok else 1


def cmd_inspect(args: argparse.Namespace) -> int:
    from deploytui.families import registry
    from deploytui.spec.manifest import load as load_manifest
    from deploytui.views import form_view

    try:
        form = registry.get(args.form)
    except KeyError as e:
        print(f"error: {e.args[0]}", file=sys.stderr)
        return 2
    manifest = load_manifest(args.ws)
    print(f"{form.key}: {form.title} ({form.family})")
    if form.note:
        print(f"  {form.note}")
    errors = 0
    for sec in form_view.sections(form, manifest, args.ws):
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


def cmd_ship(args: argparse.Namespace) -> int:
    from deploytui.core.units import human, ms
    from deploytui.families import registry
    from deploytui.scenarios.isolated import shipping
    from deploytui.ship.bundler import ShipError

    form = registry.get(args.form)
    ws = args.ws
    ref = ws.model
    out = args.output.resolve() if args.output else shipping.default_dir(form, ws)
    if not args.check:
        try:
            b = shipping.make(form, out, tar=args.tar, ws=ws)
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
        ws=ws,
        tar=args.tar,
        n=args.n,
        warmup=args.warmup,
        timeout_s=args.timeout,
        on_step=None if args.json else (lambda msg: print(f"  {msg}", flush=True)),
    )
    if args.json:
        import json

        print(json.dumps({"form": form.key, "model": ref.text, "isolated": fact.to_json()}, indent=1))
    else:
        size = (
            f"bundle {human(fact.unpacked_bytes or 0)} unpacked, {human(fact.compressed_bytes)} .tar.gz"
            if fact.compressed_bytes is not None
            else "no bundle"
        )
        if fact.passed:
            print(
                f"{fact.glyph} {form.key} runs isolated — {size}; start-up median "
                f"{ms(fact.startup_median_s)}, peak RSS {human(fact.peak_rss_median_bytes or 0)}, "
                f"max|diff| vs eager {fact.max_abs_diff or 0:.3g}"
            )
            if fact.sandbox_floor_s:
                print(f"  (the sandbox itself: /usr/bin/true in it takes {ms(fact.sandbox_floor_s)})")
        else:
            print(f"{fact.glyph} {form.key} does not run isolated — {size}\n  reason: {fact.reason}")
        if fact.libraries:
            print(f"  lib/: {', '.join(fact.libraries)}")
        if fact.venv_bytes:
            print(f"  its venv, made on the target from requirements.txt: {human(fact.venv_bytes)}")
        if fact.cuda_bytes:
            print(
                f"  of which CUDA's: {human(fact.cuda_bytes)} unpacked, "
                f"{human(fact.cuda_compressed_bytes or 0)} compressed (a CPU-only libtorch needs none of it)"
            )
    return 0 if fact.passed else 1


def _bundle_line(key: str, manifest: dict[str, object], root: Path, tarball: Path | None) -> str:
    from deploytui.core.units import human

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


def cmd_choose(args: argparse.Namespace) -> int:
    """The forms that meet the user's constraints, ranked, and why every other does not (from
    the stored runs, the build's sizes and probes and the ship checks: nothing runs)."""
    import json

    from deploytui.decisions import choose
    from deploytui.decisions import facts as choose_facts
    from deploytui.decisions import text as choose_text

    try:
        req = choose.request(args.given or [], args.rank_by or "")
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    ref = args.ws.model
    facts, dropped = choose_facts.read(args.ws)
    for msg in dropped:
        print(f"warning: {msg}", file=sys.stderr)
    answer = choose.choose(facts, req, ref.text)
    if args.json:
        print(json.dumps(answer.to_json(), indent=1))
    else:
        print(choose_text.render(answer, with_chart=args.chart))
    return 0 if answer.chosen else 1


class _Given(argparse.Action):
    """Keeps the constraints in the order the user gives them: (rule key, text) in `given`."""

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[no-untyped-def]
        given = list(getattr(namespace, "given", None) or [])
        given.append((self.dest.replace("_", "-"), values if isinstance(values, str) else ""))
        namespace.given = given


def _choose_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from deploytui.decisions import choose

    ch = sub.add_parser(
        "choose",
        help="the forms that meet your constraints, ranked, and why each other one does not",
        description="From what is stored for the model on this machine (runs, build sizes, runtime "
        "probes, ship checks): the forms that meet every constraint, ranked by the figure of the "
        "first constraint given (or --rank-by; start-up by default), and every other form with the "
        "first constraint it breaks. Exits 1 when no form qualifies.",
    )
    ch.set_defaults(given=[])
    for rule in choose.RULES:
        flag = f"--{rule.key}"
        if rule.example:
            ch.add_argument(
                flag,
                action=_Given,
                metavar=rule.metavar,
                help=f"{rule.help} (e.g. {rule.example})".replace("%", "%%"),
            )
        else:
            ch.add_argument(flag, action=_Given, nargs=0, help=rule.help)
    ch.add_argument("--rank-by", choices=list(choose.RANKS), help="rank the qualifying forms by this figure")
    ch.add_argument("--chart", action="store_true", help="also draw the Pareto chart (start-up × ship size)")
    ch.add_argument("--json", action="store_true", help="print the answer as JSON")
    ch.add_argument("--model", default=argparse.SUPPRESS, metavar="REF", help=MODEL_HELP)
    place_opts(ch, argparse.SUPPRESS)
    ch.set_defaults(func=cmd_choose)


def cmd_models(args: argparse.Namespace) -> int:
    """The zoo and every model already built under artifacts/, with parameter count and inputs
    (described by `deploytui.models.describe` in a subprocess: this process never imports torch)."""
    import json

    from deploytui.core.modelref import ZOO, inputs_text
    from deploytui.models.check import describe
    from deploytui.spec import manifest

    built = manifest.built_models(args.ws.artifacts)
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
        ins = inputs_text(d.get("inputs"))
        print(f"{name:<24} {d.get('params', 0):>10,} params  inputs {ins:<28} {mark}".rstrip())
        if name in ZOO:
            print(f"{'':<24} {ZOO[name]}")
    print(
        "\nAny model also: path/to/file.py:factory, package.module:factory, torchvision:NAME, timm:NAME,\n"
        "hf:FOLDER (a saved Hugging Face model), hf-config:CONFIG.json (random weights); the library\n"
        "models need deploytui's models extra (pip install -e '.[models]'); nothing is downloaded."
    )
    # a stored model whose file has gone since (a model in /tmp) is listed with its error; only a
    # zoo model that does not load fails the command
    return 1 if any("error" in d and d.get("model") in ZOO for d in lines) else 0


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
    if err := _check_counts(args):
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


def shape_opts(q: argparse.ArgumentParser, default: Any) -> None:
    q.add_argument(
        "--input-shape",
        default=default,
        metavar="AxBxC",
        help="torchvision:, timm: and image models: the example input's shape (default: the model's own)",
    )
    q.add_argument(
        "--seq-len",
        type=int,
        default=default,
        metavar="N",
        help="hf: and hf-config: text models: the example token ids' length (default 16)",
    )


def place_opts(q: argparse.ArgumentParser, default: Any) -> None:
    """--artifacts and --bundles: where the models' files and their bundles go (read into the
    Workspace once, in `main`)."""
    q.add_argument(
        "--artifacts",
        type=Path,
        default=default,
        metavar="DIR",
        help="the artifacts folder (default: $DEPLOYTUI_ARTIFACTS, else artifacts/ in the source "
        "checkout, else $XDG_DATA_HOME/deploytui/artifacts)",
    )
    q.add_argument(
        "--bundles",
        type=Path,
        default=default,
        metavar="DIR",
        help="where `ship` puts bundles (default: $DEPLOYTUI_BUNDLES, else bundles/ beside the default "
        "artifacts folder)",
    )


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="deploytui", description=__doc__)
    p.add_argument("--model", default=None, metavar="REF", help=MODEL_HELP)
    shape_opts(p, None)
    place_opts(p, None)
    sub = p.add_subparsers(dest="command")

    def model_opt(q: argparse.ArgumentParser) -> None:
        q.add_argument("--model", default=argparse.SUPPRESS, metavar="REF", help=MODEL_HELP)
        shape_opts(q, argparse.SUPPRESS)
        place_opts(q, argparse.SUPPRESS)

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
    model_opt(be)
    be.set_defaults(func=cmd_bench)

    me = sub.add_parser("measure", help="measure any command the same way: deploytui measure -- CMD ARG...")
    counts(me, defaults.RUNS)
    me.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARG ...]")
    me.set_defaults(func=cmd_measure)

    from deploytui.families.registry import BY_KEY

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
    counts(sh, defaults.SHIP_RUNS)
    model_opt(sh)
    sh.set_defaults(func=cmd_ship)

    _choose_parser(sub)

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
    return p


MODEL_HELP = (
    "the model: a zoo name (a1, mlp:hidden=512,depth=4, convnet, tinylm), "
    "package.module:factory, path/to/file.py:factory, torchvision:NAME, timm:NAME, "
    "hf:FOLDER (a saved Hugging Face model) or hf-config:CONFIG.json (default a1)"
)
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
    # the one place the process reads where its files go; everything below is handed `args.ws`
    args.ws = Workspace.from_env(ref, args.artifacts, args.bundles)
    if args.command is None:
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            print(
                "deploytui: the app needs a terminal; for headless use see "
                "`deploytui bench`, `deploytui report` and `deploytui --help`",
                file=sys.stderr,
            )
            return 2
        from deploytui.views.tui import run_app

        code: int = run_app(args.ws).return_code or 0
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
