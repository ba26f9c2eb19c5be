"""The app's state without Textual: the job lane, the progress gate, the settings."""

from __future__ import annotations

import os
import subprocess
import sys

from deploytui.core.measure import Progress, Sample
from deploytui.views.tui.session import (
    BUILD,
    EXPORT,
    INSPECT,
    RUN,
    Job,
    JobLane,
    LiveRun,
    ProgressGate,
    Settings,
)


def test_lane_runs_one_job_at_a_time_in_order():
    lane = JobLane()
    run, export, build = Job(RUN, ("a",)), Job(EXPORT), Job(BUILD)
    assert lane.submit(run) is run  # free: starts now
    assert lane.submit(export) is None and lane.submit(build) is None  # wait, in order
    assert lane.find(EXPORT) is export and lane.find(RUN, BUILD) is run
    assert lane.finish(run) is export
    assert lane.finish(export) is build
    assert lane.finish(build) is None and lane.running is None


def test_lane_keeps_one_waiting_inspection():
    lane = JobLane()
    run = Job(RUN, ("a",))
    lane.submit(run)
    first = Job(INSPECT)
    assert lane.submit(first) is None
    assert lane.submit(Job(INSPECT)) is None and lane.submit(Job(INSPECT)) is None
    assert list(lane.waiting) == [first]  # it looks at what is highlighted when it starts
    assert lane.finish(run) is first


def test_lane_cancel_and_close():
    lane = JobLane()
    running, waiting = Job(INSPECT), Job(RUN, ("a",))
    lane.submit(running)
    lane.submit(waiting)
    assert lane.cancel(waiting) is True and not lane.waiting  # dropped before it started
    lane.submit(Job(EXPORT))
    lane.close()
    assert running.cancel.is_set() and not lane.waiting
    assert lane.submit(Job(RUN, ("b",))) is None  # closed: nothing starts any more
    assert lane.finish(running) is None


def test_progress_gate_throttles_but_keeps_the_last_run():
    now = [0.0]
    gate = ProgressGate(total=4, clock=lambda: now[0])

    def run(i, ok=True):
        s = Sample(wall_s=0.002 * i, peak_rss_bytes=1000, exit_code=0 if ok else 1, error="" if ok else "x")
        return Progress("run", i, 4, sample=s)

    live = Progress("run", 1, 4, rss_bytes=5)
    assert gate.admit(live) is True
    assert gate.admit(live) is False  # within LIVE_EVERY_S
    now[0] = 1.0
    assert gate.admit(live) is True
    assert gate.admit(run(1)) is True
    assert gate.admit(run(2, ok=False)) is False and gate.admit(run(3)) is False
    assert gate.admit(run(4)) is True  # the last is always posted
    assert gate.finished == 4 and gate.walls == [0.002, 0.006, 0.008]


def test_live_run_folds_progress():
    live = LiveRun("f", total=3, warmup=1)
    live.update(Progress("run", 1, 2, rss_bytes=7, elapsed_s=0.5), 0, [])
    assert (live.rss, live.peak_rss, live.max_elapsed) == (7, 7, 0.5)
    bad = Sample(wall_s=0.1, peak_rss_bytes=9, exit_code=1, error="exit 1")
    live.update(Progress("run", 1, 2, sample=bad), 1, [])
    assert (live.done, live.rss, live.peak_rss, live.failed) == (1, 9, 9, "⚠ exit 1")


def test_settings_words():
    assert Settings().describe() == "20 runs after 1 warm-up"
    assert Settings(runs=1, warmup=0).describe() == "1 run after 0 warm-up"
    assert Settings(runs=7, warmup=2).total == 9


def test_session_module_imports_no_textual():
    code = (
        "import sys, deploytui.views.tui.session\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich', 'plotext', 'torch')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env=os.environ.copy(),
    )
    assert out.stdout.strip() == "[]", out.stdout


def test_build_progress_follows_each_forms_steps():
    from deploytui.builder import BuildEvent
    from deploytui.core.modelref import parse
    from deploytui.families import registry
    from deploytui.views.tui.session import BUILDING, BUILT, WAITING, BuildProgress

    eager, script, cpp = (
        registry.get("torch-eager"),
        registry.get("torchscript-script"),
        registry.get("cpp-torchscript"),
    )
    p = BuildProgress(parse("convnet"))
    p.update(BuildEvent("plan", total=3, text="export-model export-script cpp-build"))
    assert [p.state(f) for f in (eager, script, cpp)] == [WAITING, WAITING, WAITING]
    assert p.state(registry.get("burn-file")) == ""  # none of its steps in this build
    p.update(BuildEvent("start", "export-model", "weights", 1, 3))
    assert (p.state(eager), p.describe()) == (BUILDING, "step 1/3 export-model (weights)")
    p.update(BuildEvent("end", "export-model", "weights", 1, 3, status="ok"))
    p.update(BuildEvent("start", "export-script", "script", 2, 3))
    p.update(BuildEvent("end", "export-script", "script", 2, 3, status="failed", text="exit 1: error: boom"))
    # a failed step: the manifest says why, for every form that needs it, whatever comes next
    assert [p.state(f) for f in (eager, script, cpp)] == [BUILT, "", ""]
    p.update(BuildEvent("start", "cpp-build", "C++", 3, 3))
    assert p.state(cpp) == ""
    # steps side by side: each form follows its own, the line names them all
    q = BuildProgress(parse("convnet"))
    q.update(BuildEvent("plan", total=3, text="export-model export-script cpp-build"))
    q.update(BuildEvent("start", "export-model", "weights", 1, 3))
    q.update(BuildEvent("start", "cpp-build", "C++", 3, 3))
    assert [q.state(f) for f in (eager, cpp)] == [BUILDING, BUILDING]
    assert q.describe() == "steps 1, 3/3 export-model, cpp-build"
    q.update(BuildEvent("end", "export-model", "weights", 1, 3, status="ok"))
    assert [q.state(f) for f in (eager, cpp)] == [
        BUILT,
        BUILDING,
    ] and q.describe() == "step 3/3 cpp-build (C++)"
    p.done = True
    assert p.describe() == "finished"
    # a form that does not apply is never shown built, even when the steps it names all end ok
    # (burn-st's are shared ones: they run for every model)
    st = registry.get("burn-st")
    for model, want in (("convnet", ""), ("mlp:hidden=8,depth=2", BUILT)):
        q = BuildProgress(parse(model))
        q.update(BuildEvent("plan", total=len(st.steps), text=" ".join(st.steps)))
        for i, step in enumerate(st.steps, 1):
            q.update(BuildEvent("end", step, step, i, len(st.steps), status="ok"))
        assert q.state(st) == want, model
