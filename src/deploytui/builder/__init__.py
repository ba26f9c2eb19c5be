"""`deploytui build`: every step, incremental, side by side where they can, with progress events.

The plan is the concatenation of each family's `steps(ctx)` for the context's model; a step
runs once the steps it needs have ended (`run_build`), up to one per core. A step is
up to date when its last run was ok, its fingerprint (command + input contents) is the same and
its outputs are still what that run wrote (size and mtime, else sha256, against the manifest);
otherwise it runs, and the log says why. A step that has to run but whose tool is missing is
marked unavailable with the reason, and steps after it that need it are skipped with that
reason. Model steps are recorded in artifacts/<slug>/manifest.json, the model-independent ones
(scope "shared") in artifacts/shared/manifest.json; both are rewritten after every step. Each
step that runs writes its full output to <its folder>/logs/<step>.log; its reason is the
decisive line of that output (`decisive_line`).
"""

from __future__ import annotations

import functools
import importlib
import os
import platform
import re
import shutil
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from deploytui import jsonio, paths
from deploytui import manifest as manifest_file
from deploytui.builder.context import BuildContext
from deploytui.builder.steps import Step
from deploytui.hashing import file_record, unchanged
from deploytui.procs import kill_group, tool_version

FAMILY_MODULES = (
    "deploytui.builder.torch_plan",
    "deploytui.builder.cpp_plan",
    "deploytui.builder.rust_plan",
    "deploytui.builder.probe_plan",  # last: each probe step runs after its form's steps
)


Watch = Callable[[str, int], str]  # (step name, pid of its process group) -> "" or why to kill it


@dataclass(frozen=True)
class BuildEvent:
    kind: str  # "plan" | "start" | "line" | "end"
    step: str = ""
    title: str = ""
    index: int = 0
    total: int = 0
    text: str = ""  # a log line ("line"), or the reason ("end")
    status: str = ""  # "ok" | "up-to-date" | "failed" | "unavailable" | "skipped"
    wall_s: float = 0.0


def plan(ctx: BuildContext) -> list[Step]:
    found: list[Step] = []
    for name in FAMILY_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name != name:
                raise
            continue
        found.extend(module.steps(ctx))
    return found


def tool_versions(ctx: BuildContext) -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for tool in ("cargo", "rustc", "g++"):
        exe = shutil.which(tool)
        if exe:
            versions[tool] = tool_version(exe)
    return versions


def default_jobs() -> int:
    """How many steps run at once: one per core, at most 4 (an export step uses one core and
    about a GiB; a cargo step, all of them, and runs beside at most one other step)."""
    return max(1, min(4, os.cpu_count() or 1))


