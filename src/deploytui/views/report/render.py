"""The report's writers: markdown, JSON and CSV of one model, and `write_report`."""

from __future__ import annotations

import csv
import io
import json
import time
from pathlib import Path

from deploytui.core import machine
from deploytui.core.units import human, ms
from deploytui.core.workspace import Workspace, data_dir
from deploytui.scenarios.accuracy import variants
from deploytui.scenarios.startup.results import ResultsStore as Store
from deploytui.spec.manifest import Manifest
from deploytui.views.report.a1page import _is_a1, _page_section, page_rows
from deploytui.views.report.choosing import choose_section, how_to_choose
from deploytui.views.report.common import _md_table, scrub
from deploytui.views.report.fields import rows
from deploytui.views.report.serving import serve_section
from deploytui.views.report.sweep import scale_section
from deploytui.views.report.tables import (
    _bundle,
    _isolated,
    _stage_ms,
    _task_section,
    _top,
    _variants_section,
    _verdict,
    _weights_intro,
)
from deploytui.views.report.targets import targets_json, targets_section

FORMATS = ("md", "json", "csv")
TASK_CSV = (
    "value",
    "eager",
    "drop",
    "drop_low",
    "drop_high",
    "rows",
    "data",
    "fingerprint",
)  # task_* columns
METHOD = (
    "Each form runs in a fresh process through a small compiled launcher (posix_spawn, wait4): "
    "wall time is spawn to reaped exit; peak RSS is the child's own ru_maxrss. "
    "Warm-up runs are not counted. Logits are compared as f32 with eager PyTorch."
)


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
        *_task_section(rs),
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
    parts += targets_section(ws)
    return "\n\n".join(parts + (scale_section(ws) if scale else [])) + "\n"


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
            **({"targets": found} if (found := targets_json(ws)) else {}),
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
        not in (
            "stages_ms",
            "modules_added",
            "modules_added_torch",
            "runtime_parts",
            "accuracy",
            "vs_parent",
            "task",
        )
    ]
    cols = [c for c in cols if c != "stage_status"]
    stage_cols = ["import_ms", "load_ms", "first_forward_ms", "steady_forward_ms"]
    ratio_cols = [f"{k}_vs_parent" for k in variants.RATIOS]
    task_cols = [f"task_{k}" for k in TASK_CSV]
    w = csv.DictWriter(buf, fieldnames=[*cols, *stage_cols, *ratio_cols, *task_cols], extrasaction="ignore")
    w.writeheader()
    for r in rs:
        st = r["stages_ms"] or {}
        vs = r["vs_parent"] or {}
        w.writerow(
            {
                **r,
                **{c: st.get(c.removesuffix("_ms")) for c in stage_cols},
                **{f"{k}_vs_parent": vs.get(k) for k in variants.RATIOS},
                **{f"task_{k}": (r["task"] or {}).get(k) for k in TASK_CSV},
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
