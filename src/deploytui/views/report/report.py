"""The report: the reference page's tables rebuilt from the stored results (Markdown, JSON, CSV).

Headless: the app's export key and `deploytui report` both call `write_report`. Paths are made
relative to the project, and anything outside it is shortened, so a report holds no absolute
paths from this machine and nothing from the environment. A report only serialises what is
stored (results.json, the manifest and its probed runtime facts): it never runs a program.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
import time
from pathlib import Path
from typing import Any

from deploytui.core import machine, paths, plot
from deploytui.core.record_parts import Accuracy, median
from deploytui.core.units import human, ms
from deploytui.core.workspace import Workspace, data_dir
from deploytui.decisions import choose
from deploytui.decisions import facts as choose_facts
from deploytui.decisions import text as choose_text
from deploytui.families import registry
from deploytui.judge.precision import FP32
from deploytui.scenarios.accuracy import variants
from deploytui.scenarios.startup.results import ResultsStore as Store
from deploytui.ship import store as ship_store
from deploytui.ship.store import ShipCheck
from deploytui.spec import a1_page
from deploytui.spec import forms as F
from deploytui.spec.manifest import Manifest, model_info, runtime_facts

FORMATS = ("md", "json", "csv")
METHOD = (
    "Each form runs in a fresh process through a small compiled launcher (posix_spawn, wait4): "
    "wall time is spawn to reaped exit; peak RSS is the child's own ru_maxrss. "
    "Warm-up runs are not counted. Logits are compared as f32 with eager PyTorch."
)


def scrub(text: str) -> str:
    """Project paths relative; other absolute paths (caches, home, system) cut to their last part."""
    text = text.replace(str(paths.ROOT), ".").replace(str(paths.cache_dir()), "<cache>")
    text = text.replace(str(Path.home()), "~")
    return re.sub(r"(?<![\w.~<>])/(?:[^\s/:'\"]+/)+([^\s/:'\"]*)", r"/…/\1", text)


def ship_bytes(form: F.Form, ws: Workspace) -> int | None:
    sizes = [p.stat().st_size for p in form.ship_paths(ws) if p.exists()]
    return sum(sizes) if len(sizes) == len(form.ship_paths(ws)) else None


def weight_fields(form: F.Form, info: dict[str, Any] | None, ws: Workspace) -> dict[str, Any]:
    """What the form ships to carry the weights against the model's unique parameter bytes
    (model.json; each storage once, a tied matrix once): the bytes of its model files (graph or
    code with them). A form without model files keeps its weights in its program or reads them
    from a baked path: not counted. A ratio near 2 on a model whose tied matrix is most of its
    bytes is that matrix shipped twice."""
    ref = ws.model
    unique = (info or {}).get("unique_param_bytes")
    unique = unique if isinstance(unique, int) and unique > 0 else None
    art = ws.artifacts
    files = [art / f.replace("{m}", ref.slug) for f in form.model_files]
    extra = [art / f.replace("{m}", ref.slug) for f in form.optional_files]  # an .onnx's external data
    ok = bool(files) and all(p.is_file() for p in files) and not form.applies(ref)
    shipped = sum(p.stat().st_size for p in [*files, *(p for p in extra if p.is_file())]) if ok else None
    return {
        "weights_shipped_bytes": shipped,
        "weights_in": "model files" if ok else ("program" if not form.model_files else None),
        "unique_param_bytes": unique,
        "weights_ratio": round(shipped / unique, 3) if shipped is not None and unique else None,
    }


def runtime_fields(form: F.Form, manifest: Manifest, ws: Workspace) -> dict[str, Any]:
    """The runtime facts the build probed for `form`, as report fields (never runs anything)."""
    facts, why = runtime_facts(form, ws, manifest)
    if facts is None:
        return {
            "runtime_bytes": None,
            "runtime_probed_at": None,
            "runtime_note": scrub(why),
            "runtime_parts": None,
        }
    if facts.get("probe") == "distributions":
        parts = [
            {"name": d.get("name"), "version": d.get("version"), "bytes": d.get("bytes")}
            for d in facts.get("distributions") or []
        ]
    else:
        parts = [
            {"name": lib.get("name"), "path": scrub(str(lib.get("path"))), "bytes": lib.get("size")}
            for lib in facts.get("libraries") or []
            if lib.get("exists") and not lib.get("system")
        ]
    return {
        "runtime_bytes": facts["runtime_bytes"],
        "runtime_probed_at": facts.get("probed_at"),
        "runtime_note": "",
        "runtime_parts": parts,
    }


def isolated_fields(check: ShipCheck | None) -> dict[str, Any]:
    """A form's last `deploytui ship --check` (artifacts/<model>/ship.json) as report fields:
    `isolated` is true (passed), false, or null (never checked)."""
    if check is None:
        return dict.fromkeys(ISOLATED_FIELDS) | {"isolated_reason": ""}
    return {
        "isolated": check.passed,
        "isolated_reason": scrub(check.reason),
        "bundle_bytes": check.unpacked_bytes,
        "bundle_compressed_bytes": check.compressed_bytes,
        "bundle_venv_bytes": check.venv_bytes,
        "isolated_start_median_s": check.startup_median_s,
        "isolated_peak_rss_bytes": check.peak_rss_median_bytes,
        "isolated_checked_at": check.checked_at,
    }


ISOLATED_FIELDS = (
    "isolated",
    "isolated_reason",
    "bundle_bytes",
    "bundle_compressed_bytes",
    "bundle_venv_bytes",
    "isolated_start_median_s",
    "isolated_peak_rss_bytes",
    "isolated_checked_at",
)


def rows(ws: Workspace, store: Store, manifest: Manifest) -> list[dict[str, Any]]:
    """One flat row per form that has a result, in registry order."""
    out = []
    shipped = ship_store.load(ws.ship_path).forms
    info = model_info(ws.model_dir)
    for form in registry.FORMS:
        rec = store.forms.get(form.key)
        if rec is None:
            continue
        wall, rss = list(rec.wall_s), rec.peak_rss_bytes
        st = rec.wall
        out.append(
            {
                "form": form.key,
                "title": form.title,
                "family": form.family,
                "status": rec.status,
                "error": scrub(rec.error or ""),
                "n": len(wall),
                "start_min_s": st.min if st else None,
                "start_median_s": st.median if st else None,
                "start_max_s": st.max if st else None,
                "start_mean_s": st.mean if st else None,
                "start_stdev_s": st.stdev if st and st.n > 1 else None,
                "peak_rss_median_bytes": median(rss),
                "peak_rss_min_bytes": min(rss) if rss else None,
                "peak_rss_max_bytes": max(rss) if rss else None,
                "ships": ", ".join(
                    f"{p.name} ({human(p.stat().st_size)})" if p.exists() else f"{p.name} (missing)"
                    for p in form.ship_paths(ws)
                )
                or "–",
                "ship_bytes": ship_bytes(form, ws),
                **weight_fields(form, info, ws),
                "runtime": registry.RUNTIME_TITLES[form.runtime],
                **runtime_fields(form, manifest, ws),
                **isolated_fields(shipped.get(form.key)),
                "max_abs_diff": rec.max_abs_diff,
                "max_rel_diff": max((d.max_rel for d in rec.outputs), default=None) if rec.outputs else None,
                "worst": _worst(rec),
                "tolerance": _tol(rec),
                "within_tol": rec.within_tol,
                "stage": rec.stage,
                "stage_status": rec.stage_status,
                "log": rec.log,
                "stages_ms": rec.stages_ms,
                "modules_added": rec.modules_added,
                "modules_added_torch": rec.modules_added_torch,
                "modules_added_total": rec.modules_added_total,
                "measured_at": rec.measured_at,
                "precision": form.precision,
                "parent": form.parent or None,
                "accuracy": dataclasses.asdict(rec.accuracy) if rec.accuracy is not None else None,
                "within_budget": rec.accuracy.within_budget if rec.accuracy is not None else None,
                "vs_parent": (
                    variants.ratios(
                        rec,
                        form.parent,
                        store.forms.get(form.parent),
                        lambda key: ship_bytes(registry.get(key), ws),
                    )
                    if form.variant
                    else None
                ),
            }
        )
    return out


def _worst(rec: Any) -> str | None:
    """`logits[0, 2]`: where the largest difference over all outputs is."""
    if not rec.outputs:
        return None
    d = max(rec.outputs, key=lambda o: o.max_abs)
    return f"{d.name}{d.worst[0].index}" if d.worst else d.name


def _tol(rec: Any) -> str | None:
    if not rec.outputs:
        return None
    o = rec.outputs[0]
    return f"atol {o.atol:g}, rtol {o.rtol:g}"


def _variants_section(rs: list[dict[str, Any]]) -> list[str]:
    """The lower-precision variants: accuracy against eager (beside, never in, the tolerance
    check above) and ratios to the fp32 form each comes from."""
    vs = [r for r in rs if r["precision"] != FP32]
    if not vs:
        return []

    def ratio(r: dict[str, Any], key: str) -> str:
        v = (r["vs_parent"] or {}).get(key)
        return f"{v:.2f}×" if v is not None else "–"

    def acc(r: dict[str, Any]) -> str:
        if r["accuracy"] is None:
            return f"not measured: {r['error']}" if r["error"] else "not measured yet"
        return variants.accuracy_text(Accuracy.from_json(r["accuracy"]))

    return [
        "## Lower-precision variants",
        _md_table(
            [
                "form",
                "precision",
                "fp32 parent",
                "accuracy against eager",
                "ship ÷",
                "start-up ÷",
                "steady ÷",
            ],
            [
                [r["form"], r["precision"], r["parent"], acc(r), *(ratio(r, k) for k in variants.RATIOS)]
                for r in vs
            ],
        ),
        "A variant is judged by its accuracy budget over the example inputs plus a fixed-seed set "
        "drawn like them (cosine similarity of each output with eager's, the worst input; top-1 "
        "agreement for class-score outputs), not by the fp32 tolerance; ÷ is the variant's figure "
        "over its fp32 parent's (ship: model files + program; start-up: median spawn to exit; "
        "steady: the median forward), both as stored here.",
    ]


def _md_table(header: list[str], body: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in body]
    return "\n".join(lines)


def _verdict(r: dict[str, Any]) -> str:
    if r["precision"] != FP32 and r["within_tol"] is not None:
        return f"– ({r['precision']}: judged by its accuracy budget, below)"
    if r["within_tol"] is None:
        return str(r["status"])
    return "OK" if r["within_tol"] else "FAIL"


def markdown(ws: Workspace, store: Store, manifest: Manifest, scale: bool = True) -> str:
    rs = rows(ws, store, manifest)
    m = machine.info()
    tools = manifest.tools
    parts = [
        f"# deploytui report: {scrub(manifest.model or ws.model.text)}",
        f"Generated {time.strftime('%Y-%m-%d %H:%M %Z')}. Machine: {m['os']} {m['arch']}, {m['cpu']}, "
        f"{m['cores']} cores, {human(m['memory_bytes'])}. Tools: "
        + ", ".join(v if str(v).startswith(k) else f"{k} {v}" for k, v in sorted(tools.items()))
        + ".",
        f"Method: {METHOD}",
        "## What ships",
        _md_table(
            [
                "form",
                "ships",
                "bundle (.tar.gz)",
                "runs isolated",
                "files + program",
                "runtime",
                "runtime size",
                "probed",
            ],
            [
                [
                    r["form"],
                    r["ships"],
                    _bundle(r),
                    _isolated(r),
                    str(r["ship_bytes"] or "–"),
                    r["runtime"],
                    human(r["runtime_bytes"]) if r["runtime_bytes"] is not None else r["runtime_note"],
                    str(r["runtime_probed_at"] or "–"),
                ]
                for r in rs
            ],
        ),
        "The bundle is what ships: what `deploytui ship FORM` writes (model files, inputs, program and "
        "every non-system library a run loads; for a Python form its script, the model's source where "
        "it needs it and the exact pins, the venv made on the target), as .tar.gz; runs isolated is "
        "`deploytui ship FORM --check`: the bundle run under bubblewrap seeing only itself and the OS's "
        "/usr, no network, no home, compared with eager (– when not checked). Files + program count the "
        "model files and the program alone; runtime sizes are what `deploytui build` probed: for a "
        "Python form the installed size of its runtime's distributions, for a compiled one the "
        "non-system libraries one run loaded.",
        "## Weights shipped",
        _weights_intro(rs),
        _md_table(
            ["form", "weights ship in", "bytes", "÷ unique parameter bytes"],
            [
                [
                    r["form"],
                    r["weights_in"] or "–",
                    human(r["weights_shipped_bytes"]) if r["weights_shipped_bytes"] is not None else "–",
                    f"{r['weights_ratio']:.2f}×" if r["weights_ratio"] is not None else "–",
                ]
                for r in rs
            ],
        ),
        "## Start-up (spawn to exit)",
        _md_table(
            ["form", "n", "min", "median", "max", "mean ± σ"],
            [
                [
                    r["form"],
                    str(r["n"]),
                    ms(r["start_min_s"]),
                    ms(r["start_median_s"]),
                    ms(r["start_max_s"]),
                    f"{ms(r['start_mean_s'])} ± {ms(r['start_stdev_s'])}" if r["start_mean_s"] else "–",
                ]
                for r in rs
            ],
        ),
        "## Peak memory (RSS)",
        _md_table(
            ["form", "median", "min", "max"],
            [
                [r["form"]]
                + [
                    human(r[k]) if r[k] is not None else "–"
                    for k in ("peak_rss_median_bytes", "peak_rss_min_bytes", "peak_rss_max_bytes")
                ]
                for r in rs
            ],
        ),
        "## Numerics against eager PyTorch",
        _md_table(
            ["form", "max abs diff", "max rel diff", "worst", "tolerance", "verdict"],
            [
                [
                    r["form"],
                    f"{r['max_abs_diff']:.3g}" if r["max_abs_diff"] is not None else "–",
                    f"{r['max_rel_diff']:.3g}" if r["max_rel_diff"] is not None else "–",
                    str(r["worst"]) if r["max_abs_diff"] else "–",
                    r["tolerance"] or "–",
                    _verdict(r),
                ]
                for r in rs
            ],
        ),
        *_variants_section(rs),
        "## Stages (medians)",
        _md_table(
            [
                "form",
                "import",
                "load",
                "first forward",
                "steady forward",
                "modules added by load",
                "of them torch's",
            ],
            [
                [r["form"]]
                + [
                    _stage_ms(r["stages_ms"], k)
                    for k in ("import", "load", "first_forward", "steady_forward")
                ]
                + [
                    f"{r['modules_added_total']}: " + _top(r["modules_added"], 5)
                    if r["modules_added_total"]
                    else "–",
                    _top(r["modules_added_torch"], 3),
                ]
                for r in rs
                if r["stages_ms"]
            ],
        ),
    ]
    failed = [r for r in rs if r["error"]]
    if failed:
        parts += [
            "## Failures, by stage",
            _md_table(
                ["form", "status", "stage", "why", "log"],
                [[r["form"], r["status"], r["stage"] or "–", r["error"], r["log"] or "–"] for r in failed],
            ),
        ]
    if _is_a1(manifest, ws):
        parts += _page_section(ws, store, manifest)
    parts += choose_section(ws, _is_a1(manifest, ws))
    parts += serve_section(ws)
    return "\n\n".join(parts + (scale_section(ws) if scale else [])) + "\n"


def serve_section(ws: Workspace) -> list[str]:
    """The model's serving cells (`bench --batch … --threads …`, artifacts/<model>/serve.json),
    when there are some: the cells, the sizes each form accepts, the charts."""
    from deploytui.core import plot
    from deploytui.scenarios.serving import store as serve_store
    from deploytui.scenarios.serving import text as serve_text

    cells = serve_store.load(ws).forms
    if not cells:
        return []
    parts = [
        "## Serving: latency percentiles and throughput per batch size and thread count",
        "One fresh run per cell: W warm-up then K timed forwards, each timed alone; items/s = batch / "
        "mean forward; busy = the process's CPU time / wall time over the timed forwards. At a batch "
        "size the inputs are the example's first item repeated along dim 0 and the form runs on its "
        "dynamic-batch export where it has one.",
        _md_table(
            serve_text.COLUMNS, [[scrub(c).replace("|", "\\|") for c in r] for _, r in serve_text.rows(cells)]
        ),
    ]
    sizes = serve_text.accepted(cells)
    if sizes:
        parts.append(
            _md_table(
                ["form", "ran at batch", "refused batch"],
                [
                    [f, ", ".join(map(str, yes)) or "–", ", ".join(map(str, no)) or "–"]
                    for f, (yes, no) in sizes.items()
                ],
            )
        )
    if serve_text.chart_lines(cells, "p50"):
        for measure, title in serve_text.CHARTS:
            parts.append(f"```\n{plot.plain(serve_text.chart(cells, measure, title)(100, 20))}\n```")
        parts.append(f"`{serve_text.legend(cells)}`")
    return parts


def scale_section(ws: Workspace) -> list[str]:
    """The mlp sweep (artifacts/sweep.json), when there is one: the fit, the measured grids, the
    winners per size, the failed points and the two log-log charts as text."""
    from deploytui.core import plot
    from deploytui.scenarios.sweep import store as sweep_store
    from deploytui.scenarios.sweep import text as scale_text

    points = sweep_store.load(ws.sweep_path).ordered()
    if not points:
        return []
    keys = [f.key for f in registry.FORMS]
    parts = [
        f"## Scale: the mlp family from {scale_text.params_text(points[0].params)} "
        f"to {scale_text.params_text(points[-1].params)} parameters",
        "Per form, least squares over the sizes it ran at: cost = fixed + per-Mparam × parameters/10⁶ "
        "(R² shown); copies = (peak RSS at the largest size − at the smallest) ÷ the weights' bytes; "
        "x-over = the size where the per-parameter part equals the fixed part (start-up, peak RSS).",
        _md_table(*scale_text.fit_rows(points, keys)),
        "### Start-up (median) per size",
        _md_table(*scale_text.grid_rows(points, keys, "startup")),
        "### Peak RSS (median) per size",
        _md_table(*scale_text.grid_rows(points, keys, "rss")),
        "### Build per size: seconds of its model steps / peak memory of the build / ship size",
        _md_table(*scale_text.build_rows(points, keys)),
        "### Winners per size (measured)",
        _md_table(*scale_text.winner_rows(points, keys)),
    ]
    fails = scale_text.failure_lines(points, keys)
    if fails:
        parts += ["### Failed points", "\n".join(f"- {scrub(line)}" for line in fails)]
    for measure, title in scale_text.CHARTS:
        chart = plot.plain(scale_text.chart(points, keys, measure, title)(100, 24))
        parts.append(f"```\n{chart}\n{scale_text.legend(points, keys, measure)}\n```")
    return parts


def _weights_intro(rs: list[dict[str, Any]]) -> str:
    unique = next((r["unique_param_bytes"] for r in rs if r["unique_param_bytes"]), None)
    base = human(unique) if unique else "not recorded (run deploytui build)"
    return (
        f"The model's parameters and buffers take {base}, each storage counted once (a tied matrix "
        "once). Each form ships its weights in its model files (graph or code included; a form "
        "without model files keeps them in its program or reads a baked path: not counted); the "
        "ratio says how many times the unique bytes that is — about 2× on a model whose tied "
        "matrix is most of its bytes is that matrix shipped twice."
    )


def _bundle(r: dict[str, Any]) -> str:
    if r["bundle_compressed_bytes"] is None:
        return "–"
    venv = f" + venv {human(r['bundle_venv_bytes'])} made on the target" if r["bundle_venv_bytes"] else ""
    return human(r["bundle_compressed_bytes"]) + venv


def _isolated(r: dict[str, Any]) -> str:
    if r["isolated"] is None:
        return "–"
    if r["isolated"]:
        start, rss = r["isolated_start_median_s"], r["isolated_peak_rss_bytes"]
        return f"✓ ({ms(start)}, {human(rss)})" if start is not None and rss is not None else "✓"
    return f"✗ {r['isolated_reason']}"


# ---- How to choose: the page's three situations, answered from this model's figures -------------


def choose_section(ws: Workspace, beside_page: bool) -> list[str]:
    """The page's "how to choose" for this model: each situation as `deploytui choose` answers it
    from the stored figures (the forms that qualify, ranked by start-up, with their figures; or
    what is not measured yet), then the Pareto chart of every form; for a1, the page's own
    recommendation and claims beside ours."""
    ref = ws.model
    facts, _dropped = choose_facts.read(ws)
    by_key = choose.by_key(facts)
    parts = [
        "## How to choose",
        "The page deploytui started from ends with three recommendations (怎么选), worked out "
        "by hand for A1 on another machine. Here each situation is answered from what is stored "
        "for this model on this machine, as `deploytui choose` answers it: the forms that meet "
        "its constraints, ranked by start-up, with their figures; ship = model files + program + "
        "runtime. A figure not measured yet is named, never guessed.",
    ]
    advice = {a.situation: a for a in registry.ADVICE}
    for situation in choose.SITUATIONS:
        answer = choose.choose(facts, situation.request(), ref.text)
        parts += [
            f"### {situation.title}",
            f"`deploytui choose --model {ref.text} {situation.flags()}`",
            "\n".join(f"- {scrub(line)}" for line in choose.situation_lines(answer)),
        ]
        if answer.chosen:
            parts.append(
                _md_table(
                    ["#", "form", *(f.label for f in choose.SHOWN)],
                    [
                        [str(v.rank), v.form.key]
                        + [scrub(choose.figure_text(f, v.form, answer.request, True)) for f in choose.SHOWN]
                        for v in answer.chosen
                    ],
                )
            )
        if beside_page and situation.key in advice:
            parts += _beside_page(advice[situation.key], answer, by_key)
    everything = choose.choose(facts, choose.Request(), ref.text)
    draw = choose_text.chart(everything)
    if draw is not None:
        parts.append(f"```\n{plot.plain(draw(100, 22))}\n{choose_text.legend(everything)}\n```")
    return parts


def how_to_choose(ws: Workspace) -> dict[str, Any]:
    """Each situation's answer as `deploytui choose --json` gives it."""
    ref = ws.model
    facts, _dropped = choose_facts.read(ws)
    return {
        s.key: _scrubbed(choose.choose(facts, s.request(), ref.text).to_json()) for s in choose.SITUATIONS
    }


