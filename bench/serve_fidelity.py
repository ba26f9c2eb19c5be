"""Check the runners' per-forward times against the anchors, in the same run: our torch-eager
p50 against torch.utils.benchmark.Timer on the same module and input, our ONNX Runtime p50
against a plain Python loop over session.run on the same .onnx and input. One thread each.

usage: .venv/bin/python bench/serve_fidelity.py [--model REF] [--rounds R] [--max-rounds M] [--repeat K]
       [--core C] [--quick]
(the model built first: `deploytui build --model convnet`)

Made to hold on a loaded machine, as hyperfine and pyperf would: ours and the anchor take turns for
R rounds, in alternating order (ABBA…: drift and the one going first hit both alike), each round
giving both one figure (ours: one fresh runner process, bench.bench_form, W = 200 warm-up then K
forwards each timed alone, their median; the anchor: a fresh process of this script too, W warm-up
forwards, then K forwards each timed alone by the anchor, their median) and one ratio; the verdict
is the median of the per-round ratios, printed with their spread (min–max), the medians of the first
and the second half of the rounds (the verdict is stable when they agree within the target: a
verdict that flips between two runs is no verdict; while they do not, four rounds more at a time, up
to --max-rounds: bench/support/rounds.py) and the load average. Both sides run on one core, the same
one (--core, the last by default), by turns: cores differ — on this project's VMs core 0 takes every
virtio interrupt and ran a plain Python loop 1.3-1.7x slower than core 1, so ours on core 1 against
the anchor on core 0 read 14 % fast (convnet, 0.86 and 0.88). Each forward is timed alone on both
sides: a median of single forwards leaves out the ones the scheduler preempted, where the mean of a
block of forwards (Timer's blocked_autorange) grows with the load — at a load of 7 on 2 cores,
convnet's blocked figure read 4x its single-forward median.
Prints the ratios and a JSON object last; target: within ±5 %. Needs the model built.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import timeit
from collections.abc import Callable
from typing import Any

from deploytui.core.modelref import parse
from deploytui.core.workspace import Workspace
from deploytui.families import registry
from deploytui.scenarios.startup import bench
from support.rounds import run, verdict

TARGET = 0.05
# warm-up forwards before each side's timed ones, every round. More than a serving cell's
# (defaults.SERVE_WARMUP): a fresh process's first ~100 forwards of a µs-scale model run slower
# (a1 on ONNX Runtime: 4.7 µs over the first 50, 4.0 after 200; convnet 2-7 % over the first 50);
# both warm, the timing is what is compared.
WARMUP = 200


def ours(key: str, repeat: int, ws: Workspace) -> float:
    rec = bench.bench_form(
        registry.get(key), n=1, warmup=0, repeat=repeat, ws=ws, feed=bench.Load(warmup=WARMUP, threads=1)
    )
    if rec.forwards is None:
        sys.exit(f"{key}: no timed forwards ({rec.status}: {rec.error})")
    return rec.forwards.p50_ms


def torch_anchor(repeat: int, ws: Workspace) -> Callable[[], float]:
    """torch.utils.benchmark.Timer's median for one forward of the eager module, loaded as the
    eager runner loads it, in inference mode, one thread: each forward its own measurement
    (`timeit(1)`), as ours are timed."""
    import torch
    from torch.utils.benchmark import Timer

    from deploytui.models.load import load
    from deploytui.runners.torch_bundle import load_weights, read_inputs, split_inputs

    module = load_weights(load(ws.model).module, str(ws.model_dir / f"{ws.slug}.safetensors"))
    call, kwargs = split_inputs(read_inputs(str(ws.inputs_path)))
    torch.set_num_threads(1)
    # in inference mode, as the runner's forwards: one block around all the timed forwards, as the
    # runner has it. Entered in the Timer's setup instead, it was entered again before every
    # timed forward (timeit(1) runs the setup each time), and a forward right after entering
    # inference mode runs slower: convnet's read 5 % over a plain loop's in one process, 1 % with
    # the block outside (`torch.inference_mode().__enter__()` as a statement drops the guard at
    # once: autograd on, 0.75x on a1). The clock is timeit's, as torch's docs ask for CPU-only
    # code: Timer's default one asks torch.accelerator.is_available() at every reading, ~1.3 µs
    # inside each measurement on this CUDA build of torch (a1's 11.5 µs forward read 13.0)
    timer = Timer(
        "m(*call, **kwargs)",
        timer=timeit.default_timer,
        globals={"m": module, "call": call, "kwargs": kwargs},
        num_threads=1,
    )

    def measure() -> float:
        with torch.inference_mode():
            timer.timeit(WARMUP)
            return statistics.median(float(timer.timeit(1).median) * 1000 for _ in range(repeat))

    return measure


def ort_anchor(repeat: int, ws: Workspace) -> Callable[[], float]:
    """A plain loop over session.run on the model's .onnx (the session options the runner sets),
    each call timed, median."""
    import onnxruntime as ort
    from safetensors.numpy import load_file

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    session = ort.InferenceSession(
        str(ws.model_dir / f"{ws.slug}.onnx"), so, providers=["CPUExecutionProvider"]
    )
    feed = load_file(str(ws.inputs_path))

    def measure() -> float:
        for _ in range(WARMUP):
            session.run(None, feed)
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            session.run(None, feed)
            times.append((time.perf_counter() - t0) * 1000)
        return statistics.median(times)

    return measure


def pinned(core: int, side: Callable[[], float]) -> Callable[[], float]:
    """`side` run with this process (and so the runner it spawns) on `core` alone, away from the
    scheduler's moves between cores."""
    cores = set(os.sched_getaffinity(0))

    def run() -> float:
        os.sched_setaffinity(0, {core})
        try:
            return side()
        finally:
            os.sched_setaffinity(0, cores)

    return run


