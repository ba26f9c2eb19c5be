"""aarch64 (docs/arm64.md): the emulated arm64 target as users name it, what each kind of form
needs for another architecture, emulated timings never ranked; and (slow, in `make test` when
`make arm64` could make the root) a1's onnxruntime and cpp-executorch shipped for aarch64 and
proved in the emulated root, their outputs judged here against eager."""

from __future__ import annotations

import json

import pytest

from deploytui.core.record_parts import Where
from deploytui.families import registry
from deploytui.launchers import emulated, targets
from deploytui.launchers.ssh import Destination, TargetError
from deploytui.scenarios.isolated import cross
from deploytui.scenarios.remote import bench as remote
from deploytui.views.cli.main import main


def test_the_emulated_target_as_users_name_it():
    assert targets.destination("emulated:arm64") == Destination("emulated:arm64")
    assert targets.destination("emulated:aarch64") == Destination("emulated:arm64")
    assert targets.destination("pi@board") == Destination("board", "pi")
    with pytest.raises(TargetError, match="no emulated root for 'riscv64'"):
        targets.destination("emulated:riscv64")


def test_an_emulated_target_says_so_and_its_records_are_marked():
    facts = {"arch": "aarch64", "os": "Debian GNU/Linux 12 (bookworm)", "glibc": "glibc 2.36"}
    t = targets.Target("arm64-emulated", Destination("emulated:arm64"), {**facts, "emulated": True})
    assert t.describe().startswith("aarch64 emulated (qemu-user)")
    assert Where.of(t.name, t.facts).emulated
    assert remote.target_arch(t) == "aarch64" and remote.arch_problem(t) == ""


def test_without_the_root_the_target_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DEPLOYTUI_CACHE", str(tmp_path / "cache"))
    assert "make arm64" in emulated.problem("aarch64")
    code = main(["target", "add", "arm", "emulated:arm64", "--artifacts", str(tmp_path / "art")])
    _out, err = capsys.readouterr()
    assert code == 1 and err.count("\n") == 1 and "make arm64" in err


def test_each_kind_of_form_says_what_aarch64_needs():
    by_key = {f.key: f for f in registry.FORMS}
    assert cross.why_not(by_key["onnxruntime"], "aarch64") == ""
    assert cross.why_not(by_key["cpp-executorch"], "aarch64") == ""
    assert cross.why_not(by_key["openvino-native"], "aarch64") == ""
    assert "AOTInductor" in cross.why_not(by_key["cpp-aoti"], "aarch64")
    for key in ("burn-file", "tract", "onnxruntime-native"):
        why = cross.why_not(by_key[key], "aarch64")
        assert "cargo build --release --target aarch64-unknown-linux-gnu" in why, key
    with pytest.raises(ValueError, match="only aarch64"):
        cross.arch_of("riscv64")


def test_emulated_timings_are_never_ranked(copy_ws):
    from deploytui.core.record import RunRecord, RunStatus
    from deploytui.decisions import facts
    from deploytui.scenarios.startup import results

    path = copy_ws.results_on("arm64-emulated")
    path.parent.mkdir(parents=True, exist_ok=True)
    rec = RunRecord(
        form="onnxruntime", status=RunStatus.OK, n=3, wall_s=[1.0, 1.1, 1.2], peak_rss_bytes=[1, 2, 3]
    )
    rec.target = Where("arm64-emulated", arch="aarch64", emulated=True)
    results.load(path).put(rec)
    found, _ = facts.read(copy_ws, target="arm64-emulated")
    ort = next(f for f in found if f.key == "onnxruntime")
    assert ort.ran == "ok" and ort.startup_s is None and ort.peak_rss_bytes is None


