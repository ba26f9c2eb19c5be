"""The glue between the form registry and the generic bundle machinery (`deploytui.ship`):
`spec(form, ws=WS)` says what a form ships for a model as plain data; `check(form, ws=WS)` bundles it,
runs it isolated, judges it with the bench's own evaluate path (numerics.compare_files against
the model's reference.safetensors) and stores the verdict in artifacts/<slug>/ship.json.

A new form needs nothing here when it is compiled (its program, model files and the non-system
libraries its probe step found ship, `argv` becomes the run entry); a new Python runner needs an
entry in its family's `ship_scripts` (registry.RUNNER_SCRIPTS): itself when it imports no more of
deploytui than runners.protocol, else a counterpart that does not.

`python -m deploytui.scenarios.isolated.shipping wheelhouse` fills the wheelhouse the Python
checks install from
(the exact pins of every Python runtime the build probed; `make wheelhouse`).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any

from deploytui.core import defaults, paths
from deploytui.core.modelref import LIBRARY_KINDS, LIBRARY_PACKAGE, ModelRef
from deploytui.core.record import stamp
from deploytui.core.record_parts import median
from deploytui.core.workspace import Workspace
from deploytui.families import registry
from deploytui.ship import store
from deploytui.ship import wheelhouse as wheels
from deploytui.ship.bundler import Bundle, ShipError, bundle, verify
from deploytui.ship.pysource import plain_modules
from deploytui.ship.spec import BIN_DIR, MODEL_DIR, VENV, BundleSpec, Library
from deploytui.ship.store import ShipCheck
from deploytui.spec import forms
from deploytui.spec.manifest import Manifest, availability, runtime_facts
from deploytui.spec.manifest import load as load_manifest

PY_DIR = "py"  # a Python bundle's modules: the runner, protocol.py, the model's source, model.json


def default_dir(form: forms.Form, ws: Workspace) -> Path:
    return ws.bundles_dir / form.key


def wheelhouse() -> Path:
    return paths.cache_dir() / "wheelhouse"


def _bundle_path(rel: str, program: str | None) -> str:
    return f"{BIN_DIR}/{Path(rel).name}" if rel == program else f"{MODEL_DIR}/{Path(rel).name}"


def _graph_forms() -> list[str]:
    """The fp32 forms whose files carry the model's graph (they ship without its Python source)."""
    return [
        f.key
        for f in registry.FORMS
        if not f.variant and not any(i.kind == forms.MODEL_SOURCE for i in f.inspect)
    ]


def _model_source(ref: ModelRef) -> list[tuple[str, str]]:
    """The model's Python source as plain modules under py/, and py/model.json naming its factory."""
    if ref.kind in LIBRARY_KINDS:
        raise ShipError(
            f"{ref.kind}: models have no eager bundle yet (it would need {LIBRARY_PACKAGE[ref.kind]} in the "
            f"bundle's venv): ship a form that carries the graph ({', '.join(_graph_forms()[:3])}, ...)"
        )
    if ref.kind == "file":
        module = Path(ref.target).stem
        texts = {f"{module}.py": Path(ref.target).read_text()}
    else:
        dotted = "deploytui.models.zoo" if ref.kind == "zoo" else ref.target
        module = dotted.rsplit(".", 1)[-1]
        package = "deploytui" if ref.kind == "zoo" else dotted.split(".")[0]
        try:
            texts = plain_modules(dotted, package)
        except (ImportError, OSError) as e:
            raise ShipError(f"cannot copy the source of {ref.text}: {e}") from None
    where = {"module": module, "factory": ref.factory or ref.target, "kwargs": ref.kwargs}
    texts["model.json"] = json.dumps(where) + "\n"
    return [(f"{PY_DIR}/{name}", text) for name, text in sorted(texts.items())]


