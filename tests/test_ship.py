"""`deploytui ship`: real bundles of every form, checked in the real sandbox (bubblewrap).

Each bundle is made once per session into a temporary folder and checked there; nothing is
written into the project (save=False keeps each model's ship.json as it is). a1's compiled
forms, convnet's (slow: it builds convnet whole) and the Python forms' (slow: a venv made
offline inside the sandbox) all run in `make test`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from deploytui.core.modelref import parse
from deploytui.families import registry
from deploytui.launchers import sandbox
from deploytui.scenarios.isolated import shipping
from deploytui.ship import store, wheelhouse
from deploytui.ship.bundler import ShipError, patchelf, verify
from tui_support import a1_at
from workspaces import built

PASS_ISOLATED = (
    "tract",
    "onnxruntime-native",
    "cpp-executorch",
    "burn-file",
    "burn-embed",
    "burn-st",
    "burn-onnx-embed",
    "burn-onnx-bpk",
    "cpp-aoti-lean",
    "cpp-torchscript",
    "cpp-aoti",
)
COMPILED = tuple(f.key for f in registry.FORMS if f.compiled)
A1, CONVNET = built("a1"), built("convnet")  # in the real artifacts folder
RELOCATION_PANIC = "Failed to load burnpack file"


@pytest.fixture(scope="session")
def bundles_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Where this session's bundles go; removed at the end (cpp-aoti's alone is 2.5 GiB)."""
    root = tmp_path_factory.mktemp("bundles")
    yield root
    shutil.rmtree(root, ignore_errors=True)


class _Checked(dict):
    """Each compiled form of a model bundled and checked once per session, when a test first
    asks for it (1 warm-up + 2 runs in the sandbox, K=2)."""

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    def __missing__(self, item: tuple[str, str]) -> store.ShipCheck:
        slug, key = item
        where = self.root / slug / key
        self[item] = shipping.check(
            registry.get(key), where, ws=built(slug), n=2, warmup=1, repeat=2, save=False
        )
        if (self[item].unpacked_bytes or 0) > 1 << 30:  # cpp-aoti: 2.5 GiB; its fact is enough
            shutil.rmtree(where, ignore_errors=True)
        return self[item]


@pytest.fixture(scope="session")
def built_convnet(built_artifacts: Path) -> Path:
    """convnet built whole, probe steps included (a bundle ships the libraries they found)."""
    from deploytui.builder import run_build, selected
    from deploytui.spec.context import BuildContext

    ctx = BuildContext.of(CONVNET)
    manifest = run_build(ctx)
    failed = {
        n: manifest.steps[n].reason for n in manifest.failed_steps() if n in {s.name for s in selected(ctx)}
    }
    assert not failed, failed
    return built_artifacts


@pytest.fixture(scope="session")
def checked(built_artifacts: Path, bundles_dir: Path) -> _Checked:
    return _Checked(bundles_dir)


# checked on convnet: the native OpenVINO runner, and the int8 variants (they ship as their
# parents do, and pass by their accuracy budget)
CONVNET_ISOLATED = (
    "openvino-native",
    "onnxruntime-native-int8",
    "tract-int8",
    "cpp-executorch-int8",
    "openvino-native-int8",
    "cpp-aoti-int8",
)


def test_every_compiled_form_is_expected():
    assert set(COMPILED) == {*PASS_ISOLATED, *CONVNET_ISOLATED, "burn-onnx-file"}


@pytest.mark.parametrize("key", CONVNET_ISOLATED)
def test_new_compiled_forms_of_convnet_run_isolated(built_convnet, checked, key):
    fact = checked["convnet", key]
    assert fact.passed, fact.reason
    if registry.get(key).variant:  # int8: not eager's to 1e-6, within its budget all the same
        assert fact.max_abs_diff is not None and fact.max_abs_diff > 1e-6


@pytest.mark.parametrize("key", PASS_ISOLATED)
def test_compiled_bundle_of_a1_runs_isolated(checked, key):
    fact = checked["a1", key]
    assert fact.passed, fact.reason
    assert fact.max_abs_diff is not None and fact.max_abs_diff <= 1e-6  # a1's tolerance
    assert fact.startup_median_s > 0 and fact.peak_rss_median_bytes > 0
    assert fact.stages_ms["load"] >= 0 and "steady_forward" in fact.stages_ms
    assert 0 < fact.compressed_bytes < fact.unpacked_bytes or fact.unpacked_bytes < 10_000_000