@pytest.mark.slow
def test_a1_shipped_for_aarch64_runs_in_the_emulated_root(copy_ws, capsys):
    """onnxruntime (aarch64 wheels, a venv made in the root with its python3) and cpp-executorch
    (cross-compiled against the aarch64 wheel), each proved in the root and judged against x86's
    eager."""
    if why := emulated.problem("aarch64"):
        pytest.skip(why)
    art, bundles = str(copy_ws.artifacts), str(copy_ws.bundles)
    for key in ("onnxruntime", "cpp-executorch"):
        argv = ["ship", key, "--arch", "aarch64", "--check", "-n", "2", "--json"]
        code = main([*argv, "--model", "a1", "--artifacts", art, "--bundles", bundles])
        out, err = capsys.readouterr()
        fact = json.loads(out)["emulated"]
        assert code == 0 and fact["passed"], (key, fact["reason"], err[-2000:])
        manifest = json.loads((copy_ws.bundles_dir / "aarch64" / key / "manifest.json").read_text())
        assert manifest["arch"] == "aarch64"
    stored = json.loads((copy_ws.target_dir("arm64-emulated") / "results.json").read_text())
    rec = stored["forms"]["cpp-executorch"]
    assert rec["target"]["emulated"] and rec["target"]["arch"] == "aarch64" and rec["within_tol"]