def run_build(
    ctx: BuildContext | None = None,
    only: list[str] | None = None,
    on_event: Callable[[BuildEvent], None] = lambda e: None,
    cancel: threading.Event | None = None,
    watch: Watch | None = None,
    jobs: int | None = None,
) -> dict[str, Any]:
    """Run the plan (or the steps named in `only` and nothing else); returns the manifest.
    Up to `jobs` steps run at once (default_jobs(); the sweep asks for 1, as its per-step
    seconds and memory are figures), each once the steps it needs have ended: those it names
    in `after` and those that write one of its inputs; one cargo step at a time. Events come in
    the order things happen; `index` is the step's place in the plan.
    `watch(step, pid)`, called while a step runs (every 50 ms), returns "" or why to kill it (the
    sweep's memory and time limits): the step then fails with that reason."""
    ctx = ctx or BuildContext.default()
    for d in (ctx.art, ctx.mdir, ctx.shared, ctx.cache):
        d.mkdir(parents=True, exist_ok=True)
    paths.scratch_dir().mkdir(parents=True, exist_ok=True)
    manifest = manifest_file.load(ctx.art, ctx.slug)
    manifest["tools"].update(tool_versions(ctx))
    manifest["model"] = ctx.model.text
    steps = plan(ctx)
    if only:
        known = {s.name for s in steps}
        unknown = [n for n in only if n not in known]
        if unknown:
            raise ValueError(f"unknown step(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        steps = [s for s in steps if s.name in only]
    total, workers = len(steps), max(1, jobs or default_jobs())
    index = {s.name: i for i, s in enumerate(steps, 1)}
    needs = _dependencies(steps)
    on_event(BuildEvent("plan", total=total, text=" ".join(s.name for s in steps)))
    pending, ended = list(steps), set[str]()
    running: dict[Future[tuple[str, str, dict[str, Any]]], tuple[Step, float]] = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
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
                t0 = time.perf_counter()
                ready = _prepare(ctx, step, manifest)
                if ready.result is not None:  # decided without running anything
                    _finish(ctx, step, manifest, ready.result, time.perf_counter() - t0, i, on_event, total)
                    ended.add(step.name)
                    continue
                on_line = functools.partial(_line_event, on_event, step, i, total)
                running[pool.submit(_execute, ctx, step, ready, on_line, cancel, watch)] = (step, t0)
            if not running:
                if pending and not stopping:  # every step left waits on one that never ends
                    raise RuntimeError(f"build steps waiting on each other: {[s.name for s in pending]}")
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for job in sorted(done, key=lambda j: index[running[j][0].name]):
                step, t0 = running.pop(job)
                wall = time.perf_counter() - t0
                _finish(ctx, step, manifest, job.result(), wall, index[step.name], on_event, total)
                ended.add(step.name)
    return manifest


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


def _finish(
    ctx: BuildContext,
    step: Step,
    manifest: dict[str, Any],
    result: tuple[str, str, dict[str, Any]],
    wall: float,
    i: int,
    on_event: Callable[[BuildEvent], None],
    total: int,
) -> None:
    """Record a step's end in the manifest (rewritten at once) and say so; on run_build's thread."""
    status, reason, record = result
    if status != "up-to-date":
        record.update(
            status=status,
            reason=reason,
            wall_s=round(wall, 3),
            finished_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        )
        record["scope"], record["stage"] = step.scope, step.stage
        manifest["steps"][step.name] = record
        for out in step.outputs:
            if status == "ok" and out.is_file():
                manifest["artifacts"][_artifact_key(ctx, out)] = _artifact_record(out, step.name)
            else:
                manifest["artifacts"].pop(_artifact_key(ctx, out), None)
        facts = record.get("facts") or {}
        if step.name == "export-model" and "torch" in facts:
            manifest["tools"]["torch"] = facts["torch"]
        if step.name == "export-onnx" and "onnx" in facts:
            manifest["tools"]["onnx"] = facts["onnx"]
        manifest_file.write(ctx.art, ctx.slug, manifest)
    elif _refresh_mtimes(ctx, step, manifest):
        manifest_file.write(ctx.art, ctx.slug, manifest)
    on_event(BuildEvent("end", step.name, step.title, i, total, text=reason, status=status, wall_s=wall))


@dataclass(frozen=True)
class _Ready:
    """What `_prepare` decided on run_build's thread: a result already (up to date, skipped,
    unavailable), or the fingerprint and why the step has to run."""

    result: tuple[str, str, dict[str, Any]] | None
    fingerprint: str = ""
    stale: str = ""


def _prepare(ctx: BuildContext, step: Step, manifest: dict[str, Any]) -> _Ready:
    # The fingerprint holds no tool (neither its path nor its version), so it can be taken without
    # the tool; and a missing tool cannot have changed anything the step made. So the tool is
    # required only when the step has to run: a built step stays up to date without it.
    fingerprint = step.fingerprint()
    stale = _stale_reason(ctx, step, manifest, fingerprint)
    missing = [t for t in step.needs if shutil.which(t) is None]
    if stale and missing:
        return _Ready(("unavailable", f"{', '.join(missing)} not found on PATH", {}))
    for dep in step.after:
        dep_status = manifest["steps"].get(dep, {}).get("status")
        if dep_status != "ok":
            why = manifest["steps"].get(dep, {}).get("reason") or dep_status or "not built"
            return _Ready(("skipped", f"needs step {dep} ({why})", {}))
    if not stale:
        return _Ready(("up-to-date", "", manifest["steps"][step.name]))
    return _Ready(None, fingerprint, stale)


def _execute(
    ctx: BuildContext,
    step: Step,
    ready: _Ready,
    on_line: Callable[[str], None],
    cancel: threading.Event | None,
    watch: Watch | None = None,
) -> tuple[str, str, dict[str, Any]]:
    """Run the step's command (on a worker thread): its log, its facts, its status."""
    fingerprint = ready.fingerprint
    on_line(f"stale: {ready.stale}")
    env = {**os.environ, **step.env}
    tail: deque[str] = deque(maxlen=40)
    log_path = (ctx.shared if step.scope == "shared" else ctx.mdir) / "logs" / f"{step.name}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log = log_path.open("w", encoding="utf-8", errors="replace")
    log.write("$ " + " ".join(step.argv) + "\n")
    log_lines: list[str] = []
    try:
        proc = subprocess.Popen(
            step.argv,
            cwd=step.cwd or ctx.root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            start_new_session=True,
        )
    except OSError as e:
        return "failed", f"could not start {step.argv[0]}: {e}", {"fingerprint": fingerprint}
    stdout_lines: list[str] = []
    reader = threading.Thread(target=lambda: stdout_lines.extend(proc.stdout or ()), daemon=True)
    reader.start()
    deadline = time.monotonic() + step.timeout_s
    killed = ""
    assert proc.stderr is not None

    def on_err(line: str) -> None:
        log_lines.append(line)
        on_line(line)

    stderr_thread = threading.Thread(target=_pump, args=(proc.stderr, tail, on_err), daemon=True)
    stderr_thread.start()
    while proc.poll() is None:
        if cancel is not None and cancel.is_set():
            killed = "cancelled"
        elif time.monotonic() > deadline:
            killed = f"timed out after {step.timeout_s:.0f} s"
        elif watch is not None:
            killed = watch(step.name, proc.pid)
        if killed:
            kill_group(proc.pid)
            break
        time.sleep(0.05)
    proc.wait()
    reader.join(5)
    stderr_thread.join(5)
    for line in stdout_lines:
        tail.append(line.rstrip("\n"))
        log_lines.append(line.rstrip("\n"))
    log.write("\n".join(log_lines) + "\n")
    log.close()
    record = {
        "fingerprint": fingerprint,
        "log_tail": list(tail)[-20:],
        "log": str(log_path.relative_to(ctx.art)),
        "facts": jsonio.last_object(stdout_lines) or {},
    }
    if killed:
        return "failed", killed, record
    if proc.returncode != 0:
        return "failed", f"exit {proc.returncode}: {decisive_line(log_lines)[:300]}", record
    absent = [str(o) for o in step.outputs if not o.exists()]
    if absent:
        return "failed", f"finished but did not write {', '.join(absent)}", record
    return "ok", "", record


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


def _stale_reason(ctx: BuildContext, step: Step, manifest: dict[str, Any], fingerprint: str) -> str:
    """Why the step has to run; "" when it is up to date."""
    previous = manifest["steps"].get(step.name)
    if not previous:
        return "never built"
    if previous.get("status") != "ok":
        return f"last build: {previous.get('status')}"
    if previous.get("fingerprint") != fingerprint:
        return "command or inputs changed"
    for out in step.outputs:
        if not out.exists():
            return f"output {_artifact_key(ctx, out)} is missing"
        if not unchanged(out, manifest["artifacts"].get(_artifact_key(ctx, out))):
            return f"output {_artifact_key(ctx, out)} changed since it was built"
    return ""


def _refresh_mtimes(ctx: BuildContext, step: Step, manifest: dict[str, Any]) -> bool:
    """Outputs of an up-to-date step that were touched but not changed: record their new mtime, so
    that they are hashed once only. True when a record changed."""
    refreshed = False
    for out in step.outputs:
        record = manifest["artifacts"][_artifact_key(ctx, out)]
        mtime = out.stat().st_mtime_ns
        refreshed |= record.get("mtime_ns") != mtime
        record["mtime_ns"] = mtime
    return refreshed


def _artifact_key(ctx: BuildContext, out: Path) -> str:
    return str(out.relative_to(ctx.art)) if out.is_relative_to(ctx.art) else str(out)


def _artifact_record(out: Path, step: str) -> dict[str, Any]:
    return {**file_record(out), "step": step}


def _line_event(on_event: Callable[[BuildEvent], None], step: Step, i: int, total: int, line: str) -> None:
    on_event(BuildEvent("line", step.name, step.title, i, total, text=line))


def _pump(stream: IO[str], tail: deque[str], on_line: Callable[[str], None]) -> None:
    for line in stream:
        line = line.rstrip("\n")
        tail.append(line)
        on_line(line)
