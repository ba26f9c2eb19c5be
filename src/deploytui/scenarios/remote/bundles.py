"""A form's bundle on an SSH target: built here (`deploytui ship`), copied there once per content
hash, a Python bundle's venv made there from the wheelhouse with the target's own interpreter;
and input files sent there once per content (a serving cell's batch, the accuracy set)."""

from __future__ import annotations

import hashlib
import json
import platform
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from deploytui.core import defaults
from deploytui.core.measure import launcher_path
from deploytui.core.workspace import Workspace
from deploytui.families import registry
from deploytui.launchers import sandbox, ssh
from deploytui.launchers.ssh import SshLauncher, TargetError
from deploytui.launchers.targets import Target
from deploytui.scenarios.isolated import shipping
from deploytui.spec.forms import Form


@dataclass(frozen=True)
class Placed:
    """A bundle on a target: its launcher there and the bundle's folder there."""

    launcher: SshLauncher
    root: str  # the target's REMOTE_ROOT, absolute

    @property
    def folder(self) -> str:
        return self.launcher.folder


def arch_problem(target: Target) -> str:
    """ "" or why no bundle built here can run on the target."""
    here, there = platform.machine(), str(target.facts.get("arch", ""))
    if not there:
        return f"{target.name} was never checked: run `deploytui target check {target.name}`"
    if there != here:
        return (
            f"{target.name} is {there}, and every bundle here is built for {here}: "
            f"an {there} build of each form is needed (deploytui build --arch {there})"
        )
    return ""


def python_problem(target: Target, wanted: str) -> str:
    """ "" or why the target cannot make a Python bundle's venv (it needs `wanted`, e.g. 3.11)."""
    pythons = target.facts.get("pythons") or {}
    if any(v.startswith(wanted + ".") for v in pythons):
        return ""
    have = ", ".join(sorted(pythons)) or "no Python 3"
    return f"the bundle needs Python {wanted}; {target.name} has {have}"


def _wheels_for(requirements: list[str], wheelhouse: Path) -> list[Path]:
    """The wheelhouse's files for the exact pins (name==version)."""
    found = []
    for pin in requirements:
        name, _, version = pin.partition("==")
        stem = f"{name.replace('-', '_').lower()}-{version}-"
        found += [w for w in sorted(wheelhouse.glob("*.whl")) if w.name.lower().startswith(stem)]
        found += [w for w in sorted(wheelhouse.glob("*.tar.gz")) if w.name.lower().startswith(stem[:-1])]
    return found


def local_dir(form: Form, ws: Workspace) -> Path:
    """Where the form's bundle is made here: a form on its dynamic-batch exports (a serving
    cell's, `registry.for_batch`) beside the form's own, never over it."""
    own = shipping.default_dir(form, ws)
    return (own if form == registry.get(form.key) else own.with_name(f"{form.key}-batch")).resolve()


def place(form: Form, target: Target, ws: Workspace, say: Callable[[str], None]) -> Placed:
    """The form's bundle on the target (sent once per content), its venv made there for a
    Python bundle. TargetError, ShipError or OSError when it cannot be."""
    dest = target.dest
    local = local_dir(form, ws)
    say(f"bundling {form.key} → {local}")
    made = shipping.make(form, local, ws=ws)
    manifest = made.manifest
    root = ssh.home(dest)
    launcher = launcher_path()
    remote_launcher = f"{root}/bin/{launcher.name}"
    ssh.send_file(dest, launcher, remote_launcher, mode="755")
    files = json.dumps(manifest["files"], sort_keys=True)  # what it holds, not when it was made
    key = hashlib.sha256(files.encode()).hexdigest()[:16]
    folder = f"{root}/bundles/{form.key}-{key}"
    sent = ssh.send_tree(dest, local, folder, exclude=("check", "venv"))
    say(f"{form.key}: the bundle {'sent to' if sent else 'already on'} {target.name} ({folder})")
    if manifest.get("requirements"):
        python = manifest["target_provides"]["python"]
        why = python_problem(target, python)
        if why:
            raise TargetError(why)
        ready = ssh.run(dest, 'test -e "$1/venv/.complete" && echo ready || true', folder).strip()
        if ready != "ready":
            say(f"{form.key}: the wheelhouse {shipping.wheelhouse()} (pip download of the exact pins, once)")
            err = sandbox.fill_wheelhouse(manifest["requirements"], shipping.wheelhouse(), shipping.pip_env())
            if err:
                raise TargetError(err)
            wheels = _wheels_for(manifest["requirements"], shipping.wheelhouse())
            if not wheels:
                raise TargetError(
                    f"no wheels for {form.key} in {shipping.wheelhouse()}: run `make wheelhouse`"
                )
            say(f"{form.key}: {len(wheels)} wheels to {target.name}, then its venv there (python{python})")
            for w in wheels:
                ssh.send_file(dest, w, f"{root}/wheels/{w.name}")
            script = (
                'cd "$1" && PIP_NO_CACHE_DIR=1 PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1 '
                './setup "$2" >setup.log 2>&1 && touch venv/.complete || { tail -n 3 setup.log >&2; exit 1; }'
            )
            ssh.run(dest, script, folder, f"{root}/wheels", timeout_s=defaults.BUILD_TIMEOUT_S)
    return Placed(SshLauncher(dest, target.name, remote_launcher, folder), root)


def send_inputs(placed: Placed, target: Target, files: list[Path]) -> list[str]:
    """Input files on the target, once per content (`data/<hash>/`, names kept); their paths there."""
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.name.encode() + b"\0" + f.read_bytes())
    folder = f"{placed.root}/data/{digest.hexdigest()[:16]}"
    for f in files:
        ssh.send_file(target.dest, f, f"{folder}/{f.name}")
    return [f"{folder}/{f.name}" for f in files]