@pytest.mark.slow
@pytest.mark.parametrize("key", [f.key for f in registry.FORMS if f.compiled])
def test_compiled_bundle_of_convnet_runs_isolated_or_says_why(built_convnet, checked, key):
    """convnet: the C++ and burn-onnx forms ship and run; the hand-written burn forms do not
    apply to it, and burn-onnx-file fails the way it fails for a1."""
    form = registry.get(key)
    fact = checked["convnet", key]
    if form.applies(CONVNET.model):
        assert not fact.passed and "not applicable" in fact.reason
        assert fact.compressed_bytes is None  # no bundle made
    elif key == "burn-onnx-file":
        assert not fact.passed and RELOCATION_PANIC in fact.reason, fact.reason
    else:  # a variant (int8) passed by its accuracy budget, not eager's 1e-4
        assert fact.passed, fact.reason
        assert fact.startup_median_s > 0 and (form.variant or fact.max_abs_diff <= 1e-4)


def test_cpp_aoti_brings_the_cuda_stack(checked):
    fact = checked["a1", "cpp-aoti"]
    assert {"libtorch_cuda.so", "libcublasLt.so.13"} <= set(fact.libraries)
    assert fact.cuda_bytes > fact.unpacked_bytes / 2  # most of the bundle is CUDA's
    lean = checked["a1", "cpp-aoti-lean"]
    assert "libtorch_cuda.so" not in lean.libraries and lean.cuda_bytes < 20 << 20


def test_burn_onnx_file_fails_isolated_with_the_relocation_panic(checked):
    fact = checked["a1", "burn-onnx-file"]
    assert not fact.passed
    assert RELOCATION_PANIC in fact.reason, fact.reason
    bpk = checked["a1", "burn-onnx-bpk"]  # the same generated model, its .bpk shipped beside it
    assert (
        bpk.passed
        and "model/a1_onnx.bpk" in json.loads((Path(bpk.bundle) / "manifest.json").read_text())["files"]
    )


def test_bundle_manifest_lists_every_file(checked, bundles_dir):
    checked["a1", "cpp-aoti-lean"]
    root = bundles_dir / "a1" / "cpp-aoti-lean"
    manifest = json.loads((root / "manifest.json").read_text())
    on_disk = sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and p.name != "manifest.json" and p.parent.name != "check"
    )
    assert sorted(manifest["files"]) == on_disk
    assert "model/inputs.safetensors" in on_disk and "model/a1_aoti_lean.pt2" in on_disk
    assert manifest["unpacked_bytes"] == sum(r["bytes"] for r in manifest["files"].values())
    lib = manifest["files"]["lib/libc10.so"]
    from deploytui.core.hashing import sha256_file

    assert lib["sha256"] == sha256_file(root / "lib/libc10.so")
    assert "libc.so.6" in manifest["target_provides"]["system_libraries"]
    assert {"libtorch_cpu.so", "libc10.so"} <= set(manifest["libraries"])
    assert verify(root) == ""


def test_runpath_is_origin_relative_and_run_is_one_line(checked, bundles_dir):
    checked["a1", "cpp-aoti-lean"], checked["a1", "burn-embed"]
    root = bundles_dir / "a1" / "cpp-aoti-lean"

    def rpath(p: Path) -> str:
        return subprocess.run(
            [patchelf(), "--print-rpath", str(p)], capture_output=True, text=True, check=True
        ).stdout.strip()

    assert rpath(root / "bin/cpp-aoti") == "$ORIGIN/../lib"
    assert all(rpath(p) == "$ORIGIN" for p in (root / "lib").iterdir())
    protocol = '--inputs "$I" --outputs "$O" --repeat "$K" "$@"'  # ./run [OUT [K [INPUTS]]] [flags]
    words = 'O="${1:-outputs.safetensors}"; K="${2:-10}"; I="${3:-$B/model/inputs.safetensors}"'
    assert words in (root / "run").read_text().splitlines()
    execs = [ln for ln in (root / "run").read_text().splitlines() if "exec " in ln]
    assert execs == [
        'LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" '
        f'exec "$B/bin/cpp-aoti" "$B/model/a1_aoti_lean.pt2" {protocol}'
    ]
    burn = bundles_dir / "a1" / "burn-embed"
    assert [ln for ln in (burn / "run").read_text().splitlines() if "exec " in ln] == [
        f'exec "$B/bin/burn-embed" {protocol}'
    ]
    # burn binaries need nothing: no lib/, the program as it was built
    assert not (burn / "lib").exists()


