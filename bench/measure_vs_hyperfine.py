"""Check the measuring core against hyperfine -N (start-up) and GNU time -f %M (peak RSS).

usage: .venv/bin/python bench/measure_vs_hyperfine.py [FORM ...] [-n N] [--quick]

For each form (default: onnxruntime and burn-embed, when built) it measures the same command
three ways in the same run, the core and hyperfine taking turns in 5 rounds, and prints the
ratios of the medians. Targets: start-up median within ±10 % of
hyperfine's, peak RSS within ±5 % of GNU time's. Needs `hyperfine` (Debian: apt-get install
hyperfine) and /usr/bin/time (Debian: apt-get install time).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile

from deploytui.core import runenv
from deploytui.core.measure import measure
from deploytui.core.workspace import Workspace
from deploytui.families import registry
from deploytui.spec import manifest

ROUNDS = 5  # core and hyperfine take turns, so drift on a shared machine hits both alike


def hyperfine_times(argv: list[str], n: int, env: dict) -> list[float]:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run(
            [
                "hyperfine",
                "-N",
                "--style",
                "none",
                "--warmup",
                "1",
                "--runs",
                str(n),
                "--export-json",
                out.name,
                " ".join(argv),
            ],
            check=True,
            env=env,
            stdout=subprocess.DEVNULL,
        )
        return json.load(open(out.name))["results"][0]["times"]


def gnu_time_rss(argv: list[str], n: int, env: dict) -> float:
    kib = []
    for _ in range(n):
        res = subprocess.run(
            ["/usr/bin/time", "-f", "%M", *argv], env=env, capture_output=True, text=True, check=False
        )
        kib.append(int(res.stderr.strip().splitlines()[-1]))
    return statistics.median(kib) * 1024


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("forms", nargs="*", default=list(registry.CROSS_CHECK))
    p.add_argument("-n", type=int, default=20)
    p.add_argument("--quick", action="store_true", help="n=5: one run a round (the test suite's)")
    args = p.parse_args()
    if args.quick:
        args.n = ROUNDS
    missing = [t for t in ("hyperfine", "/usr/bin/time") if not shutil.which(t)]
    if missing:
        print(f"needs {', '.join(missing)} (Debian: apt-get install hyperfine time)", file=sys.stderr)
        return 2
    env = runenv.runner_env()
    ws = Workspace.from_env()  # a1 in DEPLOYTUI_ARTIFACTS or the default folder
    print(
        f"{'form':<16} {'core median':>12} {'hyperfine':>12} {'ratio':>7}   {'core RSS':>10} "
        f"{'GNU time':>10} {'ratio':>7}"
    )
    ok = True
    for key in args.forms:
        form = registry.get(key)
        why = manifest.availability(form, ws)
        if why:
            print(f"{key:<16} skipped: {why}")
            continue
        argv = form.command(ws)
        core_t, core_rss, hf_t = [], [], []
        per_round = max(1, args.n // ROUNDS)
        for _ in range(ROUNDS):
            m = measure(argv, n=per_round, warmup=1, env=env, timeout_s=300)
            if not m.ok:
                break
            core_t += [s.wall_s for s in m.runs]
            core_rss += [s.peak_rss_bytes for s in m.runs]
            hf_t += hyperfine_times(argv, per_round, env)
        if not m.ok:
            print(f"{key:<16} failed: {m.error}")
            ok = False
            continue
        core_median, hf_median = statistics.median(core_t), statistics.median(hf_t)
        rss_time = gnu_time_rss(argv, min(args.n, 5), env)
        t_ratio = core_median / hf_median
        r_ratio = statistics.median(core_rss) / rss_time
        within = abs(t_ratio - 1) <= 0.10 and abs(r_ratio - 1) <= 0.05
        ok &= within
        print(
            f"{key:<16} {core_median * 1000:10.2f}ms {hf_median * 1000:10.2f}ms {t_ratio:7.3f}   "
            f"{statistics.median(core_rss) / 2**20:8.1f}Mi {rss_time / 2**20:8.1f}Mi {r_ratio:7.3f}  "
            f"{'within target' if within else 'OUTSIDE target'}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