def _scrubbed(value: Any) -> Any:
    """Every string inside `value` (dicts and lists walked) through `scrub`."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {k: _scrubbed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v) for v in value]
    return value


def _beside_page(advice: a1_page.Advice, answer: choose.Answer, by_key: dict[str, Any]) -> list[str]:
    judged = [choose.pick_verdict(advice.forms, answer)] + [
        choose.judge(c, by_key) for c in registry.CLAIMS if c.situation == advice.situation
    ]
    return [
        f"The page ({a1_page.MACHINE}): {advice.says} ({advice.original})",
        _md_table(
            ["the page says", "the page", "ours", "verdict"],
            [[j.text, j.page, scrub(j.ours), j.verdict] for j in judged],
        ),
    ]


# ---- A1 beside the reference page -----------------------------------------------------------
NOT_MEASURED = "not measured yet"


def _is_a1(manifest: Manifest, ws: Workspace) -> bool:
    return (manifest.model or ws.model.text) == "a1"


def page_rows(ws: Workspace, store: Store, manifest: Manifest) -> list[dict[str, str]]:
    """Each of the reference page's A1 figures (`a1_page`) with ours beside it, from the store
    and the manifest only; a figure of ours not measured yet says so and how to get it."""
    return [
        {
            "topic": f.topic,
            "form": f.form,
            "figure": f.what,
            "page": f.page,
            "ours": _ours(f, store, manifest, ws),
        }
        for f in registry.FIGURES
    ]


def _ours(fig: a1_page.Figure, store: Store, manifest: Manifest, ws: Workspace) -> str:
    kind, _, arg = fig.ours.partition(":")
    form = registry.get(fig.form)
    if kind == "file":
        art = manifest.artifacts.get(arg)
        return _bytes(art.size) if art else f"{NOT_MEASURED}: not built (run deploytui build)"
    if kind == "runtime":
        got = runtime_fields(form, manifest, ws)
        return human(got["runtime_bytes"]) if got["runtime_bytes"] is not None else got["runtime_note"]
    if kind == "aoti":
        facts, why = runtime_facts(form, ws, manifest)
        objects = (facts or {}).get("aoti_objects") or []
        if not objects:
            return scrub(why) or f"{NOT_MEASURED}: the build's probe stored no AOTInductor object"
        value = objects[0].get(arg)
        return _bytes(value) if arg == "bytes" and isinstance(value, int) else str(value)
    if kind == "relocation":
        return _relocation(fig.form, store, manifest, ws)
    rec = store.forms.get(fig.form)
    if rec is None or not rec.measured:
        why = f" (last run {rec.status}: {scrub(rec.error or '')})" if rec is not None else ""
        return f"{NOT_MEASURED}{why}: run deploytui bench {fig.form}"
    if kind == "start":
        return f"{ms(median(rec.wall_s))} ({ms(min(rec.wall_s))})"
    if kind == "rss":
        return human(median(rec.peak_rss_bytes) or 0)
    if kind == "diff":
        return "–" if rec.max_abs_diff is None else f"{rec.max_abs_diff:.3g}"
    if kind == "stage":
        v = (rec.stages_ms or {}).get(arg)
        return f"{v:.2f} ms" if isinstance(v, (int, float)) else f"{NOT_MEASURED}: no {arg} stage stored"
    if kind == "modules":
        found = rec.modules_added_total if not arg else (rec.modules_added or {}).get(arg)
    else:  # "torch": one of torch's own subpackages
        found = (rec.modules_added_torch or {}).get(arg)
    return str(found) if found is not None else f"{NOT_MEASURED}: no module census stored"


def _bytes(n: int) -> str:
    """`5 507 B`, as the page writes sizes, with binary units beside from 1 KiB."""
    text = f"{n:,} B".replace(",", " ")
    return text if n < 1024 else f"{text} ({human(n)})"


def _relocation(key: str, store: Store, manifest: Manifest, ws: Workspace) -> str:
    """The stored run of `key` (burn-onnx's File form) when it panicked for its .bpk; else where
    its generated Model::default() looks for the .bpk (the build's copy of the generated code)."""
    rec = store.forms.get(key)
    if rec is not None and "Failed to load burnpack file" in (rec.error or ""):
        return scrub(rec.error or "")
    code = "a1/onnx/a1.rs"
    path = ws.artifacts / code
    found = re.search(r'Self::from_file\(\s*"([^"]+)"', path.read_text()) if path.is_file() else None
    if code not in manifest.artifacts or found is None:
        return f"{NOT_MEASURED}: {key} not built (run deploytui build)"
    ran = f"its stored run: {rec.status}" if rec is not None else "no stored run"
    return (
        f"{ran}, its .bpk in place; the generated Model::default() reads {scrub(found.group(1))}, "
        "a build-dir path: moved, it panics the same way (tests/test_faults.py)"
    )


def _page_section(ws: Workspace, store: Store, manifest: Manifest) -> list[str]:
    rows_ = page_rows(ws, store, manifest)
    parts = [
        "## A1 beside the reference page",
        f"The page's figures (`deploytui.spec.a1_page`) were taken on another machine ({a1_page.MACHINE}) "
        "with its own methods (start-up: 20 runs after one warm-up, the machine under other load; "
        "peak RSS: `/usr/bin/time -l`). Ours are this machine's, read from the stored results and "
        "the build's manifest; a figure not measured yet says so.",
    ]
    for topic in dict.fromkeys(r["topic"] for r in rows_):
        parts += [
            f"### {topic[0].upper()}{topic[1:]}",
            _md_table(
                ["form", "figure", "reference page", "ours"],
                [[r["form"], r["figure"], r["page"], r["ours"]] for r in rows_ if r["topic"] == topic],
            ),
        ]
    return parts


def _stage_ms(stages: dict[str, Any], key: str) -> str:
    v = stages.get(key)
    return f"{v:.2f} ms" if isinstance(v, (int, float)) else "–"


def _top(counts: dict[str, Any] | None, n: int) -> str:
    return ", ".join(f"{k} {v}" for k, v in list((counts or {}).items())[:n]) or "–"


def as_json(ws: Workspace, store: Store, manifest: Manifest) -> str:
    return json.dumps(
        {
            "generated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "machine": machine.info(),
            "tools": manifest.tools,
            "method": METHOD,
            "forms": rows(ws, store, manifest),
            **({"reference_page": page_rows(ws, store, manifest)} if _is_a1(manifest, ws) else {}),
            "how_to_choose": how_to_choose(ws),
        },
        indent=1,
    )


def as_csv(ws: Workspace, store: Store, manifest: Manifest) -> str:
    rs = rows(ws, store, manifest)
    buf = io.StringIO()
    cols = [
        k
        for k in (rs[0].keys() if rs else ["form"])
        if k
        not in ("stages_ms", "modules_added", "modules_added_torch", "runtime_parts", "accuracy", "vs_parent")
    ]
    cols = [c for c in cols if c != "stage_status"]
    stage_cols = ["import_ms", "load_ms", "first_forward_ms", "steady_forward_ms"]
    ratio_cols = [f"{k}_vs_parent" for k in variants.RATIOS]
    w = csv.DictWriter(buf, fieldnames=[*cols, *stage_cols, *ratio_cols], extrasaction="ignore")
    w.writeheader()
    for r in rs:
        st = r["stages_ms"] or {}
        vs = r["vs_parent"] or {}
        w.writerow(
            {
                **r,
                **{c: st.get(c.removesuffix("_ms")) for c in stage_cols},
                **{f"{k}_vs_parent": vs.get(k) for k in variants.RATIOS},
            }
        )
    return buf.getvalue()


RENDER = {"md": markdown, "json": as_json, "csv": as_csv}


def write_report(
    ws: Workspace, store: Store, manifest: Manifest, fmt: str = "md", path: Path | None = None
) -> Path:
    """The report of the workspace's model; by default into reports/ in the checkout (or the user's
    data folder, `workspace.data_dir`)."""
    if fmt not in RENDER:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    name = f"deploytui-report-{time.strftime('%Y%m%d-%H%M%S')}.{fmt}"
    path = path or data_dir() / "reports" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(RENDER[fmt](ws, store, manifest))
    return path


GENERATED = "<!-- written by `deploytui report --results DIR` from the stored results: do not edit -->"


def _cell(rec: Any) -> str:
    """One (model, form) of the matrix: ✓, n/a, or the stage that stopped it and the tool's words."""
    if rec is None:
        return "–"
    if rec.status == "not-applicable":
        return "n/a"
    if rec.status == "ok" and rec.accuracy is not None and rec.accuracy.within_budget:
        cos = min((o.cosine for o in rec.accuracy.outputs), default=1.0)
        return f"✓ cos {cos:.4f}"  # a variant: within its accuracy budget
    if rec.status == "ok" and rec.within_tol and rec.accuracy is None:
        return "✓"
    words = scrub(rec.error or rec.status)
    words = words.rsplit("error: ", 1)[-1].replace("|", "\\|").replace("\n", " ")  # the tool's own words
    words = words if len(words) <= 60 else words[:59] + "…"
    return f"✗ {rec.stage or rec.status}: `{words}`"


Sizes = dict[str, tuple[list[int], list[int]]]  # form -> batch sizes it ran at, refused (serve_text)


def _sizes(form: str, sizes: Sizes | None) -> str:
    """` · batch ✓ 1, 8 ✗ 32` where `bench --batch` ran the form (nothing where it did not)."""
    if not sizes or form not in sizes:
        return ""
    yes, no = sizes[form]
    return (
        " · batch"
        + (f" ✓ {', '.join(map(str, yes))}" if yes else "")
        + (f" ✗ {', '.join(map(str, no))}" if no else "")
    )


def matrix(stores: dict[str, Store], sizes: dict[str, Sizes] | None = None) -> str:
    """Every model measured here through every form (model text -> its store), with the batch
    sizes each form ran at and refused where `bench --batch` measured it (model text -> sizes)."""
    sizes = sizes or {}
    header = ["form", *(f"`{scrub(text)}`" for text in stores)]
    body = [
        [
            f.key,
            *(
                _cell(store.forms.get(f.key)) + _sizes(f.key, sizes.get(text))
                for text, store in stores.items()
            ),
        ]
        for f in registry.FORMS
    ]
    return (
        "\n\n".join(
            [
                GENERATED,
                "# Every model through every form, as measured here",
                "✓ = built, ran and matched eager within the model's tolerance; otherwise the stage that "
                "stopped it and the tool's decisive line; n/a = the form cannot exist for the model "
                "(the hand-written burn forms need the Mlp layout); – = not measured. `batch ✓ 1, 8 ✗ 64`: "
                "the batch sizes `bench --batch` ran the form at (on its dynamic-batch export where it "
                "has one) and those it refused. Each model's own figures are in its file beside this one.",
                _md_table(header, body),
            ]
        )
        + "\n"
    )


def write_results(folder: Path, base: Workspace) -> list[Path]:
    """The measured results of every model built under `base`'s artifacts folder, as docs:
    `<slug>.md` per model with stored results (the report without the sweep), `matrix.md` (every
    model through every form) and `scale.md` (the sweep, when there is one). Files of other
    writers in `folder` are left alone."""
    from deploytui.core.modelref import parse
    from deploytui.scenarios.startup import results
    from deploytui.spec import manifest as manifest_file

    folder.mkdir(parents=True, exist_ok=True)
    from deploytui.scenarios.serving import store as serve_store
    from deploytui.scenarios.serving import text as serve_text

    written: list[Path] = []
    stores: dict[str, Store] = {}
    sizes: dict[str, Sizes] = {}
    for text, slug in manifest_file.built_models(base.artifacts).items():
        ws = base.for_model(parse(text))
        store = results.load(ws.results_path)
        if not store.forms:
            continue
        stores[text] = store
        sizes[text] = serve_text.accepted(serve_store.load(ws).forms)
        page = GENERATED + "\n\n" + markdown(ws, store, manifest_file.load(ws), scale=False)
        written.append(_write(folder / f"{slug}.md", page))
    if stores:
        written.append(_write(folder / "matrix.md", matrix(stores, sizes)))
    scale = scale_section(base)
    if scale:
        written.append(_write(folder / "scale.md", "\n\n".join([GENERATED, *scale]) + "\n"))
    return written


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
