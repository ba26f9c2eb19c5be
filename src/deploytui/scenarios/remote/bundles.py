"""A form's bundle on an SSH target: built here (`deploytui ship`), copied there once per content
hash, a Python bundle's venv made there from the wheelhouse with the target's own interpreter;
and input files sent there once per content (a serving cell's batch, the accuracy set)."""

from __future__ import annotations

import hashlib
import json
import platform
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from deploytui.core import defaults
from deploytui.core.measure import launcher_path
from deploytui.core.units import human
from deploytui.core.workspace import Workspace
from deploytui.families import registry
from deploytui.launchers import ssh, watched
from deploytui.launchers.ssh import SshLauncher, TargetError
from deploytui.launchers.targets import Target
from deploytui.scenarios.isolated import cross, shipping
from deploytui.ship import wheelhouse as wheelhouses
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
    """ "" or why no bundle built here can run on the target (one built for its architecture
    can: scenarios/isolated/cross.py)."""
    here, there = platform.machine(), str(target.facts.get("arch", ""))
    if not there:
        return f"{target.name} was never checked: run `deploytui target check {target.name}`"
    if there != here and there not in cross.ARCHES:
        return (
            f"{target.name} is {there}, and the bundles here are built for {here} "
            f"(or {', '.join(sorted(set(cross.ARCHES.values())))}): an {there} build of each form is needed"
        )
    return ""


def target_arch(target: Target) -> str | None:
    """The architecture the target's bundles are built for: None for this machine's."""
    there = str(target.facts.get("arch", ""))
    return None if there in ("", platform.machine()) else cross.ARCHES[there]


def python_problem(target: Target, wanted: str) -> str:
    """ "" or why the target cannot make a Python bundle's venv (it needs `wanted`, e.g. 3.11)."""
    pythons = target.facts.get("pythons") or {}
    if any(v.startswith(wanted + ".") for v in pythons):
        return ""
    have = ", ".join(sorted(pythons)) or "no Python 3"
    return f"the bundle needs Python {wanted}; {target.name} has {have}"


def batch_dir(own: Path, form: Form) -> Path:
    """Where the form's bundle is made here: a form on its dynamic-batch exports (a serving
    cell's, `registry.for_batch`) beside the form's own bundle, never over it."""
    return (own if form == registry.get(form.key) else own.with_name(f"{form.key}-batch")).resolve()


def place(
    form: Form,
    target: Target,
    ws: Workspace,
    say: Callable[[str], None],
    cancel: threading.Event | None = None,
) -> Placed:
    """The form's bundle on the target (sent once per content; for the target's architecture),
    its venv made there for a Python bundle (stopped whole, pip included, when `cancel` is set:
    launchers/watched.py). TargetError, ShipError or OSError when it cannot be."""
    dest = target.dest
    arch = target_arch(target)
    if arch:
        local = batch_dir(cross.default_dir(form, arch, ws), form)
        say(f"bundling {form.key} for {arch} → {local}")
        made = cross.make(form, arch, local, ws=ws)
        launcher = cross.launcher(arch)
        house = cross.wheelhouse(arch)
    else:
        local = batch_dir(shipping.default_dir(form, ws), form)
        say(f"bundling {form.key} → {local}")
        made = shipping.make(form, local, ws=ws)
        launcher = launcher_path()
        house = shipping.wheelhouse()
    manifest = made.manifest
    root = ssh.home(dest)
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
        # one venv per Python and set of pins on the target, shared by the bundles that need it
        # (the torch forms' is GiBs), linked as each bundle's venv/
        pins = "\n".join([python, *sorted(manifest["requirements"])])
        venv = f"{root}/venvs/{hashlib.sha256(pins.encode()).hexdigest()[:16]}"
        link = '[ -L "$1/venv" ] || rm -rf "$1/venv"; mkdir -p "$2" && ln -sfn "$2" "$1/venv" && '
        ready = ssh.run(
            dest, link + '{ test -e "$2/.complete" && echo ready || true; }', folder, venv
        ).strip()
        if ready != "ready":
            say(f"{form.key}: the wheelhouse {house} (pip download of the exact pins, once)")
            if not arch:  # an architecture's wheelhouse is filled as its bundle is made
                err = wheelhouses.fill(manifest["requirements"], house, shipping.pip_env())
                if err:
                    raise TargetError(err)
            pinned = wheelhouses.pinned(manifest["requirements"], house)
            if pinned.missing:  # said here, not by pip there after the sending
                raise TargetError(
                    f"{house} has no file for {len(pinned.missing)} of {form.key}'s pins "
                    f"({', '.join(pinned.missing[:5])}{', …' if len(pinned.missing) > 5 else ''}): "
                    "run `make wheelhouse`"
                )
            wheels = pinned.files
            there = set(ssh.run(dest, 'ls -1 "$1" 2>/dev/null || true', f"{root}/wheels").split())
            to_send = sum(w.stat().st_size for w in wheels if w.name not in there)
            installed = wheelhouses.installed_bytes(wheels)
            free = ssh.free_bytes(dest, remote_launcher)
            if free is not None and free < to_send + installed:
                raise TargetError(
                    f"{target.name} has {human(free)} free; {form.key}'s venv needs {human(installed)} "
                    f"installed and {human(to_send)} of wheels sent (free space there, or `deploytui "
                    f"target clean {target.name}` removes what deploytui put there)"
                )
            say(
                f"{form.key}: {len(wheels)} wheels ({human(to_send)}) to {target.name}, then its venv "
                f"there (python{python}, {human(installed)} once installed)"
            )
            for w in wheels:
                ssh.send_file(dest, w, f"{root}/wheels/{w.name}")
            # what the bundle's ./setup does, into the shared venv (python -m venv refuses a path
            # that is a link, so it is made where it lives and reached through the link)
            script = (
                'cd "$1" && rm -rf "$3" && export PIP_NO_CACHE_DIR=1 PIP_CONFIG_FILE=/dev/null '
                'PIP_DISABLE_PIP_VERSION_CHECK=1 && { "python$4" -m venv "$3" && "$3/bin/pip" install '
                '--no-index --find-links "$2" -r requirements.txt; } >setup.log 2>&1 && touch "$3/.complete" '
                "|| { tail -n 3 setup.log >&2; exit 1; }"
            )
            watched.run(
                dest,
                script,
                folder,
                f"{root}/wheels",
                venv,
                python,
                timeout_s=defaults.BUILD_TIMEOUT_S,
                cancel=cancel,
            )
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
