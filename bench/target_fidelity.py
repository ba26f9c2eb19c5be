"""The SSH path must add nothing to the figures: each form's bundle measured on an SSH target on
127.0.0.1 (the test suite's sshd, tests/sshd_support.py: the target sees only /usr and its home)
and, in the same run, in that target's own sandbox without the SSH hop (the same launcher and
run script, started by a local shell as that user with a session's environment, in a session of
its own as an ssh login is: with the kernel's autogroup on, a session is a scheduling group).
Start-up and peak RSS as ratios ssh/direct. (Against this machine's own runs the target differs for its own
reasons: a1's cpp-torchscript peaks at 173 MiB as root here, 150 MiB as uid 1000, 128 MiB in
that sandbox.)

usage: .venv/bin/python bench/target_fidelity.py [--model a1] [--rounds R] [-n N] [--round-s S]
       [--max-rounds M] [--core C] [FORM ...]
(the model built first; default forms: every fp32 form that needs no Python there)

Made to hold from run to run, as hyperfine and pyperf would (bench/support/rounds.py): the two
sides take turns in alternating order (ABBA…), each round N fresh runs a side — at least N, and
as many as fill --round-s seconds by the form's start-up measured first (a 7 ms program gets ~140
runs a round, not 10 whose median one busy moment moves) — their medians and one ratio per round;
the measured program is pinned to one core (`taskset -c CORE`, the same on both sides; the
bench, the sshd it starts, the ssh clients and the direct side's shell keep to the other cores:
they run beside it, not on it); the verdict is the median of the per-round ratios, with their
spread, and the medians of the first and the second half of the rounds, which must agree within
the target for the verdict to count as stable. A form whose halves disagree after --rounds gets
four rounds more at a time, up to --max-rounds (the ~500 ms libtorch programs and OpenVINO's
threads vary ±10 % from round to round: 8 rounds of them did not always settle). Targets:
start-up within ±5 %, peak RSS within ±2 %. Prints a line per form (with the rounds it took) and
a JSON object last; exits 1 when a verdict misses its target or is not stable.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from deploytui.core import defaults
from deploytui.core.measure import Measurement, launcher_path
from deploytui.core.modelref import parse
from deploytui.core.workspace import Workspace
from deploytui.families import registry
from deploytui.launchers import ssh
from deploytui.launchers.ssh import Destination, SshLauncher
from deploytui.scenarios.isolated import shipping
from deploytui.spec.manifest import load as load_manifest
from deploytui.spec.manifest import runtime_facts
from sshd_support import Sshd
from support.rounds import RoundFailed, run, verdict

TARGETS = {"startup": 0.05, "rss": 0.02}
MAX_N = 200  # runs a side per round, at most
# the forms that need no Python on the target, fp32 (their int8 twins run the same programs)
FORMS = [f.key for f in registry.FORMS if not f.needs_python and not f.variant]


def medians(m: Measurement) -> tuple[float, float] | None:
    if not m.runs or not all(s.ok for s in m.runs):
        return None
    return statistics.median(s.wall_s for s in m.runs), statistics.median(s.peak_rss_bytes for s in m.runs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("forms", nargs="*", default=FORMS)
    ap.add_argument("--model", default="a1")
    ap.add_argument("--rounds", type=int, default=8, help="rounds at least")
    ap.add_argument("--max-rounds", type=int, default=32, help="at most, while not stable")
    ap.add_argument("-n", type=int, default=10, help="runs a side per round, at least")
    ap.add_argument(
        "--round-s", type=float, default=1.0, help="a side's runs per round fill this many seconds"
    )
    ap.add_argument(
        "--core", type=int, default=(os.cpu_count() or 1) - 1, help="the core the measured program runs on"
    )
    ap.add_argument("--quick", action="store_true", help="2 rounds of 3 runs a side, 2 smallest runtimes")
    args = ap.parse_args()
    ws = Workspace.from_env(parse(args.model))
    if args.quick:  # the two forms whose bundles carry the least runtime (probed by the build)
        view = load_manifest(ws)
        sized = []
        for key in args.forms:
            facts, _why = runtime_facts(registry.get(key), ws, view)
            if facts is not None and facts.get("runtime_bytes") is not None:
                sized.append((facts["runtime_bytes"], key))
        args.rounds, args.max_rounds, args.n, args.forms = 2, 2, 3, [key for _, key in sorted(sized)[:2]]
        args.round_s = 0.0  # 3 runs a round, not as many as fill a second
    # everything but the measured program (this process, the sshd it starts, the ssh clients, the
    # direct side's shell: they inherit it) keeps off its core; `taskset -c CORE` moves the program
    others = set(os.sched_getaffinity(0)) - {args.core}
    if others:
        os.sched_setaffinity(0, others)
    load_before = os.getloadavg()
    result: dict[str, Any] = {"model": args.model, "rounds": args.rounds, "n": args.n, "forms": {}}
    print(
        f"{args.model}: {args.rounds} rounds of {args.n} runs a side on a target on 127.0.0.1, over "
        f"ssh and directly; load average {load_before[0]:.2f} on {os.cpu_count()} cores",
        flush=True,
    )
    missed = False
    with tempfile.TemporaryDirectory() as tmp:
        server = Sshd(Path(tmp) / "sshd").start()
        try:
            dest = Destination("box", config=str(server.config))
            ssh.run(dest, "true", accept_new=True)
            root = ssh.home(dest)
            remote_launcher = f"{root}/bin/{launcher_path().name}"
            ssh.send_file(dest, launcher_path(), remote_launcher, mode="755")
            for key in args.forms:
                form = registry.get(key)
                local = Path(tmp) / "bundles" / key
                try:
                    made = shipping.make(form, local, ws=ws)
                except Exception as e:  # not built here, not bundlable: said, the others go on
                    print(f"{key:<20} skipped: {e}", flush=True)
                    continue
                if made.manifest.get("requirements"):
                    print(f"{key:<20} skipped: a Python bundle (its venv differs here and there)")
                    continue
                folder = f"{root}/bundles/{key}"
                ssh.send_tree(dest, local, folder, exclude=("check", "venv"))
                there = SshLauncher(dest, "box", remote_launcher, folder)
                argv = ["taskset", "-c", str(args.core), "./run", "outputs.safetensors", str(defaults.REPEAT)]
                # a session of its own, as sshd gives each login: the kernel's autogroup then treats
                # both sides alike (openvino-native read 4-10 % slower over ssh without it)
                direct = (*server.shell_argv(), "setsid", "-w")
                here = SshLauncher(dest, "box", remote_launcher, folder, via=direct)
                probe = here.measure(argv, n=3, warmup=1, timeout_s=120)
                first = medians(probe)
                if first is None:
                    why = next((s.error for s in probe.runs if not s.ok), "") or "no run"
                    print(f"{key:<20} a run failed here: {why.splitlines()[-1][:160]}", flush=True)
                    missed = True
                    continue
                n = max(args.n, min(MAX_N, math.ceil(args.round_s / first[0])))

                def here_side(argv: list[str] = argv, here: SshLauncher = here, n: int = n) -> Measurement:
                    return here.measure(argv, n=n, warmup=1, timeout_s=120)

                def there_side(argv: list[str] = argv, there: SshLauncher = there, n: int = n) -> Measurement:
                    return there.measure(argv, n=n, warmup=1, timeout_s=120)

                figures: dict[str, list[float]] = {
                    "here_s": [],
                    "there_s": [],
                    "here_rss": [],
                    "there_rss": [],
                }

                def one_round(
                    here_first: bool,
                    pair: tuple[Callable[[], Measurement], ...] = (here_side, there_side),
                    figures: dict[str, list[float]] = figures,
                ) -> dict[str, float]:
                    got = {f: medians(f()) for f in (pair if here_first else pair[::-1])}
                    h, t = got[pair[0]], got[pair[1]]
                    if h is None or t is None:
                        raise RoundFailed("a run failed " + ("here" if h is None else "there"))
                    for name, value in zip(figures, (h[0], t[0], h[1], t[1]), strict=True):
                        figures[name].append(value)
                    return {"startup": t[0] / h[0], "rss": t[1] / h[1]}

                try:
                    v, _ = run(one_round, args.rounds, args.max_rounds, lambda m, rs: verdict(rs, TARGETS[m]))
                except RoundFailed as e:
                    print(f"{key:<20} {e}", flush=True)
                    missed = True
                    continue
                ok = all(x.within and x.stable for x in v.values())
                missed |= not ok
                print(
                    f"{key:<20} {n:3d} runs × {v['startup'].rounds:2d} rounds, start-up "
                    f"{statistics.median(figures['here_s']) * 1000:8.2f} ms direct, ssh/direct "
                    f"{v['startup'].line()}  peak RSS {v['rss'].line()}  {'ok' if ok else 'MISSED'}",
                    flush=True,
                )
                verdicts = {m: x.as_dict() for m, x in v.items()}
                result["forms"][key] = {**verdicts, **figures, "runs_per_round": n}
        finally:
            server.stop()
    result["loadavg"] = {"before": list(load_before), "after": list(os.getloadavg()), "cores": os.cpu_count()}
    print(json.dumps(result, indent=1))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