def fresh(anchor: int, model: str, repeat: int) -> Callable[[], float]:
    """The anchor's figure from a process of its own each round, as ours is: an anchor kept in
    one process for the whole run kept that process's luck (where its allocations and code
    landed) in every round, and torch-eager's verdict moved between runs of the bench (0.903,
    1.003, 0.909; each run's halves agreeing)."""

    def run() -> float:
        argv = [sys.executable, __file__, "--model", model, "--repeat", str(repeat), "--anchor", str(anchor)]
        out = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
        if out.returncode != 0:
            sys.exit(f"anchor {anchor} failed: {out.stderr[-1500:]}")
        return float(out.stdout.split()[-1])

    return run


def sides(key: str, anchor: int, args: argparse.Namespace, ws: Workspace) -> tuple[Callable[[], float], ...]:
    """Ours and the anchor, both on `args.core`, each a fresh process every round."""
    return pinned(args.core, lambda: ours(key, args.repeat, ws)), pinned(
        args.core, fresh(anchor, args.model, args.repeat)
    )


# the anchors, in registry.FIDELITY's order (`--anchor I` runs the I-th for one round)
ANCHORS = (torch_anchor, ort_anchor)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="default convnet (a1 with --quick: built by every build)")
    ap.add_argument("--rounds", type=int, default=8, help="rounds at least")
    ap.add_argument("--max-rounds", type=int, default=24, help="at most, while not stable")
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument(
        "--core", type=int, default=max(os.sched_getaffinity(0)), help="the core both sides run on"
    )
    ap.add_argument("--quick", action="store_true", help="4 rounds of 50 forwards")
    ap.add_argument("--anchor", type=int, choices=range(len(ANCHORS)), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.anchor is not None:
        print(ANCHORS[args.anchor](args.repeat, Workspace.from_env(parse(args.model)))())
        return 0
    if args.quick:
        args.rounds, args.max_rounds, args.repeat = 4, 4, 50
    args.model = args.model or ("a1" if args.quick else "convnet")
    ws = Workspace.from_env(parse(args.model))  # DEPLOYTUI_ARTIFACTS or the default folder
    load_before = os.getloadavg()
    result: dict[str, Any] = {"model": args.model, "rounds": args.rounds, "repeat": args.repeat}
    print(
        f"{args.model}: {args.rounds} rounds of {args.repeat} forwards each side, load average "
        f"{load_before[0]:.2f} on {os.cpu_count()} cores",
        flush=True,
    )
    missed = False
    assert len(ANCHORS) == len(registry.FIDELITY), "an anchor for each fidelity pair"
    for i, (key, anchor_name) in enumerate(registry.FIDELITY):
        mine_side, anchor_side = sides(key, i, args, ws)
        mine: list[float] = []
        theirs: list[float] = []

        def one_round(
            mine_first: bool,
            pair: tuple[Callable[[], float], ...] = (mine_side, anchor_side),
            mine: list[float] = mine,
            theirs: list[float] = theirs,
        ) -> dict[str, float]:
            got = {f: f() for f in (pair if mine_first else pair[::-1])}
            mine.append(got[pair[0]])
            theirs.append(got[pair[1]])
            return {"p50": mine[-1] / theirs[-1]}

        verdicts, ratios = run(one_round, args.rounds, args.max_rounds, lambda _m, rs: verdict(rs, TARGET))
        v = verdicts["p50"]
        missed |= not (v.within and v.stable)
        print(
            f"{key:<12} ours p50 {statistics.median(mine):.4f} ms  {anchor_name} "
            f"{statistics.median(theirs):.4f} ms  {v.line()}, {v.rounds} rounds: "
            f"{'stable' if v.stable else 'NOT stable'}; {'within' if v.within else 'outside'} ±{TARGET:.0%}",
            flush=True,
        )
        result[key] = {
            "ours_p50_ms": mine,
            "anchor": anchor_name,
            "anchor_ms": theirs,
            "round_ratios": ratios["p50"],
            **v.as_dict(),
        }
    result["loadavg"] = {"before": list(load_before), "after": list(os.getloadavg()), "cores": os.cpu_count()}
    print(json.dumps(result, indent=1))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