def spec(form: forms.Form, manifest: Manifest | None = None, *, ws: Workspace) -> BundleSpec:
    """What `form` ships for the model, from the registry and the runtime facts the build probed."""
    ref = ws.model
    manifest = manifest if manifest is not None else load_manifest(ws)
    why = availability(form, ws, manifest)
    if why:
        raise ShipError(f"{form.key}: {why}")
    facts, why = runtime_facts(form, ws, manifest)
    if facts is None:
        raise ShipError(f"{form.key}: {why}")
    art = ws.artifacts
    program = form.executable.replace("{m}", ref.slug) if form.executable else None
    where = {f: _bundle_path(f, program) for f in form.ship_files(ws)}
    inputs = f"{MODEL_DIR}/{ws.inputs_path.name}"
    files = (*((art / f, where[f]) for f in where), (ws.inputs_path, inputs))
    prefix = f"{art}/"

    def word(w: str) -> str:  # an artifact path of the command -> its path in the bundle
        return where.get(w[len(prefix) :], w) if w.startswith(prefix) else w

    command = form.command(ws)
    if form.compiled:
        libs = [lib for lib in facts.get("libraries", []) if lib.get("exists")]
        bundled = [lib for lib in libs if not lib.get("system")]
        return BundleSpec(
            name=form.key,
            entry=tuple(word(w) for w in command),
            inputs=inputs,
            files=files,
            programs=(where[program or ""],),
            libraries=tuple(Library(lib["name"], Path(lib["path"])) for lib in bundled),
            system_libraries=tuple(lib["name"] for lib in libs if lib.get("system")),
            note=form.note,
            extra={
                "model": ref.text,
                "cuda_libraries": [lib["name"] for lib in bundled if is_cuda(lib["name"], lib["path"])],
            },
        )
    runner = form.runner or ""
    if runner not in registry.RUNNER_SCRIPTS:
        raise ShipError(f"{form.key}: no bundle runner for {runner} (its family's ship_scripts)")
    rest = command[command.index(runner) + 1 :]
    if "--model" in rest:  # the bundle names its model in py/model.json
        i = rest.index("--model")
        del rest[i : i + 2]
    texts = [
        (f"{PY_DIR}/{name}", text) for name, text in plain_modules(registry.RUNNER_SCRIPTS[runner]).items()
    ]
    if any(i.kind == forms.MODEL_SOURCE for i in form.inspect):
        texts += _model_source(ref)
    script = f"{PY_DIR}/{registry.RUNNER_SCRIPTS[runner].rsplit('.', 1)[-1]}.py"
    return BundleSpec(
        name=form.key,
        entry=(f"{VENV}/bin/python", script, *(word(w) for w in rest)),
        inputs=inputs,
        files=files,
        texts=tuple(sorted(dict(texts).items())),
        requirements=requirements(facts),
        python=f"{sys.version_info.major}.{sys.version_info.minor}",
        note=form.note,
        extra={"model": ref.text},
    )


def requirements(facts: dict[str, Any]) -> tuple[str, ...]:
    """A Python runtime's exact pins: every distribution of its probed closure."""
    return tuple(f"{d['name']}=={d['version']}" for d in facts.get("distributions", []))


def is_cuda(name: str, path: str) -> bool:
    """A CUDA library: from an NVIDIA wheel (site-packages/nvidia/…), or torch's CUDA half."""
    return "/nvidia/" in path or "_cuda" in name or "nvshmem" in name


def make(form: forms.Form, out: Path | None = None, tar: bool = False, *, ws: Workspace) -> Bundle:
    return bundle(spec(form, ws=ws), out or default_dir(form, ws), tar=tar)


def reason(error: str, stderr_tail: list[str]) -> str:
    """The program's or the loader's own line: a Rust panic's message, not its backtrace note."""
    lines = [ln.strip() for ln in stderr_tail if ln.strip() and not ln.startswith("note: run with")]
    telling = [ln for ln in lines if "cannot open shared object" in ln or "Failed to load" in ln]
    if telling and telling[-1] not in error:
        head = error.split(":", 1)[0]
        return f"{head}: {telling[-1][:300]}"
    return error


def _sizes(manifest: dict[str, Any], check: ShipCheck) -> None:
    """What a bundle's manifest says of its size, and CUDA's share of it."""
    check.unpacked_bytes = manifest["unpacked_bytes"]
    check.compressed_bytes = manifest["compressed_bytes"]
    check.files = len(manifest["files"])
    check.libraries = list(manifest.get("libraries", []))
    cuda = [f"lib/{n}" for n in manifest.get("cuda_libraries", [])]
    if cuda:
        check.cuda_bytes = sum(manifest["files"][f]["bytes"] for f in cuda)
        check.cuda_compressed_bytes = sum(manifest["files"][f]["gz_bytes"] for f in cuda)


def venv_dir(requirements: list[str], python: str) -> Path:
    """The venv a Python bundle's check runs in: one per set of pins and Python, in the cache
    (the bundles of one runtime share it, as they would on one target)."""
    key = hashlib.sha256("\n".join([python, *sorted(requirements)]).encode()).hexdigest()[:16]
    return paths.cache_dir() / "ship" / "venvs" / key


def _venv(root: Path, manifest: dict[str, Any], fact: ShipCheck, say: Any) -> Path:
    """The bundle's venv, made inside the sandbox (offline, from the wheelhouse) unless made."""
    from deploytui.launchers import sandbox

    venv = venv_dir(manifest["requirements"], manifest["target_provides"]["python"])
    if not sandbox.venv_ready(venv):
        say(f"filling the wheelhouse {wheelhouse()} (pip download of the exact pins, once)")
        err = wheels.fill(manifest["requirements"], wheelhouse(), pip_env())
        if err:
            raise ShipError(err)
        try:  # the pins' wheels alone, as a target is sent (scenarios/remote)
            only = wheels.pinned_set(manifest["requirements"], wheelhouse())
        except ValueError as e:
            raise ShipError(str(e)) from None
        say(f"making the venv inside the sandbox (pip --no-index from the pins' wheels) → {venv}")
        setup = sandbox.setup_venv(root, only, venv)
        fact.setup_s = round(setup.wall_s, 1)
        if not setup.ok:
            shutil.rmtree(venv, ignore_errors=True)
            raise ShipError(setup.error)
    fact.venv_bytes = sum(p.stat().st_size for p in venv.rglob("*") if p.is_file() and not p.is_symlink())
    return venv


