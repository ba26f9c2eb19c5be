"""The glue between the form registry and the generic bundle machinery (`deploytui.ship`):
`spec(form)` says what a form ships as plain data; `check(form)` bundles it, runs it isolated,
judges it with the bench's own evaluate path and stores the verdict in artifacts/ship.json.
"""

from __future__ import annotations

import json
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any

from deploytui import a1, forms, paths
from deploytui.manifest import load as load_manifest
from deploytui.manifest import runtime_facts
from deploytui.ship import store
from deploytui.ship.bundler import Bundle, ShipError, bundle, verify
from deploytui.ship.spec import BIN_DIR, MODEL_DIR, VENV, BundleSpec, Library

SCRIPTS = Path(__file__).with_name("ship") / "scripts"
# each Python runner's standalone counterpart (imports only its runtime, never deploytui)
RUNNER_SCRIPTS = {
    "deploytui.runners.torch_runner": "torch_load.py",
    "deploytui.runners.ort_runner": "ort_load.py",
}
LOAD_SCRIPT = "load.py"


def store_path() -> Path:
    return paths.artifacts_dir() / store.NAME


def default_dir(form: forms.Form) -> Path:
    return paths.ROOT / "bundles" / form.key


def wheelhouse() -> Path:
    return paths.cache_dir() / "wheelhouse"


def _bundle_path(rel: str, program: str | None) -> str:
    return f"{BIN_DIR}/{Path(rel).name}" if rel == program else f"{MODEL_DIR}/{Path(rel).name}"


def spec(form: forms.Form, manifest: dict[str, Any] | None = None) -> BundleSpec:
    """What `form` ships, from the registry and the runtime facts the build probed."""
    manifest = manifest if manifest is not None else load_manifest()
    facts, why = runtime_facts(form, manifest)
    if facts is None:
        raise ShipError(f"{form.key}: {why}")
    art = paths.artifacts_dir()
    where = {f: _bundle_path(f, form.executable) for f in form.ship_files()}
    files = tuple((art / f, where[f]) for f in form.ship_files())

    def word(w: str) -> str:
        return where.get(w[len("{art}/") :], w) if w.startswith("{art}/") else w

    if form.compiled:
        libs = [lib for lib in facts.get("libraries", []) if lib.get("exists")]
        bundled = [lib for lib in libs if not lib.get("system")]
        return BundleSpec(
            name=form.key,
            entry=tuple(word(w) for w in form.argv),
            files=files,
            programs=(where[form.executable or ""],),
            libraries=tuple(Library(lib["name"], Path(lib["path"])) for lib in bundled),
            system_libraries=tuple(lib["name"] for lib in libs if lib.get("system")),
            note=form.note,
            extra={"cuda_libraries": [lib["name"] for lib in bundled if is_cuda(lib["name"], lib["path"])]},
        )
    runner = form.runner or ""
    if runner not in RUNNER_SCRIPTS:
        raise ShipError(f"{form.key}: no standalone script for the runner {runner}")
    rest = list(form.argv[form.argv.index(runner) + 1 :])
    texts = [("input.json", json.dumps({"input": a1.input_values()}) + "\n")]
    from deploytui.ship.pysource import plain_modules

    for ins in form.inspect:
        if ins.kind == forms.MODEL_SOURCE and ins.path.startswith("src/") and ins.path.endswith(".py"):
            module = ins.path[len("src/") : -len(".py")].replace("/", ".")
            texts += sorted(plain_modules(module).items())
    return BundleSpec(
        name=form.key,
        entry=(f"{VENV}/bin/python", LOAD_SCRIPT, *(word(w) for w in rest)),
        files=(*files, (SCRIPTS / RUNNER_SCRIPTS[runner], LOAD_SCRIPT)),
        texts=tuple(texts),
        requirements=tuple(f"{d['name']}=={d['version']}" for d in facts.get("distributions", [])),
        python=f"{sys.version_info.major}.{sys.version_info.minor}",
        note=form.note,
    )


def is_cuda(name: str, path: str) -> bool:
    """A CUDA library: from an NVIDIA wheel (site-packages/nvidia/…), or torch's CUDA half."""
    return "/nvidia/" in path or "_cuda" in name or "nvshmem" in name


def make(form: forms.Form, out: Path | None = None, tar: bool = False) -> Bundle:
    return bundle(spec(form), out or default_dir(form), tar=tar)