def _running(pattern: str) -> bool:
    """Whether a process of this machine runs `pattern` (the root's are qemu's, visible here)."""
    from pathlib import Path

    for p in Path("/proc").glob("[0-9]*"):
        try:
            if pattern in (p / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                return True
        except OSError:
            pass
    return False


@pytest.mark.slow
def test_a_venv_setup_in_the_root_stops_whole_when_cancelled_or_killed(tmp_path):
    """What places a Python bundle there (watched.run: pip and its children) leaves nothing
    running in the root when cancelled, nor when deploytui itself is killed (SIGKILL)."""
    import subprocess
    import sys
    import threading
    import time

    from deploytui.launchers import watched

    if why := emulated.problem("aarch64"):
        pytest.skip(why)
    dest = Destination(emulated.host("aarch64"))
    nested = 'sh -c "sleep $1; :" & wait\n'  # a shell's child, as pip's are
    cancel = threading.Event()
    threading.Timer(3.0, cancel.set).start()
    with pytest.raises(TargetError, match=r"^cancelled$"):
        watched.run(dest, nested, "631", timeout_s=120, cancel=cancel)
    time.sleep(1.0)
    assert not _running("sleep 631")
    code = "from deploytui.launchers import watched, ssh, emulated; import sys; " + (
        "watched.run(ssh.Destination(emulated.host('aarch64')), sys.argv[1], '632', timeout_s=120)"
    )
    here = subprocess.Popen([sys.executable, "-c", code, nested])
    deadline = time.monotonic() + 60
    while not _running("sleep 632") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _running("sleep 632")
    here.kill()
    here.wait()
    deadline = time.monotonic() + 15
    while _running("sleep 632") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _running("sleep 632")


def test_a_forms_aarch64_state_beside_its_native_one(tmp_path):
    """What the app and the report show of aarch64 (scenarios/isolated/arch_state), from what is
    stored: the build's line, the bundle's size, its proof in the emulated root, or the stage."""
    from deploytui.core.modelref import parse
    from deploytui.core.record import RunRecord, RunStatus
    from deploytui.core.workspace import Workspace
    from deploytui.scenarios.isolated import arch_state
    from deploytui.scenarios.startup import results
    from deploytui.ship import store
    from deploytui.ship.store import ShipCheck
    from deploytui.views.report.targets import targets_section
    from deploytui.views.tui.compare_screen import arch_cell

    ws = Workspace.at(parse("a1"), tmp_path / "art", tmp_path / "bundles")
    by_key = {f.key: f for f in registry.FORMS}
    link = "aarch64-linux-gnu-g++ failed for cpp-torchscript: undefined reference to `cuptiEnableCallback'"
    arch_state.write_build(ws, "aarch64", {"onnxruntime": "", "cpp-torchscript": link, "executorch": ""})
    made = cross.default_dir(by_key["onnxruntime"], "aarch64", ws)
    made.mkdir(parents=True)
    (made / "manifest.json").write_text(json.dumps({"unpacked_bytes": 9 << 20, "compressed_bytes": 3 << 20}))
    check = ShipCheck(passed=True, compressed_bytes=3 << 20, emulated=True)
    store.put(ws.ship_path_for("aarch64"), "onnxruntime", check)

    ort = arch_state.other(by_key["onnxruntime"], "aarch64", ws)
    assert ort.built and ort.proved and ort.emulated and ort.compressed_bytes == 3 << 20
    assert arch_cell(ort).text == "✓ 3.0M emulated"
    ts = arch_state.other(by_key["cpp-torchscript"], "aarch64", ws)
    assert not ts.built and "cuptiEnableCallback" in ts.words()
    et = arch_state.other(by_key["executorch"], "aarch64", ws)
    assert et.built and et.proved is None and et.words() == "built, never run there"
    assert "AOTInductor" in arch_state.other(by_key["cpp-aoti"], "aarch64", ws).why
    assert "build --arch aarch64" in arch_state.other(by_key["openvino"], "aarch64", ws).why
    here, there = arch_state.every(by_key["onnxruntime"], ws, manifest=_empty_manifest())
    assert here.native and not here.built and there.arch == "aarch64"

    rec = RunRecord(form="onnxruntime", status=RunStatus.OK, n=1, wall_s=[7.7], peak_rss_bytes=[1])
    rec.target = Where("arm64-emulated", arch="aarch64", emulated=True)
    path = ws.results_on("arm64-emulated")
    path.parent.mkdir(parents=True, exist_ok=True)
    results.load(path).put(rec)
    page = "\n".join(targets_section(ws))
    assert "## On target arm64-emulated (emulated aarch64, qemu-user)" in page
    assert "start-up there (emulated)" in page and "never ranked" in page


def _empty_manifest():
    from deploytui.spec.manifest import Manifest

    return Manifest.empty()


def test_the_libraries_a_wheel_loads_from_other_wheels_are_found(monkeypatch):
    """cpp-torchscript's link: libtorch_cpu needs libcupti and libcudart from nvidia's wheels
    (the cross linker does not follow its RPATH); their distributions at this machine's versions
    are the companions unpacked for aarch64, and a library inside torch's own package is not."""
    from importlib.metadata import version
    from pathlib import Path

    import torch

    from deploytui.ship.spec import Library

    lib = Path(torch.__file__).parent / "lib"
    cupti = lib / "../../nvidia/cu13/lib/libcupti.so.13"
    if not cupti.exists():
        pytest.skip("this torch wheel brings no nvidia cupti")
    asked: list[tuple[str, str]] = []
    monkeypatch.setattr(cross, "unpacked", lambda d, v, a: asked.append((d, v)) or Path(f"/x/{d}"))
    libs = (Library("libc10.so", lib / "libc10.so"), Library("libcupti.so.13", cupti))
    assert cross.companions(libs, "torch", "aarch64") == (Path("/x/nvidia-cuda-cupti"),)
    assert asked == [("nvidia-cuda-cupti", version("nvidia-cuda-cupti").split("+")[0])]


def test_the_root_runs_as_a_real_chip_not_qemus_max(monkeypatch):
    """QEMU_CPU: Neoverse N1 unless the user names another (qemu's `max` changed a1's int8
    outputs under qemu 7.2: docs/arm64.md)."""
    monkeypatch.delenv("QEMU_CPU", raising=False)
    argv = emulated.shell_prefix("aarch64")
    assert argv[argv.index("QEMU_CPU") + 1] == "neoverse-n1" and "--unshare-pid" in argv
    monkeypatch.setenv("QEMU_CPU", "cortex-a72")
    argv = emulated.shell_prefix("aarch64")
    assert argv[argv.index("QEMU_CPU") + 1] == "cortex-a72"


def test_the_root_sees_each_cpus_midr_of_the_emulated_chip(tmp_path, monkeypatch):
    """ExecuTorch's cpuinfo and OpenVINO's CPU plugin read midr_el1 in /sys: the root gets the
    emulated model's, as Linux on that chip shows it; none for qemu's `max` (no real MIDR)."""
    from pathlib import Path

    monkeypatch.setenv("DEPLOYTUI_CACHE", str(tmp_path))
    monkeypatch.delenv("QEMU_CPU", raising=False)
    argv = emulated.shell_prefix("aarch64")
    there = "/sys/devices/system/cpu/cpu0/regs"
    here = Path(argv[argv.index(there) - 1])
    assert (here / "identification" / "midr_el1").read_text() == "0x00000000414fd0c1\n"
    monkeypatch.setenv("QEMU_CPU", "max")
    assert there not in emulated.shell_prefix("aarch64")
