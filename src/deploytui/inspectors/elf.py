"""ELF linkage and symbol inspection: what a compiled program (or the .so inside an AOTI package)
needs, and which shared libraries a run really loads.

Pure functions over paths; never imports torch, never loads a pickle. Every failure
(missing file, non-ELF file, missing tool, unreadable /proc entry) is an `InspectError`.

    ldd(path)                  -> LddReport     resolved libraries with size on disk, plus "not found"
    undefined_symbols(path)    -> Symbols       `nm -u -D`, aoti_torch_* first and counted
    loaded_libraries(argv)     -> LoadedRun     run to completion under LD_DEBUG=libs,files
    runtime_size(libs)         -> int           bytes of the non-system libraries (each file once)
    aoti_shared_object(pt2, d) -> [Path]        extract the package's *.so member(s) (ZIP only)

"System" means the OS's own library folders (/lib, /lib64, /usr/lib, /usr/lib64 and their
multiarch subfolders) and the vDSO; everything else (torch/lib, nvidia/*/lib, /usr/local/lib, ...)
is the runtime a form brings along.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from deploytui.core import procs
from deploytui.inspectors import InspectError

ELF_MAGIC = b"\x7fELF"
SYSTEM_PREFIXES = ("/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/", "/lib32/", "/usr/lib32/", "/libx32/")
AOTI_PREFIX = "aoti_torch_"
TOOL_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Library:
    """One shared library: the name it was asked for by, where it resolved, its size on disk."""

    name: str  # soname / requested name (basename of path when only a path is known)
    path: str | None  # resolved path; None when not found
    size: int = 0  # bytes on disk of the real file (0 when not found / gone)
    system: bool = False  # an OS library, not part of the form's runtime
    exists: bool = True  # False for "not found" and for files gone after the run (AOTI unpack dir)

    @property
    def real_path(self) -> str | None:
        if self.path is None:
            return None
        return os.path.realpath(self.path) if self.exists else os.path.normpath(self.path)


@dataclass(frozen=True)
class LddReport:
    path: str
    libraries: tuple[Library, ...]  # resolved ones, in ldd's order
    not_found: tuple[str, ...]  # names ldd could not resolve
    static: bool = False  # a statically linked ELF: nothing to list

    @property
    def total_size(self) -> int:
        return _sum_unique(self.libraries, system=None)

    @property
    def runtime_size(self) -> int:
        return runtime_size(self.libraries)


@dataclass(frozen=True)
class Symbols:
    path: str
    aoti: tuple[str, ...]  # undefined aoti_torch_* symbols, sorted
    other: tuple[str, ...]  # every other undefined symbol, sorted (with @VERSION if nm shows one)

    @property
    def aoti_count(self) -> int:
        return len(self.aoti)

    @property
    def all(self) -> tuple[str, ...]:
        """Every undefined symbol, the aoti_torch_* ones first."""
        return self.aoti + self.other


@dataclass(frozen=True)
class LoadedRun:
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    libraries: tuple[Library, ...] = field(default_factory=tuple)  # in load order, each file once

    @property
    def runtime_size(self) -> int:
        return runtime_size(self.libraries)


# ---------------------------------------------------------------- helpers


def is_system_path(path: str) -> bool:
    """True for the OS's own library folders; site-packages never counts as system."""
    real = os.path.realpath(path)
    if "site-packages" in real or "dist-packages" in real:
        return False
    return real.startswith(SYSTEM_PREFIXES)


def _library(name: str, path: str | None) -> Library:
    if path is None:
        return Library(name=name, path=None, size=0, system=False, exists=False)
    try:
        size = os.stat(path).st_size
        exists = True
    except OSError:
        size, exists = 0, False
    return Library(name=name, path=path, size=size, system=is_system_path(path), exists=exists)


def _sum_unique(libs: Iterable[Library], system: bool | None) -> int:
    seen: set[str] = set()
    total = 0
    for lib in libs:
        if not lib.exists or lib.path is None:
            continue
        if system is not None and lib.system != system:
            continue
        key = lib.real_path or lib.path
        if key in seen:
            continue
        seen.add(key)
        total += lib.size
    return total


def runtime_size(libs: Iterable[Library]) -> int:
    """Bytes on disk of the non-system libraries, each real file counted once.

    Libraries that no longer exist (e.g. an AOTI model .so unpacked to a temporary folder and
    removed at exit) are not counted: they are part of the model file, not of the runtime.
    """
    return _sum_unique(libs, system=False)


