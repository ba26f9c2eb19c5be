"""`deploytui ship FORM --arch aarch64 --check`: the form's aarch64 bundle proved in the emulated
arm64 root — the emulated target (launchers/emulated.py), named `arm64-emulated` on first use —
by the same path as `bench --target`: the bundle copied in, a Python bundle's venv made there
with the root's python3 from the aarch64 wheels, warm-up + n runs through the aarch64 measuring
launcher, the outputs judged here against eager. The verdict goes to
artifacts/<slug>/ship-<arch>.json (Workspace.ship_path_for); its timings are qemu's (marked emulated)."""

from __future__ import annotations

from collections.abc import Callable

from deploytui.core import defaults
from deploytui.core.record import stamp
from deploytui.core.workspace import Workspace
from deploytui.launchers import targets
from deploytui.launchers.ssh import TargetError
from deploytui.launchers.targets import Target
from deploytui.scenarios.remote import bench as remote
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
    return remote.arch_ship_fact(form, arch, ws, rec)