def reason(error: str, stderr_tail: list[str]) -> str:
    """The program's or the loader's own line: a Rust panic's message, not its backtrace note."""
    lines = [ln.strip() for ln in stderr_tail if ln.strip() and not ln.startswith("note: run with")]
    telling = [ln for ln in lines if "cannot open shared object" in ln or "Failed to load" in ln]
    if telling and telling[-1] not in error:
        head = error.split(":", 1)[0]
        return f"{head}: {telling[-1][:300]}"
    return error


def check(
    form: forms.Form,
    out: Path | None = None,
    *,
    tar: bool = False,
    n: int = 5,
    warmup: int = 1,
    timeout_s: float = 120.0,
    rebuild: bool = True,
    save: bool = True,
    cancel: threading.Event | None = None,
    on_step: Any = None,
) -> dict[str, Any]:
    """Bundle `form` (unless `rebuild` is False and the folder is there), run it in the sandbox
    and judge it like `bench` does. The isolated fact, also stored in artifacts/ship.json."""
    from deploytui import bench
    from deploytui.ship import sandbox

    say = on_step or (lambda _msg: None)
    root = (out or default_dir(form)).resolve()
    fact: dict[str, Any] = {"verdict": store.FAIL, "checked_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    try:
        if rebuild or not (root / "manifest.json").exists():
            say(f"bundling {form.key} → {root}")
            b = bundle(spec(form), root, tar=tar)
            manifest = b.manifest
        else:
            manifest = json.loads((root / "manifest.json").read_text())
        fact.update(
            unpacked_bytes=manifest["unpacked_bytes"],
            compressed_bytes=manifest["compressed_bytes"],
            files=len(manifest["files"]),
            libraries=manifest.get("libraries", []),
        )
        cuda = [f"lib/{n}" for n in manifest.get("cuda_libraries", [])]
        if cuda:
            fact["cuda_bytes"] = sum(manifest["files"][f]["bytes"] for f in cuda)
            fact["cuda_compressed_bytes"] = sum(manifest["files"][f]["gz_bytes"] for f in cuda)
        python = bool(manifest.get("requirements"))
        if python and not (root / VENV / "bin" / "python").exists():
            say(f"filling the wheelhouse {wheelhouse()} (pip download of the exact pins, once)")
            err = sandbox.fill_wheelhouse(manifest["requirements"], wheelhouse(), _pip_env())
            if err:
                raise ShipError(err)
            say("making the venv inside the sandbox (pip --no-index from the wheelhouse)")
            setup = sandbox.setup_venv(root, wheelhouse())
            fact["setup_s"] = round(setup.wall_s, 1)
            if not setup.ok:
                shutil.rmtree(root / VENV, ignore_errors=True)
                raise ShipError(setup.error)
        if python:
            venv = root / VENV
            fact["venv_bytes"] = sum(
                p.stat().st_size for p in venv.rglob("*") if p.is_file() and not p.is_symlink()
            )
        want = bench.reference_logits()
        say(f"running {form.key} in the sandbox ({warmup} warm-up + {n})")
        m = sandbox.run_checked(root, n=n, warmup=warmup, timeout_s=timeout_s, python=python, cancel=cancel)
        rec = bench.evaluate(form, m, want, n=n, warmup=warmup)
        floor = sandbox.floor(root, n=n, warmup=warmup)
        passed = rec.status == "ok" and bool(rec.within_tol)
        why = "" if passed else reason(rec.error or rec.status, rec.stderr_tail)
        mismatch = verify(root)
        if mismatch and not passed:
            why += f" (the bundle: {mismatch})"
        fact.update(
            verdict=store.PASS if passed else store.FAIL,
            reason=why,
            startup_median_s=_median(rec.wall_s) if passed else None,
            peak_rss_median_bytes=_median(rec.peak_rss_bytes) if passed else None,
            max_abs_diff=rec.max_abs_diff,
            sandbox_floor_s=floor,
            n=len(rec.wall_s),
            stderr_tail=rec.stderr_tail[-4:],
        )
    except (ShipError, OSError, FileNotFoundError, KeyError, ValueError) as e:
        fact["reason"] = str(e)
    if save:
        store.put(store_path(), form.key, fact)
    return fact


def _median(xs: list[Any]) -> Any:
    import statistics

    return statistics.median(xs) if xs else None


def _pip_env() -> dict[str, str]:
    return {"PIP_CACHE_DIR": str(paths.cache_dir() / "pip")}


def facts() -> dict[str, dict[str, Any]]:
    """form key → its last isolated check (artifacts/ship.json)."""
    return store.load(store_path())
