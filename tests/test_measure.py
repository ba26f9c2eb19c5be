"""The measuring core on real processes: RSS is the child's own, hangs are killed, errors reported."""

import os
import sys
import time

import psutil

from deploytui.core.measure import measure, run_once

MiB = 1024 * 1024


def test_peak_rss_is_the_childs_own_not_the_parents():
    ballast = bytearray(256 * MiB)
    for i in range(0, len(ballast), 4096):  # touch every page
        ballast[i] = 1
    assert psutil.Process().memory_info().rss > 200 * MiB
    s = run_once(["true"])
    assert s.ok, s.error
    assert s.peak_rss_bytes < 2 * MiB, s.peak_rss_bytes
    del ballast


def test_peak_rss_sees_a_child_that_allocates():
    code = "b = bytearray(120 * 1024 * 1024); b[::4096] = b'x' * len(b[::4096])"
    s = run_once([sys.executable, "-c", code])
    assert s.ok, s.error
    assert 120 * MiB < s.peak_rss_bytes < 200 * MiB


def test_hung_command_is_killed_with_its_process_group_and_reaped():
    marker = "97.123"
    t0 = time.monotonic()
    s = run_once(["sh", "-c", f"sleep {marker} & sleep {marker}; echo never"], timeout_s=1.0)
    assert time.monotonic() - t0 < 10
    assert s.timed_out and not s.ok and "timed out" in s.error
    time.sleep(0.2)
    left = [
        p
        for p in psutil.process_iter(["cmdline", "status"])
        if marker in " ".join(p.info["cmdline"] or []) and p.info["status"] != psutil.STATUS_ZOMBIE
    ]
    assert not left, left


def test_exit_status_signal_and_stderr_tail():
    s = run_once(["sh", "-c", "echo out; echo 'error: boom' >&2; exit 3"])
    assert s.exit_code == 3 and s.stdout == "out\n" and s.stderr_tail == ["error: boom"]
    assert s.error == "exit 3: error: boom"
    s = run_once(["sh", "-c", "kill -SEGV $$"])
    assert s.exit_code is None and "SIGSEGV" in s.error


def test_missing_program_is_reported():
    s = run_once(["/nonexistent/program"])
    assert not s.ok and "could not start" in s.error


def test_warmup_not_counted_and_stats():
    m = measure(["sleep", "0.02"], n=3, warmup=2)
    assert m.ok and len(m.warmup) == 2 and len(m.runs) == 3
    w = m.wall
    assert 0.015 < w.min <= w.median <= w.max < 1.0
    summary = m.summary()
    assert summary["status"] == "ok" and len(summary["wall_s"]) == 3


def test_live_rss_samples_arrive_while_running():
    seen = []
    m = measure(
        [sys.executable, "-c", "import time; time.sleep(0.3)"],
        n=1,
        warmup=0,
        on_progress=lambda p: seen.append(p),
    )
    assert m.ok
    live = [p for p in seen if p.sample is None]
    assert live and all(p.rss_bytes > 0 for p in live)
    assert seen[-1].sample is not None


def test_cancel_kills_the_running_child():
    import threading

    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    t0 = time.monotonic()
    m = measure(["sleep", "30"], n=1, warmup=0, cancel=cancel)
    assert time.monotonic() - t0 < 5
    assert not m.ok and m.error == "cancelled"
    assert not [
        p
        for p in psutil.process_iter(["cmdline"])
        if p.info["cmdline"] == ["sleep", "30"] and p.ppid() in (os.getpid(),)
    ]


def test_a_run_that_never_reported_counts_no_figures():
    """The connection to a target dropped during the third run: the two runs measured are kept
    as they were, and the third, with no report, adds no time or memory (a 0 ms run would pull
    every median down)."""
    from deploytui.core import measure as measuring

    samples = iter(
        [
            measuring.Sample(0.5, 100 << 20, 0),
            measuring.Sample(0.4, 101 << 20, 0),
            measuring.Sample(0.6, 99 << 20, 0),
            measuring.sample_of("", "", [], 10.0, False, "ssh to box failed: connection closed"),
        ]
    )
    m = measuring.measure(["./run"], n=5, warmup=1, timeout_s=10.0, once=lambda *_: next(samples))
    s = m.summary()
    assert s["status"] == "failed" and "connection closed" in s["error"]
    assert s["wall_s"] == [0.4, 0.6] and s["peak_rss_bytes"] == [101 << 20, 99 << 20]
