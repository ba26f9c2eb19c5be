"""Start-up runs on an SSH target: the form's bundle (`deploytui ship`) copied there once per
content hash, a Python bundle's venv made there from the wheelhouse with the target's own
interpreter, then warm-up + n runs through the measuring launcher there (launchers/ssh.py); the
outputs come back and are judged here against eager, like any run (bench.evaluate). The records
go to the model's targets/<name>/results.json; this machine's stay where they are."""

from __future__ import annotations

import hashlib
import json
import platform
import re
import threading
from collections.abc import Callable
from pathlib import Path

from deploytui.core import defaults
from deploytui.core.measure import launcher_path
from deploytui.core.record import RunRecord, stamp
from deploytui.core.record_parts import Where, median
from deploytui.core.workspace import Workspace
from deploytui.launchers import sandbox, ssh
from deploytui.launchers.ssh import SshLauncher, TargetError
from deploytui.launchers.targets import Target
from deploytui.scenarios.isolated import cross, shipping
from deploytui.scenarios.startup import bench, results
from deploytui.ship import store
from deploytui.ship.bundler import ShipError
from deploytui.ship.store import ShipCheck
from deploytui.spec.forms import Form
from deploytui.spec.manifest import availability
from deploytui.spec.manifest import load as load_manifest


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


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _wheels_for(requirements: list[str], wheelhouse: Path) -> list[Path]:
    """The wheelhouse's files (wheels, sdists) for the exact pins (name==version), names compared
    as pip does (ruamel.yaml is ruamel_yaml-…whl, antlr4-python3-runtime an sdist of that name)."""
    by_pin: dict[tuple[str, str], list[Path]] = {}
    for f in sorted(wheelhouse.iterdir()):
        if f.name.endswith(".whl"):
            name, version = f.name.split("-")[:2]
        elif f.name.endswith(".tar.gz"):
            name, _, version = f.name[: -len(".tar.gz")].rpartition("-")
        else:
            continue
        by_pin.setdefault((_norm(name), version), []).append(f)
    found = []
    for pin in requirements:
        name, _, version = pin.partition("==")
        found += by_pin.get((_norm(name), version), [])
    return found


def _prepare(form: Form, target: Target, ws: Workspace, say: Callable[[str], None]) -> tuple[str, str]:
    """The form's bundle on the target (sent once per content), its venv made there for a
    Python bundle; returns (the launcher's path there, the bundle's folder there)."""
    dest = target.dest
    arch = target_arch(target)
    if arch:
        local = cross.default_dir(form, arch, ws).resolve()
        say(f"bundling {form.key} for {arch} → {local}")
        made = cross.make(form, arch, local, ws=ws)
        launcher = cross.launcher(arch)
        house = cross.wheelhouse(arch)
    else:
        local = shipping.default_dir(form, ws).resolve()
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
                err = sandbox.fill_wheelhouse(manifest["requirements"], house, shipping.pip_env())
                if err:
                    raise TargetError(err)
            wheels = _wheels_for(manifest["requirements"], house)
            if not wheels:
                raise TargetError(f"no wheels for {form.key} in {house}: run `make wheelhouse`")
            say(f"{form.key}: {len(wheels)} wheels to {target.name}, then its venv there (python{python})")
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
            ssh.run(dest, script, folder, f"{root}/wheels", venv, python, timeout_s=defaults.BUILD_TIMEOUT_S)
    return remote_launcher, folder


def bench_form(
    form: Form,
    target: Target,
    ws: Workspace,
    *,
    n: int = defaults.RUNS,
    warmup: int = defaults.WARMUP,
    repeat: int = defaults.REPEAT,
    timeout_s: float = defaults.RUN_TIMEOUT_S,
    say: Callable[[str], None] = lambda _line: None,
    cancel: threading.Event | None = None,
) -> RunRecord:
    """Measure one form on the target and store its record there; a form that cannot run there
    (not built, another architecture, no Python for it, the target unreachable) is a not-run
    record with the reason, like bench's."""
    manifest = load_manifest(ws)
    why = availability(form, ws, manifest) or arch_problem(target)
    if not why:
        try:
            remote_launcher, folder = _prepare(form, target, ws, say)
        except (TargetError, ShipError, OSError) as e:
            why = str(e)
    if why:
        rec = bench.not_run(form, why, manifest, ws)
    else:
        launcher = SshLauncher(target.dest, target.name, remote_launcher, folder)
        out = f"{folder}.outputs.safetensors"
        say(f"{form.key}: {warmup} warm-up + {n} runs on {target.name}")
        m = launcher.measure(
            ["./run", out, str(repeat)], n=n, warmup=warmup, timeout_s=timeout_s, cancel=cancel
        )
        local_out = ws.target_dir(target.name) / "outputs" / f"{form.key}.safetensors"
        local_out.parent.mkdir(parents=True, exist_ok=True)
        local_out.unlink(missing_ok=True)
        if m.runs and m.runs[-1].ok:
            try:
                local_out.write_bytes(ssh.fetch_file(target.dest, out))
            except TargetError as e:
                say(f"{form.key}: its outputs could not be fetched: {e}")
        rec = bench.evaluate(form, m, ws, n=n, warmup=warmup, outputs=local_out)
        rec.cwd = m.cwd
    rec.target = Where.of(target.name, target.facts)
    results.load(ws.results_on(target.name)).put(rec)
    arch = target_arch(target) if not arch_problem(target) else None
    if arch and not form.applies(ws.model):
        store.put(ws.ship_path_for(arch), form.key, arch_ship_fact(form, arch, ws, rec))
    return rec


def arch_ship_fact(form: Form, arch: str, ws: Workspace, rec: RunRecord) -> ShipCheck:
    """What a run of the form's `arch` bundle on a target says of that bundle: its sizes (its
    manifest), whether it ran and matched eager, its start-up and peak RSS there."""
    fact = ShipCheck(passed=bench.judged_ok(rec), model=ws.model.text, checked_at=stamp())
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
    fact.reason = "" if fact.passed else (rec.error or rec.status)
    fact.startup_median_s = median(rec.wall_s) if fact.passed else None
    fact.peak_rss_median_bytes = median(rec.peak_rss_bytes) if fact.passed else None
    fact.max_abs_diff = rec.max_abs_diff
    fact.n = len(rec.wall_s)
    fact.stderr_tail = rec.stderr_tail[-4:]
    return fact