def test_the_run_entry_works_outside_the_sandbox_too(checked, bundles_dir, tmp_path):
    """`./run OUT K` from anywhere: the bundle finds itself, the outputs go where asked."""
    checked["a1", "burn-embed"]
    out = tmp_path / "y.safetensors"
    res = subprocess.run(
        [str(bundles_dir / "a1" / "burn-embed" / "run"), str(out), "0"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout.strip().splitlines()[-1])["outputs"] == 1
    from deploytui.judge.numerics import compare_files

    (diff,) = compare_files(out, A1.reference_path, 1e-6, 0.0)
    assert diff.within_tol
    # another inputs file and the runner's flags after it (a serving cell's, on a target)
    run = [str(bundles_dir / "a1" / "burn-embed" / "run"), str(out), "3", str(A1.inputs_path)]
    res = subprocess.run(
        [*run, "--warmup", "2", "--threads", "1"], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    line = json.loads(res.stdout.strip().splitlines()[-1])
    assert res.returncode == 0 and line["warmup"] == 2 and len(line["forward_ms"]) == 3, res.stderr


def test_a_bundle_missing_a_library_fails_with_the_loaders_line(checked, bundles_dir, tmp_path):
    checked["a1", "cpp-aoti-lean"]
    src = bundles_dir / "a1" / "cpp-aoti-lean"
    broken = tmp_path / "cpp-aoti-lean"
    shutil.copytree(src, broken, copy_function=os.link)  # hard links: no copy of 400 MB
    (broken / "lib/libc10.so").unlink()
    try:
        fact = shipping.check(
            registry.get("cpp-aoti-lean"), broken, ws=A1, n=1, warmup=0, rebuild=False, save=False
        )
    finally:
        shutil.rmtree(broken)
    assert not fact.passed
    assert "libc10.so: cannot open shared object file" in fact.reason, fact.reason
    assert "lib/libc10.so is missing" in fact.reason


def test_a_bundle_missing_its_model_file_fails_with_the_programs_line(checked, bundles_dir, tmp_path):
    checked["a1", "burn-onnx-bpk"]
    broken = tmp_path / "burn-onnx-bpk"
    shutil.copytree(bundles_dir / "a1" / "burn-onnx-bpk", broken)
    (broken / "model/a1_onnx.bpk").unlink()
    fact = shipping.check(
        registry.get("burn-onnx-bpk"), broken, ws=A1, n=1, warmup=0, rebuild=False, save=False
    )
    assert not fact.passed
    assert "model/a1_onnx.bpk is missing from the bundle" in fact.reason, fact.reason


def _tree(root: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in root.rglob("*") if not p.is_symlink()}


def test_a_check_writes_nothing_outside_its_bundle(checked, bundles_dir, built_artifacts, tmp_path):
    """The check (save=False) leaves the artifacts as they were; in the sandbox the bundle is
    read-only and only its check/ folder (/out) is writable."""
    checked["a1", "burn-embed"]
    before = _tree(built_artifacts)
    root = tmp_path / "burn-st"
    fact = shipping.check(registry.get("burn-st"), root, ws=A1, n=1, warmup=0, save=False)
    assert fact.passed, fact.reason
    assert _tree(built_artifacts) == before
    written = {p.relative_to(root).parts[0] for p in root.rglob("*")}
    assert written <= {"bin", "model", "run", "manifest.json", "check"}


def test_the_sandbox_sees_only_the_bundle_and_usr(checked, bundles_dir):
    checked["a1", "burn-embed"]
    root = bundles_dir / "a1" / "burn-embed"
    before = _tree(root)
    probe = (
        'test ! -e /work && test ! -e /root && test ! -e /etc/passwd && test -z "$VIRTUAL_ENV" '
        "&& echo net=$(grep -c : /proc/net/dev) && grep lo: /proc/net/dev >/dev/null; "
        "touch /bundle/x 2>/dev/null; echo w=$?"
    )
    res = subprocess.run(
        sandbox.sandbox_argv(root, ["/bin/sh", "-c", probe]), capture_output=True, text=True, check=False
    )
    assert res.returncode == 0, res.stderr
    assert "net=1" in res.stdout and "w=1" in res.stdout  # no interface but lo; the bundle read-only
    assert _tree(root) == before


def test_python_bundles_do_not_import_deploytui(built_artifacts):
    for key in ("torch-eager", "onnxruntime", "torchscript-script", "torch-export", "aoti-python"):
        spec = shipping.spec(registry.get(key), ws=A1)
        texts = dict(spec.texts)
        assert spec.entry[1] in texts and "py/protocol.py" in texts
        assert not any("deploytui" in ln for t in texts.values() for ln in t.splitlines() if "import" in ln)
        assert any(r.startswith(("torch==", "onnxruntime==")) for r in spec.requirements)
        assert spec.inputs == "model/inputs.safetensors" and "--model" not in spec.entry
    onnx = shipping.spec(registry.get("onnxruntime"), ws=A1)
    assert onnx.entry[:2] == ("venv/bin/python", "py/ort_runner.py")  # the runner itself ships
    assert any(r.startswith("safetensors==") for r in onnx.requirements)  # the protocol's files
    eager = shipping.spec(registry.get("torch-eager"), ws=A1)
    assert eager.entry[:3] == ("venv/bin/python", "py/torch_bundle.py", "eager")
    texts = dict(eager.texts)
    assert {"py/zoo.py", "py/a1_module.py", "py/a1.py", "py/units.py", "py/model.json"} <= set(texts)
    assert json.loads(texts["py/model.json"]) == {"module": "zoo", "factory": "a1", "kwargs": {}}
    mlp = dict(shipping._model_source(parse("mlp:depth=3")))  # a zoo factory's arguments come along
    assert json.loads(mlp["py/model.json"]) == {"module": "zoo", "factory": "mlp", "kwargs": {"depth": 3}}


def test_a_form_that_is_not_built_does_not_ship(tmp_path, monkeypatch):
    from tui_support import make_artifacts

    ws = a1_at(make_artifacts(tmp_path, built=("burn-embed",)))
    with pytest.raises(ShipError, match="cpp-aoti"):
        shipping.spec(registry.get("cpp-aoti"), ws=ws)
    fact = shipping.check(registry.get("cpp-aoti"), tmp_path / "b", ws=ws, save=False)
    assert not fact.passed and fact.reason


@pytest.mark.slow
@pytest.mark.parametrize("key", ["onnxruntime", "torch-eager"])
def test_python_bundle_runs_isolated(built_artifacts, bundles_dir, key):
    """The venv is made inside the sandbox from the wheelhouse (pip --no-index) into the cache,
    once per set of pins (`make test` on a fresh machine pays it once), then run there."""
    root = bundles_dir / "a1" / key
    fact = shipping.check(registry.get(key), root, ws=A1, n=2, warmup=1, repeat=2, save=False)
    assert fact.passed, fact.reason
    assert fact.max_abs_diff <= 1e-6 and fact.venv_bytes > 10 << 20
    reqs = (root / "requirements.txt").read_text().split()
    assert reqs and all("==" in r for r in reqs)
    assert not any((root / "venv").iterdir())  # the venv is mounted there, never written into the bundle
    # the pins alone make the venv: a target gets only their wheels (remote.bundles), not the
    # whole wheelhouse, so a requirement reached through an extra (torch's cuda-toolkit[cudart]
    # pulls nvidia-cuda-runtime) must be pinned too
    only = wheelhouse.pinned_set(reqs, shipping.wheelhouse())  # what the check's sandbox saw
    assert len(list(only.glob("*.whl"))) + len(list(only.glob("*.tar.gz"))) >= len(reqs)
    argv = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-index"]
    res = subprocess.run(
        [*argv, "--find-links", str(only), "-r", str(root / "requirements.txt")],
        capture_output=True, text=True, env={**os.environ, "PIP_CONFIG_FILE": "/dev/null"}, check=False,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-600:]


def test_the_report_lists_each_bundle_and_its_verdict(tmp_path, monkeypatch):
    from deploytui.scenarios.startup import results
    from deploytui.spec import manifest
    from deploytui.views import report
    from tui_support import make_artifacts, record

    art = make_artifacts(
        tmp_path,
        results={k: record(k, [3.0], 3.0) for k in ("burn-embed", "burn-onnx-file", "burn-st")},
    )
    ws = a1_at(art)
    ok = store.ShipCheck(True, compressed_bytes=2_300_000, unpacked_bytes=6_000_000)
    ok.startup_median_s, ok.peak_rss_median_bytes = 0.004, 4_400_000
    store.put(ws.ship_path, "burn-embed", ok)
    bad = store.ShipCheck(False, compressed_bytes=2_000_000, unpacked_bytes=5_000_000)
    bad.reason = f"exit 101: {RELOCATION_PANIC}"
    store.put(ws.ship_path, "burn-onnx-file", bad)
    text = report.markdown(ws, results.load(ws.results_path), manifest.load(ws))
    ships = text.split("## What ships", 1)[1].split("##", 1)[0]
    assert "| form | ships | bundle (.tar.gz) | runs isolated |" in ships
    lines = {ln.split(" | ")[0].strip("| "): ln for ln in ships.splitlines() if ln.startswith("| burn")}
    assert "2.2 MiB" in lines["burn-embed"] and "✓ (4.00 ms, 4.2 MiB)" in lines["burn-embed"]
    assert f"✗ exit 101: {RELOCATION_PANIC}" in lines["burn-onnx-file"]
    assert lines["burn-st"].count("–") >= 2  # not checked: no bundle, no verdict
    row = {r["form"]: r for r in report.rows(ws, results.load(ws.results_path), manifest.load(ws))}
    assert row["burn-embed"]["isolated"] is True and row["burn-embed"]["bundle_compressed_bytes"]
    assert row["burn-onnx-file"]["isolated"] is False and row["burn-st"]["isolated"] is None


def test_bench_records_carry_the_isolated_verdict(tmp_path, monkeypatch):
    """`bench --json`'s `isolated`: the ship.json entry, through RunRecord (and back)."""
    from deploytui.core.record import RunRecord
    from deploytui.scenarios.startup import bench
    from tui_support import make_artifacts

    ws = a1_at(make_artifacts(tmp_path, built=()))
    fact = store.ShipCheck(False, reason=f"exit 101: {RELOCATION_PANIC}", compressed_bytes=2_000_000)
    fact.stderr_tail = ["x"]
    store.put(ws.ship_path, "burn-onnx-file", fact)
    rec = bench.bench_form(registry.get("burn-onnx-file"), ws=ws)
    assert rec.status == "unavailable" and rec.isolated is not None
    back = RunRecord.from_json(json.loads(json.dumps(rec.to_json())))
    assert back.isolated == rec.isolated and back.isolated.reason == fact.reason
    assert bench.bench_form(registry.get("burn-embed"), ws=ws).isolated is None


def test_the_apps_ship_check_is_a_job_of_the_lane(copy_ws, tmp_path, monkeypatch):
    """i: the highlighted form bundled and checked in a worker; the UI keeps answering; the
    verdict lands in the model's ship.json and a notification."""
    import asyncio
    import time

    from deploytui.views.tui.app import DeployApp
    from deploytui.views.tui.session import SHIP
    from deploytui.views.tui.widgets.form_list import FormList

    ws = dataclasses.replace(copy_ws, bundles=tmp_path / "bundles")

    async def go() -> DeployApp:
        app = DeployApp(ws)
        async with app.run_test(size=(150, 45), notifications=True) as pilot:
            await pilot.pause()
            app.main.query_one("#forms", FormList).select_key("burn-embed")
            await pilot.pause()
            lane, asked = app.session.lane, []
            submit = lane.submit
            monkeypatch.setattr(lane, "submit", lambda job: (asked.append(job.kind), submit(job))[1])
            await pilot.press("i")
            assert SHIP in asked  # a job of the lane (a small bundle may be checked already)
            await pilot.press("j")  # the UI answers while the check runs
            await pilot.pause()
            assert app.main.current != "burn-embed"
            t0 = time.monotonic()
            while app.session.lane.running is not None and time.monotonic() - t0 < 120:
                await asyncio.sleep(0.1)
            await pilot.pause()
            assert any("burn-embed runs isolated" in n.message for n in app._notifications)
        return app

    asyncio.run(go())
    fact = store.load(ws.ship_path).forms["burn-embed"]
    assert fact.passed and (tmp_path / "bundles" / "a1" / "burn-embed" / "run").exists()
