"""Check the measuring core against hyperfine -N (start-up) and GNU time -f %M (peak RSS).

usage: .venv/bin/python bench/measure_vs_hyperfine.py [FORM ...] [-n N]

For each form (default: onnxruntime and burn-embed, when built) it measures the same command
three ways in the same run and prints the ratios. Targets: start-up median within ±10 % of
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

from deploytui import bench, forms
from deploytui.measure import measure


def hyperfine_median(argv: list[str], n: int, env: dict) -> tuple[float, float]:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run(["hyperfine", "-N", "--style", "none", "--warmup", "1", "--runs", str(n),
                        "--export-json", out.name, " ".join(argv)], check=True, env=env,
                       stdout=subprocess.DEVNULL)
        r = json.load(open(out.name))["results"][0]
    return r["median"], r["min"]


def gnu_time_rss(argv: list[str], n: int, env: dict) -> float:
    kib = []
    for _ in range(n):
        res = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], env=env, capture_output=True, text=True)
        kib.append(int(res.stderr.strip().splitlines()[-1]))
    return statistics.median(kib) * 1024


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("forms", nargs="*", default=["onnxruntime", "burn-embed"])
    p.add_argument("-n", type=int, default=20)
    args = p.parse_args()
    missing = [t for t in ("hyperfine", "/usr/bin/time") if not shutil.which(t)]
    if missing:
        print(f"needs {', '.join(missing)} (Debian: apt-get install hyperfine time)", file=sys.stderr)
        return 2
    env = bench.runner_env()
    print(f"{'form':<16} {'core median':>12} {'hyperfine':>12} {'ratio':>7}   {'core RSS':>10} "
          f"{'GNU time':>10} {'ratio':>7}")
    ok = True
    for key in args.forms:
        form = forms.get(key)
        why = bench.availability(form)
        if why:
            print(f"{key:<16} skipped: {why}")
            continue
        argv = form.command()
        m = measure(argv, n=args.n, warmup=1, env=env, timeout_s=300)
        if not m.ok:
            print(f"{key:<16} failed: {m.error}")
            ok = False
            continue
        hf_median, _ = hyperfine_median(argv, args.n, env)
        rss_time = gnu_time_rss(argv, min(args.n, 5), env)
        t_ratio = m.wall.median / hf_median
        r_ratio = m.rss.median / rss_time
        within = abs(t_ratio - 1) <= 0.10 and abs(r_ratio - 1) <= 0.05
        ok &= within
        print(f"{key:<16} {m.wall.median * 1000:10.2f}ms {hf_median * 1000:10.2f}ms {t_ratio:7.3f}   "
              f"{m.rss.median / 2**20:8.1f}Mi {rss_time / 2**20:8.1f}Mi {r_ratio:7.3f}  "
              f"{'within target' if within else 'OUTSIDE target'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
