"""`deploytui build`: every step, incremental, side by side where they can, with progress events.

The plan is the concatenation of each registered family's `steps(ctx)` for the context's model
(deploytui/families/<name>/plan.py, exports first); a step
runs once the steps it needs have ended (`run_build`), up to one per core. A step is
up to date when its last run was ok, its fingerprint (command + input contents) is the same and
its outputs are still what that run wrote (size and mtime, else sha256, against the manifest);
otherwise it runs, and the log says why. A step that has to run but whose tool is missing is
marked unavailable with the reason, and steps after it that need it are skipped with that
reason. The steps that name modules to `preload` (the exports) are forked from one process that
imported them once for the whole build (deploytui.builder.forkserver), each still a process of its own
with its own log. Model steps are recorded in artifacts/<slug>/manifest.json, the model-independent ones
(scope "shared") in artifacts/shared/manifest.json, each step's record as it ends. Each
step that runs writes its full output to <its folder>/logs/<step>.log; its reason is the
decisive line of that output (`decisive_line`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib
import os
import platform
import re
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from deploytui.builder.forkserver import ForkServer
from deploytui.core import jsonio, locks, paths, procs
from deploytui.core.hashing import file_record
from deploytui.core.procs import tool_version
from deploytui.core.store import Store
from deploytui.families import registry
from deploytui.spec import manifest as manifest_file
from deploytui.spec.context import BuildContext
from deploytui.spec.forms import Form
from deploytui.spec.manifest import ArtifactRecord, Manifest, StepRecord, StepStatus
from deploytui.spec.steps import MODEL_STEP, Step

PROBE_PLAN = "deploytui.builder.probe_plan"  # last: each probe step runs after its form's steps


Watch = Callable[[str, int], str]  # (step name, pid of its process group) -> "" or why to kill it


@dataclass(frozen=True)
class BuildEvent:
    kind: str  # "plan" | "start" | "line" | "end"
    step: str = ""
    title: str = ""
    index: int = 0
    total: int = 0
    text: str = ""  # a log line ("line"), or the reason ("end")
    status: str = ""  # a StepStatus ("end" events)
    wall_s: float = 0.0


def plan(ctx: BuildContext) -> list[Step]:
    """Every registered family's steps (registry.PLANS): the exports first, in family order, then
    the programs and the rest, then the probes."""
    found: list[Step] = []
    for name in registry.PLANS:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name != name:
                raise
            continue
        found.extend(module.steps(ctx))
    found.sort(key=lambda s: s.stage != "export")  # stable: each family's order stays
    return [*found, *importlib.import_module(PROBE_PLAN).steps(ctx)]


def tool_versions(ctx: BuildContext) -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for tool in ("cargo", "rustc", "g++"):
        exe = shutil.which(tool)
        if exe:
            versions[tool] = tool_version(exe)
    return versions


def steps_for(ctx: BuildContext, chosen: Sequence[Form], *, shipped: bool = False) -> list[str] | None:
    """The plan's steps that `chosen` forms need (their own and what those need, in plan order);
    with `shipped`, their probe steps too (a bundle lists the libraries the probe found: a run on
    a target ships it); None for every form as built (the whole plan, which leaves out the steps
    built on demand)."""
    steps = plan(ctx)
    after = {s.name: s.after for s in steps}
    probes = [f.probe_step for f in chosen if shipped and f.probe_step in after]
    needed = closure((MODEL_STEP, *(s for f in chosen for s in f.steps), *probes), after)
    on_demand = any(s.on_demand and s.name in needed for s in steps)
    if {f.key for f in chosen} == {f.key for f in registry.FORMS} and not on_demand:
        return None
    return [name for name in after if name in needed]


def closure(names: Sequence[str], after: dict[str, tuple[str, ...]]) -> set[str]:
    """The steps named and every step they need, transitively (`Step.after`)."""
    todo, seen = list(names), set()
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(after.get(name, ()))
    return seen


def default_jobs() -> int:
    """How many steps run at once: one per core, at most 4 (an export step uses one core and
    about a GiB; a cargo step, all of them, and runs beside at most one other step)."""
    return max(1, min(4, os.cpu_count() or 1))


def run_build(
    ctx: BuildContext,
    only: list[str] | None = None,
    on_event: Callable[[BuildEvent], None] = lambda e: None,
    cancel: threading.Event | None = None,
    watch: Watch | None = None,
    jobs: int | None = None,
    forked: bool = True,
) -> Manifest:
    """Run the plan (or the steps named in `only` and nothing else); returns the model's view of
    the manifests. With `forked`, steps that preload modules are forked from the build's fork
    server (`fork_server`); the sweep asks for fresh processes, as a forked step's resident
    memory counts every module the server imported. Up to `jobs` steps run at once
    (default_jobs(); the sweep asks for 1, as its per-step seconds and memory are figures), each
    once the steps it needs have ended: those it names in `after` and those that write one of
    its inputs; one cargo step at a time. Events
    come in the order things happen; `index` is the step's place in the plan.
    `watch(step, pid)`, called while a step runs (every 50 ms), returns "" or why to kill it (the
    sweep's memory and time limits): the step then fails with that reason.

    Each step runs holding its lock for writing (`locks.step_lock`, in its scope's folder): a
    second build of the same step (another process, this model or another sharing shared/)
    waits for it with a line saying so, then finds it up to date; a bench running a form that
    ships the step's outputs holds it for reading. The manifest is read again once the lock is
    held, and the step's record is written under the store's lock, so nothing is lost."""
    for d in (ctx.art, ctx.mdir, ctx.shared, ctx.cache):
        d.mkdir(parents=True, exist_ok=True)
    paths.scratch_dir().mkdir(parents=True, exist_ok=True)
    tools = tool_versions(ctx)
    stores = {"shared": manifest_file.store(ctx.shared), "model": manifest_file.store(ctx.mdir)}

    def own(doc: Manifest) -> None:
        doc.tools.update(tools)
        doc.model = ctx.model.text

    stores["model"].update(own)
    stores["shared"].update(lambda doc: doc.tools.update(tools))
    steps = selected(ctx, only)
    total, workers = len(steps), max(1, jobs or default_jobs())
    index = {s.name: i for i, s in enumerate(steps, 1)}
    needs = _dependencies(steps)
    on_event(BuildEvent("plan", total=total, text=" ".join(s.name for s in steps)))
    pending, ended = list(steps), set[str]()
    running: dict[Future[tuple[StepStatus, str]], tuple[Step, float]] = {}
    forks = fork_server(ctx, steps) if forked else None
    closing = contextlib.closing(forks) if forks is not None else contextlib.nullcontext()
    with closing, ThreadPoolExecutor(max_workers=workers) as pool:
        while pending or running:
            stopping = cancel is not None and cancel.is_set()
            for step in [] if stopping else list(pending):
                if len(running) >= workers:
                    break
                cargo_busy = _cargo(step) and any(_cargo(s) for s, _ in running.values())
                if not needs[step.name] <= ended or cargo_busy:
                    continue
                pending.remove(step)
                i = index[step.name]
                on_event(BuildEvent("start", step.name, step.title, i, total))
                on_line = functools.partial(_line_event, on_event, step, i, total)
                store = stores["shared" if step.scope == "shared" else "model"]
                job = pool.submit(_locked_step, ctx, step, store, stores, on_line, cancel, watch, forks)
                running[job] = (step, time.perf_counter())
            if not running:
                if pending and not stopping:  # every step left waits on one that never ends
                    raise RuntimeError(f"build steps waiting on each other: {[s.name for s in pending]}")
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for job in sorted(done, key=lambda j: index[running[j][0].name]):
                step, t0 = running.pop(job)
                status, reason = job.result()
                wall = time.perf_counter() - t0
                ended.add(step.name)
                i = index[step.name]
                on_event(
                    BuildEvent(
                        "end", step.name, step.title, i, total, text=reason, status=status, wall_s=wall
                    )
                )
    return _view(stores)


def selected(ctx: BuildContext, only: list[str] | None = None) -> list[Step]:
    """The steps a build runs: those `only` names (ValueError for a name the plan lacks), else
    the plan's steps but the on-demand ones (a serving run's dynamic-batch exports)."""
    steps = plan(ctx)
    if not only:
        return [s for s in steps if not s.on_demand]
    known = {s.name for s in steps}
    unknown = [n for n in only if n not in known]
    if unknown:
        raise ValueError(f"unknown step(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    return [s for s in steps if s.name in only]


def fork_server(ctx: BuildContext, steps: list[Step]) -> ForkServer | None:
    """The build's fork server for its steps that preload modules, when two or more of them may
    run (it starts at the first that has to): one step alone starts a fresh process instead."""
    forked = [s for s in steps if s.preload]
    if len(forked) < 2:
        return None
    preload = list(dict.fromkeys(m for s in forked for m in s.preload))
    log = ctx.mdir / "logs" / "fork-server.log"
    return ForkServer(ctx.python, preload, step_env(forked[0]), ctx.root, log)


def step_env(step: Step) -> dict[str, str]:
    """The environment a step runs in: ours and the step's own (the fork server's is its first
    forked step's: a step whose environment differs runs afresh)."""
    return {**os.environ, **step.env}


def _cargo(step: Step) -> bool:
    return "cargo" in step.needs


def _dependencies(steps: list[Step]) -> dict[str, set[str]]:
    """Per step, the steps of this plan that must end before it starts: those it names in
    `after`, and those whose outputs are (or lie under) one of its inputs."""
    names = {s.name for s in steps}
    writer = {out: s.name for s in steps for out in s.outputs}
    needs: dict[str, set[str]] = {}
    for step in steps:
        found = {d for d in step.after if d in names}
        for inp in step.inputs:
            found |= {name for out, name in writer.items() if out == inp or out.is_relative_to(inp)}
        found.discard(step.name)
        needs[step.name] = found
    return needs


def _locked_step(
    ctx: BuildContext,
    step: Step,
    store: Store[Manifest],
    stores: dict[str, Store[Manifest]],
    on_line: Callable[[str], None],
    cancel: threading.Event | None,
    watch: Watch | None,
    forks: ForkServer | None,
) -> tuple[StepStatus, str]:
    """One step on a worker thread, holding its lock for writing."""
    t0 = time.perf_counter()
    try:
        with locks.step_lock(store.path.parent, step.name, "write", say=on_line, cancel=cancel):
            return _build_step(ctx, step, store, _view(stores), on_line, cancel, watch, forks, t0)
    except locks.Cancelled as e:
        return StepStatus.SKIPPED, str(e)


def _view(stores: dict[str, Store[Manifest]]) -> Manifest:
    return manifest_file.merged(stores["shared"].load().doc, stores["model"].load().doc)


def _build_step(
    ctx: BuildContext,
    step: Step,
    store: Store[Manifest],
    manifest: Manifest,
    on_line: Callable[[str], None],
    cancel: threading.Event | None,
    watch: Watch | None,
    forks: ForkServer | None,
    t0: float,
) -> tuple[StepStatus, str]:
    """Run one step (its lock held) and record it in its manifest, under that store's lock."""
    status, reason, record = _run_step(ctx, step, manifest, on_line, cancel, watch, forks)
    if status == StepStatus.UP_TO_DATE:
        touched = _touched(ctx, step, manifest)
        if touched:
            store.update(lambda doc: doc.artifacts.update(touched))
        return status, reason
    record.status, record.reason = status, reason
    record.wall_s = round(time.perf_counter() - t0, 3)
    record.finished_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    record.scope, record.stage = step.scope, step.stage
    outputs = {
        _artifact_key(ctx, out): _artifact_record(out, step.name) if status == StepStatus.OK else None
        for out in step.outputs
        if status != StepStatus.OK or out.is_file()
    }

    def put(doc: Manifest) -> None:
        doc.steps[step.name] = record
        for key, art in outputs.items():
            if art is None:
                doc.artifacts.pop(key, None)
            else:
                doc.artifacts[key] = art
        for tool in TOOL_FACTS.get(step.name, ()):
            if isinstance(record.facts.get(tool), str):
                doc.tools[tool] = record.facts[tool]

    store.update(put)
    return status, reason


FORKED = "(forked from the build's fork server, its modules imported once)"  # the log's second line
TOOL_FACTS = {MODEL_STEP: ("torch",), "export-onnx": ("onnx",)}  # versions a step reports


def _run_step(
    ctx: BuildContext,
    step: Step,
    manifest: Manifest,
    on_line: Callable[[str], None],
    cancel: threading.Event | None,
    watch: Watch | None = None,
    forks: ForkServer | None = None,
) -> tuple[StepStatus, str, StepRecord]:
    # The fingerprint holds no tool (neither its path nor its version), so it can be taken without
    # the tool; and a missing tool cannot have changed anything the step made. So the tool is
    # required only when the step has to run: a built step stays up to date without it.
    fingerprint = step.fingerprint(ctx.art)
    stale = _stale_reason(ctx, step, manifest, fingerprint)
    missing = [t for t in step.needs if shutil.which(t) is None]
    blank = StepRecord(StepStatus.FAILED)
    if stale and missing:
        return StepStatus.UNAVAILABLE, f"{', '.join(missing)} not found on PATH", blank
    for dep in step.after:
        dep_rec = manifest.steps.get(dep)
        if dep_rec is None or not dep_rec.ok:
            why = (dep_rec.reason or dep_rec.status) if dep_rec else "not built"
            return StepStatus.SKIPPED, f"needs step {dep} ({why})", blank
    if not stale:
        return StepStatus.UP_TO_DATE, "", manifest.steps[step.name]
    on_line(f"stale: {stale}")
    log_path = (ctx.shared if step.scope == "shared" else ctx.mdir) / "logs" / f"{step.name}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)

    def line(stream: str, text: str) -> None:
        if stream == "stderr":
            on_line(text)

    child = procs.run(
        step.argv,
        cwd=step.cwd or ctx.root,
        env=step_env(step),
        timeout_s=step.timeout_s,
        cancel=cancel,
        on_line=line,
        watch=None if watch is None else functools.partial(watch, step.name),
        fork=forks.spawn if forks is not None and step.preload else None,
    )
    log_lines = [*child.stderr, *child.stdout]
    how = f"{FORKED}\n" if child.forked else ""
    if not child.forked and step.preload and forks is not None and forks.why_not:
        how = f"(run afresh: {forks.why_not})\n"
    log_path.write_text(f"$ {' '.join(step.argv)}\n{how}" + "\n".join(log_lines) + "\n", errors="replace")
    record = StepRecord(
        StepStatus.FAILED,
        fingerprint=fingerprint,
        log_tail=log_lines[-20:],
        log=str(log_path.relative_to(ctx.art)),
        facts=jsonio.last_object(child.stdout) or {},
    )
    if child.error or child.killed:
        return StepStatus.FAILED, child.error or child.killed, record
    if child.returncode != 0:
        return StepStatus.FAILED, f"exit {child.returncode}: {decisive_line(log_lines)[:300]}", record
    absent = [str(o) for o in step.outputs if not o.exists()]
    if absent:
        return StepStatus.FAILED, f"finished but did not write {', '.join(absent)}", record
    return StepStatus.OK, "", record


COMPILER_ERROR = re.compile(r"^(error(\[E\d+\])?: |.*:\d+:\d+: (fatal )?error: )")
OWN_ERROR = re.compile(r"^error: (cargo build .* failed|.* failed \(exit \d+\))")


def decisive_line(lines: list[str]) -> str:
    """The line that says why a step failed: a build script's panic message (burn-onnx's
    "Unsupported ONNX operation(s)"), else the compiler's first error (g++, rustc), else the
    step's last `error:` line (the exporter's own words), else its last line."""
    clean = [ln.rstrip() for ln in lines if ln.strip()]
    for i, ln in enumerate(clean):
        if "panicked at" in ln and i + 1 < len(clean):
            return clean[i + 1].strip()
    compiler = [
        ln.strip() for ln in clean if COMPILER_ERROR.match(ln.strip()) and not OWN_ERROR.match(ln.strip())
    ]
    compiler = [ln for ln in compiler if not ln.startswith("error: could not compile")]
    if compiler:
        return compiler[0]
    own = [ln.strip() for ln in clean if ln.strip().startswith("error:")]
    if own:
        return own[-1]
    return clean[-1].strip() if clean else ""


def _stale_reason(ctx: BuildContext, step: Step, manifest: Manifest, fingerprint: str) -> str:
    """Why the step has to run; "" when it is up to date."""
    previous = manifest.steps.get(step.name)
    if not previous:
        return "never built"
    if not previous.ok:
        return f"last build: {previous.status}"
    if previous.fingerprint != fingerprint:
        return "command or inputs changed"
    for out in step.outputs:
        key = _artifact_key(ctx, out)
        if not out.exists():
            return f"output {key} is missing"
        art = manifest.artifacts.get(key)
        if art is None or not art.matches(out):
            return f"output {key} changed since it was built"
    return ""


def _touched(ctx: BuildContext, step: Step, manifest: Manifest) -> dict[str, ArtifactRecord]:
    """Outputs of an up-to-date step that were touched but not changed: their records with the
    new mtime, so that they are hashed once only."""
    touched = {}
    for out in step.outputs:
        key = _artifact_key(ctx, out)
        art = manifest.artifacts[key]
        mtime = out.stat().st_mtime_ns
        if art.mtime_ns != mtime:
            touched[key] = dataclasses.replace(art, mtime_ns=mtime)
    return touched


def _artifact_key(ctx: BuildContext, out: Path) -> str:
    return str(out.relative_to(ctx.art)) if out.is_relative_to(ctx.art) else str(out)


def _artifact_record(out: Path, step: str) -> ArtifactRecord:
    return ArtifactRecord(**file_record(out), step=step)


def _line_event(on_event: Callable[[BuildEvent], None], step: Step, i: int, total: int, line: str) -> None:
    on_event(BuildEvent("line", step.name, step.title, i, total, text=line))
