"""`deploytui sweep`: every form built and measured across the sizes of the `mlp` family.

For each size (a target parameter count; `shape_for` picks the mlp's width and depth) the sweep
builds the model (the usual incremental build, each step watched: a step whose process tree grows
past the memory limit or runs past the time limit is killed and fails with that reason, a finding
like any other), then measures every form in the registry through `bench`, fewer runs where one
run of the form took seconds at the size before. The points go to one file, artifacts/sweep.json
(`SweepStore`, atomic replace after every form, checked on read like results.json): per point the
model, its parameter count (the export-model step's), the RunRecords and, from the manifest, each
form's build time and ship size. A point whose forms are all measured is not measured again
(unless `force`); an interrupted sweep resumes at the form it stopped at.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from deploytui.core import defaults
from deploytui.core.modelref import ModelRef, parse
from deploytui.core.procs import tree_rss
from deploytui.core.record import RunRecord
from deploytui.core.units import duration, human
from deploytui.core.workspace import Workspace
from deploytui.families import registry
from deploytui.scenarios.startup import results
from deploytui.scenarios.sweep.store import Point, SweepStore, load
from deploytui.spec.forms import Form
from deploytui.spec.manifest import Manifest

D_IN, D_OUT, BATCH = 16, 8, 8
LOW, HIGH, POINTS = 1e2, 2e8, 7  # ~10² to ~2·10⁸ parameters (800 MB of f32 weights)
MIN_RUNS = 2


def default_targets() -> list[float]:
    """POINTS parameter counts evenly spaced on a log scale from LOW to HIGH."""
    step = (math.log10(HIGH) - math.log10(LOW)) / (POINTS - 1)
    return [10 ** (math.log10(LOW) + i * step) for i in range(POINTS)]


def mlp_params(hidden: int, depth: int, d_in: int = D_IN, d_out: int = D_OUT) -> int:
    """Weights and biases of zoo.Mlp: d_in -> hidden (x depth) -> d_out."""
    sizes = [d_in, *([hidden] * depth), d_out]
    return sum(a * b + b for a, b in itertools.pairwise(sizes))


def shape_for(target: float) -> ModelRef:
    """The mlp nearest `target` parameters: depth grows with the size (1 layer of width ~4 at 10²,
    6 of ~5800 at 2·10⁸), the width is then the one whose count is nearest the target."""
    depth = min(max(round(math.log10(max(target, 10))) - 2, 1), 12)
    best = min(range(1, 1 << 16), key=lambda h: abs(math.log(mlp_params(h, depth) / target)))
    return parse(f"mlp:d_in={D_IN},hidden={best},depth={depth},d_out={D_OUT},batch={BATCH}")


def parse_sizes(text: str) -> list[ModelRef]:
    """`--sizes`: comma-separated parameter counts (`1e3,2.5e5`) or mlp model refs separated by `;`
    (`mlp:hidden=64,depth=2;mlp:hidden=512,depth=4`). Raises ValueError with what is wrong."""
    if text.strip().startswith("mlp"):
        refs = [parse(t) for t in text.split(";") if t.strip()]
        if any(r.target != "mlp" or r.kind != "zoo" for r in refs):
            raise ValueError("--sizes: the sweep is over the mlp family (mlp:hidden=...,depth=...)")
        return refs
    sizes = []
    for item in filter(None, (t.strip() for t in text.split(","))):
        try:
            value = float(item)
        except ValueError:
            raise ValueError(f"--sizes: {item!r} is not a parameter count (like 1e4)") from None
        if not value >= 10:
            raise ValueError(f"--sizes: {item!r}: the smallest mlp has more than 10 parameters")
        sizes.append(shape_for(value))
    return sizes


# ------------------------------------------------------------------------------- from the manifest


def ship_bytes(form: Form, ws: Workspace, manifest: Manifest) -> int | None:
    """What ships for the form (model files + program): each file's size as the build recorded
    it, else as it is on disk (an optional file, the `.onnx.data`); None when one is missing.
    (The one place to switch to a ship bundle's compressed size.)"""
    total = 0
    for rel in form.ship_files(ws):
        art = manifest.artifacts.get(rel)
        size = art.size if art else None
        if size is None:
            try:
                size = (ws.artifacts / rel).stat().st_size
            except OSError:
                return None
        total += size
    return total


def build_seconds(form: Form, manifest: Manifest, after: dict[str, tuple[str, ...]]) -> float | None:
    """Seconds the build spent on this model for the form: its model steps and the model steps
    they need (`after`), as the manifest recorded each; shared programs (built once) excluded."""
    todo, seen, total = list(form.steps), set(), 0.0
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        rec = manifest.steps.get(name)
        if not rec:
            return None
        if rec.scope != "shared":
            total += rec.wall_s
            todo.extend(after.get(name, ()))
    return round(total, 3)


# ------------------------------------------------------------------------------------ the sweep


@dataclass(frozen=True)
class SweepEvent:
    """Progress: `kind` is point (a size starts), step (a build step ended), form (a form is
    being measured), record (it was), skip (a size already measured), done."""

    kind: str
    index: int  # the point's number, from 1
    total: int
    model: str
    params: int = 0
    what: str = ""  # the step or form
    text: str = ""
    elapsed_s: float = 0.0
    done: int = 0  # points finished so far


class Watchdog:
    """Kills a build step whose process tree's resident memory passes `limit` bytes or that runs
    past `timeout_s`; keeps each step's peak (read every 0.25 s)."""

    def __init__(self, limit: int, timeout_s: float) -> None:
        self.limit, self.timeout_s = limit, timeout_s
        self.peak: dict[str, int] = {}
        self._started: dict[str, float] = {}
        self._last = 0.0

    def __call__(self, step: str, pid: int) -> str:
        now = time.monotonic()
        started = self._started.setdefault(step, now)
        if now - started > self.timeout_s:
            return f"timeout: still building after {self.timeout_s:.0f} s (the sweep's limit), killed"
        if now - self._last < 0.25:
            return ""
        self._last = now
        rss = tree_rss(pid)
        self.peak[step] = max(self.peak.get(step, 0), rss)
        if rss > self.limit:
            limit = human(self.limit)
            return f"memory: the build's processes reached {human(rss)} (the sweep's limit {limit}), killed"
        return ""


def runs_for(previous: RunRecord | None, runs: int) -> tuple[int, str]:
    """Counted runs for a form at the next size: `runs`, or fewer when one run at the size before
    took long enough that `runs` would pass defaults.SWEEP_RUN_BUDGET_S (with why, for the output)."""
    if previous is None or not previous.wall_s:
        return runs, ""
    wall = previous.wall.median if previous.wall else 0.0
    n = max(MIN_RUNS, min(runs, int(defaults.SWEEP_RUN_BUDGET_S // max(wall, 1e-9))))
    return n, (f"{n} runs: one took {wall:.1f} s at the size before" if n < runs else "")


def complete(point: Point | None, chosen: list[Form]) -> bool:
    return point is not None and all(f.key in point.records for f in chosen)


def run_sweep(
    refs: list[ModelRef],
    chosen: list[Form] | None = None,
    *,
    base: Workspace,
    runs: int = defaults.SWEEP_RUNS,
    warmup: int = defaults.WARMUP,
    repeat: int = defaults.REPEAT,
    timeout_s: float = defaults.RUN_TIMEOUT_S,
    build_timeout_s: float = defaults.BUILD_TIMEOUT_S,
    memory_limit: int = defaults.BUILD_MEMORY_LIMIT,
    force: bool = False,
    on_event: Callable[[SweepEvent], None] = lambda e: None,
    cancel: threading.Event | None = None,
    store: SweepStore | None = None,
) -> SweepStore:
    """Build and measure every chosen form (default: the whole registry) at every size, smallest
    first, each in `base`'s artifacts folder, storing each record as it comes (in `store`, default
    the folder's sweep.json); returns the store."""
    from deploytui.builder import BuildEvent, closure, plan, run_build, steps_for
    from deploytui.scenarios.startup import bench
    from deploytui.spec.context import BuildContext
    from deploytui.spec.manifest import load as load_manifest

    chosen = chosen if chosen is not None else list(registry.FORMS)
    store = store if store is not None else load(base.sweep_path)
    t0 = time.monotonic()
    previous: dict[str, RunRecord] = {}
    done = 0

    def event(kind: str, i: int, ref: ModelRef, params: int = 0, what: str = "", text: str = "") -> None:
        on_event(SweepEvent(kind, i, len(refs), ref.text, params, what, text, time.monotonic() - t0, done))

    for i, ref in enumerate(sorted(refs, key=params_of), 1):
        if cancel is not None and cancel.is_set():
            break
        point = store.points.get(ref.text)
        if point is not None and complete(point, chosen) and not force:
            previous.update(point.records)
            done += 1
            event("skip", i, ref, point.params, text="already measured (--force measures it again)")
            continue
        event("point", i, ref, params_of(ref))
        ws = base.for_model(ref)
        ctx = BuildContext.of(ws)
        watchdog = Watchdog(memory_limit, build_timeout_s)

        def on_build(e: BuildEvent, i: int = i, ref: ModelRef = ref) -> None:
            if e.kind == "end" and e.status != "up-to-date":
                event("step", i, ref, what=e.step, text=f"{e.status} ({duration(e.wall_s)}) {e.text}".strip())

        after = {s.name: s.after for s in plan(ctx)}
        only = steps_for(ctx, chosen)
        # one step at a time, each a fresh process: its seconds and peak memory are figures of
        # the point (a step forked from the fork server would count every module it imported)
        run_build(ctx, only=only, on_event=on_build, cancel=cancel, watch=watchdog, jobs=1, forked=False)
        if cancel is not None and cancel.is_set():
            break
        manifest = load_manifest(ws)
        params = manifest.facts("export-model").get("params")
        if not isinstance(params, int) or params < 1:
            params = params_of(ref)
        if force or point is None or point.params != params:
            point = Point(ref.text, params)
        per_model = results.load(ws.results_path)
        for form in chosen:
            if cancel is not None and cancel.is_set():
                break
            if form.key in point.records:
                previous[form.key] = point.records[form.key]
                continue
            n, note = runs_for(previous.get(form.key), runs)
            event("form", i, ref, params, form.key, note)
            rec = bench.bench_form(
                form,
                n=n,
                warmup=warmup,
                repeat=repeat,
                timeout_s=timeout_s,
                manifest=manifest,
                ws=ws,
                cancel=cancel,
            )
            if cancel is not None and cancel.is_set():
                break  # a run cut short is not a measurement
            per_model.put(rec)
            point.records[form.key] = rec
            if note:
                point.notes[form.key] = note
            size, secs = ship_bytes(form, ws, manifest), build_seconds(form, manifest, after)
            if size is not None:
                point.ship_bytes[form.key] = size
            if secs is not None:
                point.build_s[form.key] = secs
            peak = max((watchdog.peak.get(s, 0) for s in closure(form.steps, after)), default=0)
            if peak:
                point.build_peak_rss[form.key] = peak
            store.put(point)
            previous[form.key] = rec
            event("record", i, ref, params, form.key, _summary(rec))
        else:
            done += 1
    on_event(SweepEvent("done", len(refs), len(refs), "", 0, "", "", time.monotonic() - t0, done))
    return store


def params_of(ref: ModelRef) -> int:
    kw = ref.kwargs

    def get(k: str, default: int) -> int:
        v = kw.get(k, default)
        return v if isinstance(v, int) else default

    return mlp_params(get("hidden", 256), get("depth", 2), get("d_in", 64), get("d_out", 10))


def _summary(rec: RunRecord) -> str:
    from deploytui.core.units import ms

    if not rec.measured or rec.wall is None or rec.rss is None:
        return (rec.error or rec.status).splitlines()[0][:160]
    wall, rss = rec.wall.median, rec.rss.median
    if rec.accuracy is not None:  # a variant: its budget, not the tolerance
        verdict = "" if rec.accuracy.within_budget else "  outside its accuracy budget"
    else:
        verdict = "" if rec.within_tol else "  FAIL numerics"
    return f"n={len(rec.wall_s)} start-up {ms(wall)}  peak RSS {human(rss)}{verdict}"