def _check_elf(path: str | os.PathLike[str]) -> str:
    p: str = os.fspath(path)
    try:
        with open(p, "rb") as f:
            magic = f.read(4)
    except IsADirectoryError:
        raise InspectError(f"{p}: is a directory, not an ELF file") from None
    except FileNotFoundError:
        raise InspectError(f"{p}: no such file") from None
    except OSError as e:
        raise InspectError(f"{p}: cannot read: {e.strerror or e}") from None
    if magic != ELF_MAGIC:
        raise InspectError(f"{p}: not an ELF file (magic {magic!r})")
    return p


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise InspectError(f"`{name}` not found on PATH (install binutils / libc-bin to inspect ELF files)")
    return found


def _run_tool(argv: list[str], env: dict[str, str] | None = None) -> procs.Finished:
    """ldd, nm: to their end (any exit code), or InspectError when they cannot run or hang."""
    child = procs.run(argv, env=env, timeout_s=TOOL_TIMEOUT_S)
    if child.error:
        raise InspectError(f"cannot run {argv[0]}: {child.error}")
    if child.killed:
        raise InspectError(f"`{' '.join(argv)}` {child.killed}")
    return child


# ---------------------------------------------------------------- ldd

_LDD_ARROW = re.compile(r"^\s*(\S+)\s*=>\s*(.*?)\s*(?:\(0x[0-9a-fA-F]+\))?\s*$")
_LDD_PLAIN = re.compile(r"^\s*(\S+)\s*\(0x[0-9a-fA-F]+\)\s*$")


def parse_ldd(text: str) -> tuple[list[tuple[str, str | None]], bool]:
    """(name, resolved path or None) pairs from ldd's output, and whether it said 'static'."""
    pairs: list[tuple[str, str | None]] = []
    static = False
    for line in text.splitlines():
        s = line.strip()
        if not s:
            continue
        if "not a dynamic executable" in s or "statically linked" in s:
            static = True
            continue
        m = _LDD_ARROW.match(line)
        if m:
            name, target = m.group(1), m.group(2).strip()
            if target == "not found" or not target:
                pairs.append((name, None))
            elif target.startswith("/"):
                pairs.append((name, target))
            # "=> (0x...)" with no path (vdso on old glibc): skip
            continue
        m = _LDD_PLAIN.match(line)
        if m:
            name = m.group(1)
            if name.startswith("/"):
                pairs.append((PurePosixPath(name).name, name))
            # linux-vdso.so.1 (0x...): in the kernel, no file: skip
    return pairs, static


def ldd(path: str | os.PathLike[str], library_path: list[str] | None = None) -> LddReport:
    """Every library `ldd` resolves for an ELF file, with its size on disk, plus the unresolved ones.

    library_path: folders prepended to LD_LIBRARY_PATH for the resolution (e.g. torch/lib for an
    AOTI model .so, which has no RPATH of its own). Without it the report shows what the file
    finds by itself, which is the honest answer for a program that ships.
    Note: like any ldd, this may run the dynamic loader on the file; use it on our own artifacts.
    """
    p = _check_elf(path)
    tool = _tool("ldd")
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if library_path:
        env["LD_LIBRARY_PATH"] = os.pathsep.join([*library_path, *filter(None, [env.get("LD_LIBRARY_PATH")])])
    proc = _run_tool([tool, p], env=env)
    pairs, static = parse_ldd(proc.text + "\n" + "\n".join(proc.stderr))
    if proc.returncode != 0 and not static and not pairs:
        msg = [ln for ln in (*proc.stderr, *proc.stdout) if ln.strip()]
        raise InspectError(f"ldd {p} failed: {msg[0] if msg else 'exit ' + str(proc.returncode)}")
    libs = tuple(_library(n, t) for n, t in pairs if t is not None)
    missing = tuple(n for n, t in pairs if t is None)
    return LddReport(path=p, libraries=libs, not_found=missing, static=static and not pairs)


# ---------------------------------------------------------------- nm


def parse_nm_undefined(text: str) -> list[str]:
    """Undefined names (weak ones too) from `nm -u -D` output lines like '   U name' / '   w name'."""
    names: list[str] = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 2 or len(parts[-2]) != 1:
            continue
        kind, name = parts[-2], parts[-1]
        if kind not in "Uwv":
            continue
        names.append(name)
    return names


def undefined_symbols(path: str | os.PathLike[str]) -> Symbols:
    """The dynamic undefined symbols of an ELF file (`nm -u -D`), aoti_torch_* counted and first."""
    p = _check_elf(path)
    tool = _tool("nm")
    proc = _run_tool([tool, "-u", "-D", p])
    if proc.returncode != 0:
        msg = [ln for ln in proc.stderr if ln.strip()]
        raise InspectError(f"nm -u -D {p} failed: {msg[0] if msg else 'exit ' + str(proc.returncode)}")
    names = parse_nm_undefined(proc.text)
    uniq = sorted(set(names))
    aoti = tuple(n for n in uniq if n.split("@", 1)[0].startswith(AOTI_PREFIX))
    other = tuple(n for n in uniq if not n.split("@", 1)[0].startswith(AOTI_PREFIX))
    return Symbols(path=p, aoti=aoti, other=other)