def check(
    form: forms.Form,
    out: Path | None = None,
    *,
    ws: Workspace,
    tar: bool = False,
    n: int = defaults.SHIP_RUNS,
    warmup: int = defaults.WARMUP,
    repeat: int = defaults.REPEAT,
    timeout_s: float = defaults.RUN_TIMEOUT_S,
    rebuild: bool = True,
    save: bool = True,
    cancel: threading.Event | None = None,
    on_step: Any = None,
) -> ShipCheck:
    """Bundle `form` for the model (unless `rebuild` is False and the folder is there), run it in
    the sandbox and judge it like `bench` does. The isolated fact, also stored in ship.json."""
    from deploytui.launchers import sandbox
    from deploytui.scenarios.startup import bench

    ref = ws.model
    say = on_step or (lambda _msg: None)
    root = (out or default_dir(form, ws)).resolve()
    fact = ShipCheck(passed=False, model=ref.text, bundle=str(root), checked_at=stamp())
    try:
        if rebuild or not (root / "manifest.json").exists():
            say(f"bundling {form.key} ({ref.text}) → {root}")
            manifest = bundle(spec(form, ws=ws), root, tar=tar).manifest
        else:
            manifest = json.loads((root / "manifest.json").read_text())
        _sizes(manifest, fact)
        venv = _venv(root, manifest, fact, say) if manifest.get("requirements") else None
        say(f"running {form.key} in the sandbox ({warmup} warm-up + {n})")
        m = sandbox.run_checked(
            root, n=n, warmup=warmup, repeat=repeat, timeout_s=timeout_s, venv=venv, cancel=cancel
        )
        rec = bench.evaluate(form, m, ws, n=n, warmup=warmup, outputs=sandbox.outputs_path(root))
        floor = sandbox.floor(root, n=n, warmup=warmup)
        passed = bench.judged_ok(rec)
        why = "" if passed else reason(rec.error or rec.status, rec.stderr_tail)
        mismatch = verify(root)
        if mismatch and not passed:
            why += f" (the bundle: {mismatch})"
        fact.passed, fact.reason = passed, why
        fact.startup_median_s = median(rec.wall_s) if passed else None
        fact.peak_rss_median_bytes = median(rec.peak_rss_bytes) if passed else None
        fact.max_abs_diff = rec.max_abs_diff
        fact.stages_ms = rec.stages_ms
        fact.sandbox_floor_s = floor
        fact.n = len(rec.wall_s)
        fact.stderr_tail = rec.stderr_tail[-4:]
    except (ShipError, OSError, KeyError, ValueError) as e:
        fact.reason = str(e)
    if save and not form.applies(ref):  # a form that cannot exist for the model has no verdict
        store.put(ws.ship_path, form.key, fact)
    return fact


def pip_env() -> dict[str, str]:
    return {"PIP_CACHE_DIR": str(paths.cache_dir() / "pip")}


def facts(ws: Workspace) -> dict[str, ShipCheck]:
    """form key → its last isolated check for the model (artifacts/<slug>/ship.json)."""
    return store.load(ws.ship_path).forms


def fill_wheelhouse(ws: Workspace) -> int:
    """Download every probed Python runtime's exact pins into the wheelhouse; prints what it did
    (the runtimes as the build of the workspace's model probed them)."""
    manifest = load_manifest(ws)
    status = 0
    for runtime in registry.RUNTIME_DISTRIBUTIONS:
        form = next(f for f in registry.FORMS if f.runtime == runtime)
        got, why = runtime_facts(form, ws, manifest)
        if got is None:
            print(f"{runtime}: {why}", file=sys.stderr)
            status = 1
            continue
        t0 = time.monotonic()
        err = wheels.fill(list(requirements(got)), wheelhouse(), pip_env())
        done = err or f"{len(requirements(got))} pins in {wheelhouse()}"
        print(f"{runtime}: {done} ({time.monotonic() - t0:.1f} s)")
        status = status or (1 if err else 0)
    return status


if __name__ == "__main__":
    if sys.argv[1:2] != ["wheelhouse"] or len(sys.argv) > 3:
        sys.exit("usage: python -m deploytui.scenarios.isolated.shipping wheelhouse [ARTIFACTS]")
    sys.exit(fill_wheelhouse(Workspace.from_env(artifacts=sys.argv[2] if len(sys.argv) == 3 else None)))
