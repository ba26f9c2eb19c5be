"""The full default sweep (`deploytui sweep`: 7 mlp sizes, 10² to 2·10⁸ parameters, every form) and
its figures as ratios against a reference measured in the same run: at every size, `cat` of the
model's weights file (its safetensors) to /dev/null, through the same measuring core, i.e. what
merely reading the weights costs on this machine now. Per form: the fitted fixed start-up and
per-Mparam start-up each divided by the reference's, and the weight-copy ratio (already relative:
peak RSS growth ÷ weight bytes). Incremental like the sweep: sizes already measured are not run
again (pass --force through to measure them again).

    .venv/bin/python bench/scale_sweep.py [--sizes 1e2,1e4] [--forms F1,F2] [-n N] [--force] [--skip-sweep]
                                          [--quick]

Prints the sweep's output, then one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

from deploytui.core.measure import measure
from deploytui.core.workspace import Workspace
from deploytui.families import registry
from deploytui.scenarios.sweep import fit, sweep
from deploytui.scenarios.sweep import store as sweep_store


def reference(point: sweep_store.Point, base: Workspace) -> float | None:
    """Median wall time of `cat` of the point's weights file (seconds), or None if not built."""
    weights = base.artifacts / point.slug / f"{point.slug}.safetensors"
    if not weights.is_file():
        return None
    # measure() keeps a child's stdout in memory: cat must write to /dev/null itself, or
    # reading a 1 GB weights file six times holds ~18 GB in this process (killed twice by OOM).
    argv = ["sh", "-c", 'exec cat "$1" > /dev/null', "sh", str(weights)]
    m = measure(argv, n=5, warmup=1, timeout_s=120)
    return statistics.median(m.summary()["wall_s"]) if m.ok else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes")
    ap.add_argument("--forms", help="form keys, comma-separated (default: every form)")
    ap.add_argument("-n", type=int, help="counted runs per form and size (the sweep's default)")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--skip-sweep", action="store_true", help="use the stored points only")
    ap.add_argument("--quick", action="store_true", help="2 small sizes, the first form, 2 runs (the tests')")
    args = ap.parse_args()
    base = Workspace.from_env()  # DEPLOYTUI_ARTIFACTS or the default folder, handed to the sweep
    if args.quick:
        first = registry.FORMS[0].key  # torch-eager: the export-model step only
        args.sizes, args.forms, args.n = args.sizes or "1e2,1e3", args.forms or first, args.n or 2
    if not args.skip_sweep:
        cmd = [sys.executable, "-m", "deploytui", "sweep", "--artifacts", str(base.artifacts)]
        cmd += ["--sizes", args.sizes] if args.sizes else []
        cmd += ["--forms", args.forms] if args.forms else []
        cmd += ["-n", str(args.n)] if args.n else []
        cmd += ["--force"] if args.force else []
        subprocess.run(cmd, check=False)
    points = sweep_store.load(base.sweep_path).ordered()
    if args.sizes:
        wanted = {r.text for r in sweep.parse_sizes(args.sizes)}
        points = [p for p in points if p.model in wanted]
    refs = [(p.params / 1e6, r) for p in points if (r := reference(p, base)) is not None]
    ref_line = fit.least_squares([x for x, _ in refs], [y for _, y in refs])
    out: dict[str, object] = {
        "sizes": [p.params for p in points],
        "reference": "cat <weights>.safetensors > /dev/null",
        "reference_startup_s": {str(int(x * 1e6)): y for x, y in refs},
        "reference_fit": None
        if ref_line is None
        else {"fixed_s": ref_line.fixed, "per_mparam_s": ref_line.per_mparam},
        "forms": {},
    }
    keys = args.forms.split(",") if args.forms else [k.key for k in registry.FORMS]
    for f in fit.fit_all(points, keys):
        line = f.lines["startup"]
        rss = f.lines["rss"]
        out["forms"][f.form] = {  # type: ignore[index]
            "ran": f"{f.points}/{len(points)}",
            "startup_fixed_s": line.fixed if line else None,
            "startup_per_mparam_s": line.per_mparam if line else None,
            "startup_fixed_vs_reference": (line.fixed / ref_line.fixed)
            if line and ref_line and ref_line.fixed > 0
            else None,
            "startup_per_mparam_vs_reference": (
                line.per_mparam / ref_line.per_mparam
                if line and ref_line and ref_line.per_mparam > 0
                else None
            ),
            "rss_fixed_bytes": rss.fixed if rss else None,
            "rss_per_mparam_bytes": rss.per_mparam if rss else None,
            "weight_copy_ratio": f.copy_ratio,
            "failures": [f"{p}: {why}" for p, why in f.failures],
        }
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