# ---------------------------------------------------------------- LD_DEBUG run


def _is_shared_object(path: str) -> bool:
    base = PurePosixPath(path).name
    return ".so" in base and (base.endswith(".so") or ".so." in base)


_DBG = re.compile(r"^\s*(\d+):\s*(.*)$")


def parse_ld_debug(text: str, pid: int | None = None) -> list[str]:
    """Paths of every object the dynamic loader loaded, from LD_DEBUG=libs,files output.

    Two sources, united: 'calling init: PATH' (objects with constructors) and, for every
    'file=NAME [ns];  generating link map', the NAME itself when it is a path (dlopen by path)
    or else the last 'trying file=PATH' of that pid (the search that succeeded).
    """
    order: dict[str, None] = {}
    last_try: dict[str, str] = {}
    for line in text.splitlines():
        m = _DBG.match(line)
        if not m:
            continue
        who, msg = m.group(1), m.group(2).strip()
        if pid is not None and who != str(pid):
            continue
        if msg.startswith("trying file="):
            last_try[who] = msg[len("trying file=") :].strip()
        elif msg.startswith("calling init:"):
            order.setdefault(os.path.normpath(msg[len("calling init:") :].strip()), None)
        elif msg.startswith("file=") and "generating link map" in msg:
            name = msg[len("file=") :].split(" [", 1)[0].strip()
            path = name if name.startswith("/") else last_try.get(who)
            if path:
                order.setdefault(os.path.normpath(path), None)
        elif msg.startswith("find library="):
            last_try.pop(who, None)
    return [p for p in order if _is_shared_object(p)]


def loaded_libraries(
    argv: Sequence[str],
    env: dict[str, str] | None = None,
    timeout_s: float = 300.0,
    cwd: str | os.PathLike[str] | None = None,
    own_group: bool = True,
) -> LoadedRun:
    """Run a program to completion under LD_DEBUG=libs,files and list every shared library it loaded.

    The loader's debug output goes to a private LD_DEBUG_OUTPUT file (not the program's stderr);
    only the file of the started process itself is read (children such as ldconfig are ignored).
    Libraries dlopen'ed from a temporary folder that is gone after the run are listed with
    exists=False and are not counted by runtime_size. The program runs in a process group of its
    own, killed whole on timeout; with own_group=False it stays in the caller's group (a build
    step, which the build kills whole when it is cancelled) and only it is killed on timeout.
    """
    argv = [os.fspath(a) for a in argv]
    if not argv:
        raise InspectError("loaded_libraries: empty command")
    run_env = dict(os.environ if env is None else env)
    with tempfile.TemporaryDirectory(prefix="deploytui-lddebug-") as tmp:
        prefix = os.path.join(tmp, "ld")
        run_env["LD_DEBUG"] = "libs,files"
        run_env["LD_DEBUG_OUTPUT"] = prefix
        proc = procs.run(argv, env=run_env, cwd=cwd, timeout_s=timeout_s, own_group=own_group)
        if proc.error:
            raise InspectError(f"cannot run {argv[0]}: {proc.error}")
        if proc.killed:
            raise InspectError(f"{argv[0]}: did not finish within {timeout_s:.0f} s")
        debug_file = f"{prefix}.{proc.pid}"
        try:
            text = Path(debug_file).read_text(errors="replace")
        except OSError:
            raise InspectError(f"{argv[0]}: no dynamic-loader output (a static or setuid program?)") from None
    libs = tuple(_library(PurePosixPath(p).name, p) for p in parse_ld_debug(text, proc.pid))
    out, err = proc.text, "\n".join(proc.stderr)
    rc = proc.returncode if proc.returncode is not None else -1
    return LoadedRun(argv=tuple(argv), returncode=rc, stdout=out, stderr=err, libraries=libs)


# ---------------------------------------------------------------- AOTI package


def aoti_shared_object(pt2_path: str | os.PathLike[str], dest_dir: str | os.PathLike[str]) -> list[Path]:
    """Extract the *.so member(s) of an AOTInductor package (a ZIP) into dest_dir; no unpickling.

    Returns the extracted paths (basename of each member; a clash gets a numeric prefix).
    """
    from deploytui.inspectors import archive

    p = Path(os.fspath(pt2_path))
    dest = Path(dest_dir)
    members = [m for m in archive.members(p) if PurePosixPath(m.name).name.endswith(".so")]
    if not members:
        raise InspectError(f"{p}: no .so member: not an AOTInductor package (or a link-free export)")
    out: list[Path] = []
    for n, m in enumerate(members):
        target = dest / PurePosixPath(m.name).name
        if target in out:
            target = dest / f"{n}_{target.name}"
        out.append(archive.extract(p, m.name, target))
    return out
