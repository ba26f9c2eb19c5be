"""`deploytui ship FORM --arch aarch64 --check`: the form's aarch64 bundle proved in the emulated
arm64 root — the emulated target (launchers/emulated.py), named `arm64-emulated` on first use —
by the same path as `bench --target`: the bundle copied in, a Python bundle's venv made there
with the root's python3 from the aarch64 wheels, warm-up + n runs through the aarch64 measuring
launcher, the outputs judged here against eager. The verdict goes to
artifacts/<slug>/ship-<arch>.json; its timings are qemu's (marked emulated)."""

from __future__ import annotations

import json
from collections.abc import Callable

from deploytui.core import defaults
from deploytui.core.record import stamp
from deploytui.core.record_parts import median
from deploytui.core.workspace import Workspace
from deploytui.launchers import targets
from deploytui.launchers.ssh import TargetError
from deploytui.launchers.targets import Target
from deploytui.scenarios.isolated import cross
from deploytui.scenarios.remote import bench as remote
from deploytui.scenarios.startup import bench
from deploytui.ship import store
from deploytui.ship.store import ShipCheck
from deploytui.spec.forms import Form

NAMES = {"aarch64": targets.EMULATED_ARM64}


def target(ws: Workspace, arch: str) -> Target:
    """The emulated target of `arch` from the targets store, added (its facts measured in the
    root) when missing; TargetError when its root is not made."""
    name = NAMES[arch]
    st = targets.store(ws.targets_path)
    found = st.doc.targets.get(name)
    if found is not None and found.facts.get("emulated"):
        return found
    made = targets.emulated_target(name, arch)
    st.update(lambda doc: doc.targets.__setitem__(name, made))
    return made


def check(
    form: Form,
    arch: str,
    ws: Workspace,
    *,
    n: int = defaults.SHIP_RUNS,
    warmup: int = defaults.WARMUP,
    timeout_s: float = defaults.RUN_TIMEOUT_S,
    say: Callable[[str], None] | None = None,
) -> ShipCheck:
    fact = ShipCheck(passed=False, model=ws.model.text, checked_at=stamp())
    try:
        there = target(ws, arch)
    except TargetError as e:
        fact.reason = str(e)
        return fact
    rec = remote.bench_form(
        form, there, ws, n=n, warmup=warmup, timeout_s=timeout_s, say=say or (lambda _l: None)
    )
    root = cross.default_dir(form, arch, ws)
    fact.bundle = str(root)
    try:
        manifest = json.loads((root / "manifest.json").read_text())
        fact.unpacked_bytes = manifest["unpacked_bytes"]
        fact.compressed_bytes = manifest["compressed_bytes"]
        fact.files = len(manifest["files"])
        fact.libraries = list(manifest.get("libraries", []))
    except (OSError, ValueError, KeyError):
        pass
    fact.passed = bench.judged_ok(rec)
    fact.reason = "" if fact.passed else (rec.error or rec.status)
    fact.startup_median_s = median(rec.wall_s) if fact.passed else None
    fact.peak_rss_median_bytes = median(rec.peak_rss_bytes) if fact.passed else None
    fact.max_abs_diff = rec.max_abs_diff
    fact.n = len(rec.wall_s)
    fact.stderr_tail = rec.stderr_tail[-4:]
    store.put(ws.model_dir / f"ship-{arch}.json", form.key, fact)
    return fact
