"""What the app knows and what it is doing, without Textual: the app's widgets only show it.

- `Settings`: how a measurement runs (`DeployApp(runs=, warmup=)`); views read their words here.
- `Session`: the manifest and which forms can run, the stored results, the highlighted form, the
  run in flight (`LiveRun`), the inspector sections (cached), the job lane.
- `JobLane`: runs, builds, exports and inspections go one at a time, in the order asked, so an
  export or an inspection (which runs a compiled form once) never overlaps a measurement. Its
  methods are called on the app's thread only; a worker gets nothing but its `Job` (keys and a
  cancel Event).
- `ProgressGate`: which progress reports of a run are worth a redraw.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from deploytui import forms, manifest, results, sweep_store

if TYPE_CHECKING:
    from deploytui.measure import Progress
    from deploytui.sweep_store import Point, SweepStore

RUNS = 20
WARMUP = 1
LIVE_EVERY_S = 0.1  # live RSS/elapsed readings posted at most this often (10 a second is smooth)
SAMPLES_EVERY_S = 0.25  # finished runs too: redrawing after each 2 ms run slowed the runs ~50 %

RUN, BUILD, EXPORT, INSPECT, SWEEP, SHIP = "run", "build", "export", "inspect", "sweep", "ship"


@dataclass(frozen=True)
class Settings:
    runs: int = RUNS
    warmup: int = WARMUP

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


@dataclass(eq=False)
class Job:
    kind: str  # RUN | BUILD | EXPORT | INSPECT | SWEEP | SHIP (bundle a form, check it isolated)
    keys: tuple[str, ...] = ()  # the forms to run, or the one to inspect (set when it starts)
    cancel: threading.Event = field(default_factory=threading.Event)


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

    def find(self, *kinds: str) -> Job | None:
        """The first job of these kinds, running or waiting."""
        for job in (self.running, *self.waiting):
            if job is not None and job.kind in kinds:
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


class Session:
    """The app's state. Read and changed on the app's thread only (workers get a `Job`)."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.store = results.load()
        self.manifest: dict[str, Any] = {}
        self.status: dict[str, str] = {}  # form key → why it cannot run ("" = it can)
        self.current: str = forms.FORMS[0].key  # the highlighted form
        self.live: LiveRun | None = None
        self.lane = JobLane()
        self.sections: dict[str, list[Any]] = {}  # inspector sections, per form
        self.ready = False  # the first frame is up: inspection may start
        self.quitting = False
        self._sweep: SweepStore | None = None  # artifacts/sweep.json, read when the Scale screen asks
        self.load_state()

    def load_state(self) -> None:
        """Read the manifest and work out which forms can run (cheap: no subprocess, no torch)."""
        self.manifest = manifest.load()
        self.status = {}
        for f in forms.FORMS:
            try:
                self.status[f.key] = manifest.availability(f, self.manifest)
            except Exception as e:  # never die on a strange manifest
                self.status[f.key] = f"cannot tell: {type(e).__name__}: {e}"
        self.sections.clear()

    def sweep_points(self) -> list[Point]:
        """The sweep's points, smallest first (sweep.json read once, again after each sweep record)."""
        if self._sweep is None:
            self._sweep = sweep_store.load()
        return self._sweep.ordered()

    def reload_sweep(self) -> None:
        self._sweep = None

    def live_run(self, form: str, total: int) -> LiveRun:
        return LiveRun(form, total, self.settings.warmup)

    def runnable(self) -> list[str]:
        return [f.key for f in forms.FORMS if not self.status.get(f.key)]

    @property
    def job(self) -> str:
        """The measurement, build or sweep asked for (running or waiting): "run", "build", "sweep"
        or ""."""
        job = self.lane.find(RUN, BUILD, SWEEP)
        return job.kind if job else ""

    def inspect_target(self) -> str | None:
        """The form an inspection starting now should look at: the highlighted one, unless known."""
        if self.quitting or self.current in self.sections:
            return None
        return self.current

    def shutdown(self) -> None:
        """The app is going: no more jobs, the one in flight is cancelled (its child killed)."""
        self.quitting = True
        self.lane.close()
