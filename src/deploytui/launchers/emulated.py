"""An emulated target: an arm64 Debian root in the cache (`make arm64`: mmdebstrap, qemu-user
registered with binfmt_misc), entered with bubblewrap — the root as /, with /proc and /dev and a
fresh /tmp, and of this machine's /sys only its CPU lists (shell_prefix says why) — and run there
under qemu-aarch64.

It speaks the SSH target's protocol (launchers/ssh.py): a target whose host is `emulated:arm64`
gets, instead of `ssh … host`, a shell inside the root (`ssh_argv`), so the same scripts copy the
bundle there once per content, make a Python bundle's venv with the root's own python3 and run
every form through the measuring launcher there (cross-compiled for aarch64). Its timings are
qemu's, not a device's: its facts say `emulated`, so its records are marked and never ranked.
"""

from __future__ import annotations

import os
from pathlib import Path

from deploytui.core import paths

SCHEME = "emulated:"
ARCHES = {"arm64": "aarch64", "aarch64": "aarch64"}  # what a user may write -> `uname -m` there
DEBIAN_ARCH = {"aarch64": "arm64"}
BINFMT = Path("/proc/sys/fs/binfmt_misc")
MAKE = "make arm64"  # what makes the root (tools/arm64_root.sh)
CPU_SYS = Path("/sys/devices/system/cpu")
CPU_LISTS = ("possible", "present", "online")  # the only /sys files the root sees
# the CPU qemu emulates (QEMU_CPU; the user's own QEMU_CPU wins): a real chip's model, Neoverse N1
# (Graviton2, Ampere Altra: dotprod, no i8mm/SVE). qemu's default, `max`, turns on every feature
# it emulates, and under qemu 7.2 a1's int8 ONNX Runtime model then gives max|diff| 0.122 vs
# eager where x86-64 and every named model tried (cortex-a57, cortex-a72, neoverse-n1, a64fx)
# give 0.000213, bit for bit the same as x86-64's outputs
DEFAULT_CPU = "neoverse-n1"


# MIDR_EL1 of the CPU models (qemu's target/arm/cpu64.c): what Linux shows in
# /sys/devices/system/cpu/cpuN/regs/identification/midr_el1, which ExecuTorch's cpuinfo (and
# OpenVINO's CPU plugin: "Can't open MIDR_EL1 sysfs entry") read to know the cores
MIDR = {
    "cortex-a53": 0x410FD034,
    "cortex-a57": 0x411FD070,
    "cortex-a72": 0x410FD083,
    "cortex-a76": 0x414FD0B1,
    "neoverse-n1": 0x414FD0C1,
    "a64fx": 0x461F0010,
}


def qemu_cpu() -> str:
    return os.environ.get("QEMU_CPU") or DEFAULT_CPU


def cpu_regs(cpu: str) -> list[tuple[Path, Path]]:
    """(a folder here, where it goes in the root's /sys) for each CPU's regs/ of the emulated
    model: its midr_el1 as Linux on that chip shows it; none for a model without a known MIDR."""
    if cpu not in MIDR:
        return []
    found = []
    for n in range(os.cpu_count() or 1):
        here = paths.cache_dir() / "arm64" / "sys" / cpu / f"cpu{n}" / "regs"
        midr = here / "identification" / "midr_el1"
        if not midr.is_file():
            midr.parent.mkdir(parents=True, exist_ok=True)
            midr.write_text(f"0x{MIDR[cpu]:016x}\n")
        found.append((here, CPU_SYS / f"cpu{n}" / "regs"))
    return found


def parse(where: str) -> str | None:
    """The architecture an `emulated:ARCH` target names (`uname -m`'s word), None for another
    address; ValueError for an architecture with no emulated root."""
    if not where.startswith(SCHEME):
        return None
    arch = ARCHES.get(where[len(SCHEME) :])
    if arch is None:
        raise ValueError(f"no emulated root for {where[len(SCHEME) :]!r} (emulated:arm64 is the one)")
    return arch


def host(arch: str) -> str:
    """The target's host word in targets.json: `emulated:arm64`."""
    return SCHEME + DEBIAN_ARCH[arch]


def is_emulated(host_word: str) -> bool:
    return host_word.startswith(SCHEME)


def root_dir(arch: str = "aarch64") -> Path:
    """The Debian root tools/arm64_root.sh makes into the cache."""
    return paths.cache_dir() / DEBIAN_ARCH[arch] / "root"


def problem(arch: str = "aarch64") -> str:
    """ "" or, in one line, what is missing before anything runs in the root."""
    root = root_dir(arch)
    if not (root / ".complete").is_file():
        return f"no emulated {DEBIAN_ARCH[arch]} root at {root}: `{MAKE}` makes it (root, a few minutes)"
    try:
        registered = "enabled" in (BINFMT / f"qemu-{arch}").read_text()
    except OSError:
        registered = False
    if not registered:
        return (
            f"qemu-{arch} is not registered with binfmt_misc (after a restart?): `{MAKE}` registers it (root)"
        )
    return ""


def shell_prefix(arch: str) -> list[str]:
    """The words that start `/bin/sh -c COMMAND` inside the root, as `ssh host` starts one on a
    host: bwrap with the root as /, /proc and /dev, a fresh /tmp, no network
    (the wheels are copied in), a cleared environment; dies with its parent, and all it started
    with it."""
    from deploytui.launchers.sandbox import bwrap

    argv = [bwrap(), "--bind", str(root_dir(arch)), "/", "--proc", "/proc", "--dev", "/dev"]
    # a /sys of the CPU lists only: with this machine's whole /sys (its x86-64 CPUs) onnxruntime's
    # cpuinfo (its aarch64 code) dies of SIGSEGV at import under qemu; with none, ExecuTorch's
    # XNNPACK cannot count the CPUs and its program does not load (Error::NotFound)
    argv += ["--tmpfs", "/sys"]
    for name in CPU_LISTS:
        if (CPU_SYS / name).is_file():
            argv += ["--ro-bind", str(CPU_SYS / name), str(CPU_SYS / name)]
    # its own PID namespace: when bwrap dies (with its parent, deploytui) everything started
    # inside dies with it, pip making a venv included (launchers/watched.py)
    for here, there in cpu_regs(qemu_cpu()):
        argv += ["--ro-bind", str(here), str(there)]
    argv += ["--tmpfs", "/tmp", "--unshare-net", "--unshare-ipc", "--unshare-pid"]
    if os.geteuid() != 0:
        argv += ["--unshare-user", "--uid", "0", "--gid", "0"]
    argv += ["--die-with-parent", "--clearenv", "--setenv", "HOME", "/root", "--setenv", "LANG", "C.UTF-8"]
    argv += ["--setenv", "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]
    argv += ["--setenv", "QEMU_CPU", qemu_cpu()]  # read by qemu-aarch64 at each exec
    return [*argv, "--chdir", "/root", "/bin/sh", "-c"]
