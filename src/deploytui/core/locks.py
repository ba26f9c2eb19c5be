"""Locks across processes (the `filelock` package), so that two deploytui processes at once (the
app and a terminal beside it, two benches, a build and a bench) lose nothing:

- `store_lock(path)`: around each read-modify-write of a JSON store (`store.Store`);
- `step_lock(folder, step)`: a build step's outputs. A build holds it for writing while the step
  runs (a second build of the same step waits, then finds it up to date); a bench holds the
  locks of the form's steps for reading while it runs the form (benches share them), so a run
  never sees an artifact half written and a build never rewrites one under a run.

A lock that is held elsewhere is waited for in short slices: `say` gets one line saying what is
waited for, and a `cancel` Event stops the wait (`Cancelled`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from filelock import FileLock

# filelock is imported where a lock is taken (~100 ms of imports): reading a whole store takes
# none, so the app's first frame does not wait for it

LOCKS = ".locks"  # per folder (a model's, shared/): one lock file per build step
SLICE_S = 0.25  # how long one attempt waits before the cancel Event is looked at again


class Cancelled(Exception):
    """The wait for a lock was cancelled."""


def store_lock(path: Path) -> FileLock:
    """The lock of one store file (`.NAME.lock` beside it); hold it across read, change, write."""
    from filelock import FileLock

    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(path.with_name(f".{path.name}.lock"))


def _step_file(folder: Path, step: str) -> Path:
    (folder / LOCKS).mkdir(parents=True, exist_ok=True)
    return folder / LOCKS / f"{step}.lock"


@contextmanager
def step_lock(
    folder: Path,
    step: str,
    mode: Literal["read", "write"],
    *,
    say: Callable[[str], None] = lambda _line: None,
    cancel: threading.Event | None = None,
    what: str = "",
) -> Iterator[bool]:
    """Hold step `step`'s lock (in `folder`, the step's scope: a model's folder or shared/) for
    reading (a run of a form that ships its outputs) or writing (the step running); yields
    whether it had to wait (what the lock guards may have changed meanwhile)."""
    from filelock import ReadWriteLock, Timeout

    lock = ReadWriteLock(_step_file(folder, step), is_singleton=False)
    acquire = lock.acquire_write if mode == "write" else lock.acquire_read
    waited = False
    try:
        try:
            acquire(timeout=0, blocking=False)
        except Timeout:
            waited = True
            holder = "built" if mode == "read" else "used by a run or built"
            say(f"waiting: step {step} is being {holder} by another deploytui{what}")
            while True:
                if cancel is not None and cancel.is_set():
                    raise Cancelled(f"cancelled while waiting for step {step}") from None
                try:
                    acquire(timeout=SLICE_S)
                    break
                except Timeout:
                    continue
        try:
            yield waited
        finally:
            lock.release()
    finally:
        lock.close()


@contextmanager
def steps_read(
    places: list[tuple[Path, str]],
    *,
    say: Callable[[str], None] = lambda _line: None,
    cancel: threading.Event | None = None,
) -> Iterator[bool]:
    """Read locks of several steps ((folder, step) each), taken in a fixed order (no deadlock
    between two readers and a writer), held together; yields whether one had to wait."""
    with ExitStack() as stack:
        waited = False
        for folder, step in sorted(set(places)):
            waited |= stack.enter_context(step_lock(folder, step, "read", say=say, cancel=cancel))
        yield waited
