"""What the app knows and what it is doing, without Textual: the app's widgets only show it.

- `Settings`: how a measurement runs (`DeployApp(runs=, warmup=)`); views read their words here.
- `Session`: the model shown (switched by `switch`), the manifest and which forms can run, the
  stored results, the highlighted form, the run in flight (`LiveRun`), the builds in flight
  (`BuildProgress`), the inspector sections (cached), the job lane.
- `JobLane`: runs, builds, exports and inspections go one at a time, in the order asked, so an
  export or an inspection (which runs a compiled form once) never overlaps a measurement. Its
  methods are called on the app's thread only; a worker gets nothing but its `Job` (keys and a
  cancel Event).
- `ProgressGate`: which progress reports of a run are worth a redraw.
- `BuildProgress`: where a build of one model stands, form by form, from its build events.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deploytui.core import defaults
from deploytui.core.modelref import ZOO, ModelRef, inputs_text
from deploytui.core.workspace import Workspace
from deploytui.families import registry
from deploytui.scenarios.startup import results
from deploytui.spec import forms, manifest

if TYPE_CHECKING:
    from deploytui.builder import BuildEvent
    from deploytui.core.dataref import DataRef
    from deploytui.core.measure import Progress
    from deploytui.scenarios.sweep.store import Point, SweepStore

LIVE_EVERY_S = 0.1  # live RSS/elapsed readings posted at most this often (10 a second is smooth)
SAMPLES_EVERY_S = 0.25  # finished runs too: redrawing after each 2 ms run slowed the runs ~50 %

RUN, BUILD, EXPORT, INSPECT, OPEN = "run", "build", "export", "inspect", "open"
SWEEP, SHIP = "sweep", "ship"
SERVE = "serve"  # the serving cells of every form (the Serve screen's w)
BUILDING, WAITING, BUILT = "building", "waiting", "built"  # a form's state in a build (BuildProgress)


@dataclass(frozen=True)
class Settings:
    runs: int = defaults.RUNS
    warmup: int = defaults.WARMUP

    @property
    def total(self) -> int:
        return self.runs + self.warmup

    def describe(self) -> str:
        """'20 runs after 1 warm-up'"""
        return f"{self.runs} run{'s' * (self.runs != 1)} after {self.warmup} warm-up"


@dataclass
class LiveRun:
    """What the app knows about the run in flight (fed by the worker's progress reports)."""

    form: str
    total: int  # warm-up runs + counted runs
    warmup: int
    done: int = 0
    rss: int = 0
    elapsed: float = 0.0
    walls: list[float] = field(default_factory=list)
    peak_rss: int = 0
    max_elapsed: float = 0.0
    failed: str = ""

    def update(self, progress: Progress, done: int, walls: list[float]) -> None:
        """Fold in one `measure.Progress`: a live reading (no sample) or a finished run."""
        if progress.sample is None:
            self.rss, self.elapsed = progress.rss_bytes, progress.elapsed_s
            self.peak_rss = max(self.peak_rss, progress.rss_bytes)
            self.max_elapsed = max(self.max_elapsed, progress.elapsed_s)
            return
        s = progress.sample
        self.done, self.walls = done, walls
        self.elapsed = s.wall_s
        self.peak_rss = max(self.peak_rss, s.peak_rss_bytes)
        self.rss = s.peak_rss_bytes
        if not s.ok:
            self.failed = f"⚠ {s.error}"


class ProgressGate:
    """Counts one form's finished runs and says which progress reports to post: live readings at
    most every LIVE_EVERY_S, finished runs at most every SAMPLES_EVERY_S, the last one always.
    Lives in the worker thread."""

    def __init__(self, total: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.total = total
        self.finished = 0
        self.walls: list[float] = []  # wall times of the counted runs that were ok
        self._clock = clock
        self._last = {"live": float("-inf"), "sample": float("-inf")}

    def admit(self, progress: Progress) -> bool:
        if progress.sample is None:
            kind, every = "live", LIVE_EVERY_S
        else:
            kind, every = "sample", SAMPLES_EVERY_S
            self.finished += 1
            if progress.sample.ok and progress.phase == "run":
                self.walls.append(progress.sample.wall_s)
        now = self._clock()
        if now - self._last[kind] < every and self.finished < self.total:
            return False
        self._last[kind] = now
        return True


class BuildProgress:
    """Where a build of one model stands, per form, fed with the build's events on the app's
    thread: a form with a step still to come is WAITING, BUILDING while one of its steps runs,
    BUILT once its steps all ended ok; one whose step failed shows what the manifest says (the
    stage and the decisive line)."""

    def __init__(self, model: ModelRef) -> None:
        self.model = model
        self.left: set[str] = set()  # steps of the plan not ended yet
        self.ended: dict[str, str] = {}  # step -> its status
        self.running: dict[str, tuple[int, str]] = {}  # the steps running -> (index, title)
        self.total = 0
        self.done = False

    def update(self, e: BuildEvent) -> None:
        if e.kind == "plan":
            self.left, self.total = set(e.text.split()), e.total
        elif e.kind == "start":
            self.running[e.step] = (e.index, e.title)
        elif e.kind == "end":
            self.left.discard(e.step)
            self.ended[e.step] = e.status
            self.running.pop(e.step, None)

    def state(self, form: forms.Form) -> str:
        """BUILDING, WAITING, BUILT or "" (the form does not apply to the model, none of its steps
        was in this build, or one failed: the form cannot be built whatever comes next)."""
        ok = ("ok", "up-to-date")
        if form.applies(self.model) or any(self.ended.get(s, "ok") not in ok for s in form.steps):
            return ""
        if any(s in self.running for s in form.steps):
            return BUILDING
        if any(s in self.left for s in form.steps):
            return WAITING
        if form.steps and all(self.ended.get(s) in ok for s in form.steps):
            return BUILT
        return ""

    def describe(self, title: bool = True) -> str:
        """'step 7/31 export-onnx (ONNX export)' (without `title`: 'step 7/31 export-onnx'),
        'steps 7, 9/31 export-onnx, cpp-build' while several run, or 'finished'."""
        if self.done:
            return "finished"
        if not self.running:
            return f"step {len(self.ended)}/{self.total}" if self.total else "starting"
        steps = sorted(self.running.items(), key=lambda kv: kv[1][0])
        if len(steps) == 1:
            (name, (index, what)), *_ = steps
            return f"step {index}/{self.total} {name}" + (f" ({what})" if title else "")
        indexes = ", ".join(str(i) for _, (i, _) in steps)
        return f"steps {indexes}/{self.total} " + ", ".join(name for name, _ in steps)


@dataclass(eq=False)
class Job:
    kind: str  # RUN | BUILD | EXPORT | INSPECT | OPEN | SWEEP | SHIP (bundle a form, check it isolated)
    keys: tuple[str, ...] = ()  # the forms to run, or the one to inspect (set when it starts)
    cancel: threading.Event = field(default_factory=threading.Event)
    ws: Workspace | None = None  # the workspace it is for: the model shown when it was asked
    target: str | None = None  # a run's target (`deploytui target add`), None: this machine
    targets: tuple[str, ...] = ()  # a run on each of these targets at once (A), in place of `target`

    @property
    def model(self) -> ModelRef | None:
        return self.ws.model if self.ws is not None else None


@dataclass
class TargetProgress:
    """Where a run on every target (A) stands on one target: the app's targets line."""

    label: str  # the target's name, ", emulated" when it is
    total: int  # forms it is to run
    form: str = ""  # the form running, or the last one that ended
    index: int = 0  # that form's place, from 1
    ended: int = 0  # forms that ended there
    failed: int = 0  # of those, the ones not ok
    stopped: str = ""  # why the target stopped before its last form

    def line(self) -> str:
        head = f"[{self.label}]"
        if self.stopped:
            return f"{head} ✗ stopped at {self.form or 'its start'}: {self.stopped}"
        if self.ended == self.total:
            return f"{head} ✓ {self.total} ran" + (f", {self.failed} ✗" if self.failed else "")
        failed = f", {self.failed} ✗" if self.failed else ""
        return f"{head} {self.form} {self.index}/{self.total}{failed}"


class JobLane:
    """One job at a time, in the order asked. Only the latest inspection asked for matters: a new
    one takes the place of one still waiting."""

    def __init__(self) -> None:
        self.running: Job | None = None
        self.waiting: deque[Job] = deque()
        self.closed = False

    def submit(self, job: Job) -> Job | None:
        """Queue `job`; returns it when it is to start now."""
        if self.closed:
            return None
        if job.kind == INSPECT and any(w.kind == INSPECT for w in self.waiting):
            return None  # the inspection waiting looks at whatever is highlighted when it starts
        if self.running is None:
            self.running = job
            return job
        self.waiting.append(job)
        return None

    def finish(self, job: Job) -> Job | None:
        """`job` is over: returns the next job, to start now, if any."""
        if job is self.running:
            self.running = None
        if self.running is not None or self.closed or not self.waiting:
            return None
        self.running = self.waiting.popleft()
        return self.running

    def find(self, *kinds: str, model: ModelRef | None = None) -> Job | None:
        """The first job of these kinds (for that model, if given), running or waiting."""
        for job in (self.running, *self.waiting):
            if job is not None and job.kind in kinds and (model is None or job.model == model):
                return job
        return None

    def cancel(self, job: Job) -> bool:
        """Cancel `job`: a waiting one is dropped (returns True), a running one is told to stop."""
        job.cancel.set()
        if job in self.waiting:
            self.waiting.remove(job)
            return True
        return False

    def close(self) -> None:
        """No more jobs: the waiting ones are dropped, the running one is told to stop."""
        self.closed = True
        self.waiting.clear()
        if self.running is not None:
            self.running.cancel.set()


@dataclass
class ModelState:
    """What the files say of one model: its manifest view, its description (model.json) and
    each form's availability. Reading it stats every form's files: workers read it (a build
    after each step), the app takes it on its thread."""

    model: ModelRef
    manifest: manifest.Manifest
    info: dict[str, Any] | None
    status: dict[str, str]

    @classmethod
    def read(cls, ws: Workspace) -> ModelState:
        view = manifest.load(ws)
        status = {}
        for f in registry.FORMS:
            try:
                status[f.key] = manifest.availability(f, ws, view)
            except Exception as e:  # never die on a strange manifest
                status[f.key] = f"cannot tell: {type(e).__name__}: {e}"
        return cls(ws.model, view, manifest.model_info(ws.model_dir), status)


class Session:
    """The app's state. Read and changed on the app's thread only (workers get a `Job`, which
    carries the workspace it was asked for)."""

    def __init__(self, ws: Workspace, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.ws = ws  # the model shown and where its files are: switched by `switch`
        self.info: dict[str, Any] | None = None  # the model's description (model.json, or its check)
        self.builds: dict[str, BuildProgress] = {}  # per model slug: its build in flight (or last)
        self.target: str | None = None  # where the figures shown were measured: None is this machine
        self.fleet: dict[str, TargetProgress] = {}  # a run on every target (A): per target, where it stands
        self.store = results.load(ws.results_path)
        self.manifest = manifest.Manifest()
        self.status: dict[str, str] = {}  # form key → why it cannot run ("" = it can)
        self.current: str = registry.FORMS[0].key  # the highlighted form
        self.live: LiveRun | None = None
        self.lane = JobLane()
        self.sections: dict[str, list[Any]] = {}  # inspector sections, per form
        self.ready = False  # the first frame is up: inspection may start
        self.quitting = False
        self._sweep: SweepStore | None = None  # artifacts/sweep.json, read when the Scale screen asks
        self.load_state()

    @property
    def model(self) -> ModelRef:
        """The model shown."""
        return self.ws.model

    def load_state(self, state: ModelState | None = None) -> None:
        """Take the model's state (default: read it now) and forget the inspector sections."""
        self.apply(state or ModelState.read(self.ws))
        self.sections.clear()

    def apply(self, state: ModelState) -> None:
        """The manifest as the build has written it so far, and what it says of each form (the
        inspector sections are kept: a build in flight clears them when it ends). Read by a
        worker (`ModelState.read`), taken here on the app's thread."""
        if state.model != self.model:
            return  # read for a model no longer shown
        self.manifest, self.status = state.manifest, state.status
        self.info = state.info or self.info

    def stored(self, model: ModelRef | None, doc: results.Results, target: str | None = None) -> None:
        """What a worker just wrote to `model`'s results.json on `target` (read back under its
        lock, so with what other processes stored): the app's copy, when that model and target
        are shown."""
        if model == self.model and target == self.target:
            self.store.doc = doc

    def show_target(self, target: str | None) -> None:
        """Show the figures measured on `target` (None: this machine) from now on."""
        self.target = target
        self.store = results.load(self.ws.results_on(target))
        self.live = None

    def known_targets(self) -> list[tuple[str, str]]:
        """(name, what it is) of each target `deploytui target add` named (artifacts/targets.json)."""
        from deploytui.launchers import targets

        found = targets.store(self.ws.targets_path).doc.targets
        return [(t.name, f"{t.dest.text()} · {t.describe()}") for t in found.values()]

    def switch(self, ref: ModelRef, info: dict[str, Any] | None = None, data: DataRef | None = None) -> None:
        """Show `ref` from now on: its manifest, its results, its description (jobs asked for
        the model shown before keep their own workspace); `data`: the samples it is judged and
        calibrated on (`--data`), else the data it was shown with when it is the same model."""
        ws = self.ws.for_model(ref)
        self.ws, self.info = ws.with_data(data) if data is not None else ws, info
        self.store = results.load(self.ws.results_on(self.target))
        self.live = None
        self.load_state()

    @property
    def never_built(self) -> bool:
        """No build has ever run for the model shown (its own manifest is not there)."""
        return self.manifest.model is None

    @property
    def progress(self) -> BuildProgress | None:
        """The build of the model shown, in flight or finished in this session."""
        return self.builds.get(self.model.slug)

    def form_state(self, key: str) -> str:
        """The form in the build of the model shown: BUILDING, WAITING, BUILT or ""."""
        progress = self.progress
        return progress.state(registry.get(key)) if progress else ""

    def known_models(self) -> list[tuple[str, str]]:
        """(`--model` text, one line about it) for the zoo and every model built here."""
        built = manifest.built_models(self.ws.artifacts)
        found = [(name, ("built · " if name in built else "") + line) for name, line in ZOO.items()]
        for text, slug in built.items():
            if text not in ZOO:
                info = manifest.model_info(self.ws.artifacts / slug) or {}
                found.append((text, f"built · {describe_model(info)}" if info else "built"))
        return found

    def sweep_points(self) -> list[Point]:
        """The sweep's points, smallest first (sweep.json read once, again after each sweep record)."""
        if self._sweep is None:
            # imported here: the Scale screen's, not the first frame's
            from deploytui.scenarios.sweep import store as sweep_store

            self._sweep = sweep_store.load(self.ws.sweep_path)
        return self._sweep.ordered()

    def reload_sweep(self) -> None:
        self._sweep = None

    def live_run(self, form: str, total: int) -> LiveRun:
        return LiveRun(form, total, self.settings.warmup)

    def runnable(self) -> list[str]:
        return [f.key for f in registry.FORMS if not self.status.get(f.key)]

    @property
    def job(self) -> str:
        """The measurement, build or sweep asked for (running or waiting): "run", "build", "sweep",
        "serve" or ""."""
        job = self.lane.find(RUN, BUILD, SWEEP, SERVE)
        return job.kind if job else ""

    def inspect_target(self) -> str | None:
        """The form an inspection starting now should look at: the highlighted one, unless known."""
        if self.quitting or self.current in self.sections:
            return None
        return self.current

    def open_check(self, ref: ModelRef) -> str:
        """Can `ref` be switched to now? "" or why not. A job in flight goes on for the model
        it was asked for (its `Job.ws`), whatever is shown meanwhile."""
        if ref == self.model:
            return f"{model_label(ref)} is the model shown"
        return ""

    def shutdown(self) -> None:
        """The app is going: no more jobs, the one in flight is cancelled (its child killed)."""
        self.quitting = True
        self.lane.close()


def model_label(ref: ModelRef) -> str:
    """How the screens name a model: its `--model` text, a file relative to the working
    directory when it is under it."""
    if ref.kind == "file":
        try:
            return f"{Path(ref.target).relative_to(Path.cwd())}:{ref.factory}"
        except ValueError:
            pass
    return ref.text


def describe_model(info: dict[str, Any] | None) -> str:
    """'Mlp · 67 params · input float32[4, 4]' from a model's description ("" without one)."""
    if not info:
        return ""
    ins = info.get("inputs") or []
    shapes = inputs_text(ins)
    parts = [str(info.get("class") or "?"), f"{info.get('params', 0):,} params"]
    if shapes:
        parts.append(f"input{'s' * (len(ins) > 1)} {shapes}")
    odd = manifest.nonfinite_outputs(info)
    if odd:  # the reference every form is judged against holds them: the user should know
        parts.append(f"⚠ eager gives NaN or inf: {odd}")
    return " · ".join(parts)
