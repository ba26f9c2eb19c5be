"""Another architecture (`--arch aarch64`): the forms built and bundled for it beside the native
ones, from what the native build made. What each kind of form needs:

- Python forms: nothing is built. Their model files (.onnx, .pte, .pt2 export, OpenVINO IR) are
  architecture-independent and shipped as they are; the bundle's requirements are the native
  pins, each downloaded as a wheel for the architecture (pip download --no-deps --platform …,
  into the cache's wheelhouse-<arch>). A pin with no wheel for it (coremltools, the nvidia-*
  libraries, triton: pulled in by markers true on x86-64 only) is left out of the bundle's
  requirements and said so.
- C/C++ forms: their program compiled again with the cross compiler (aarch64-linux-gnu-g++) by
  the same g++ line as the native build (the family's cpp_steps), against the aarch64 wheel's
  headers and libraries (unpacked into the cache); the libraries it needs are found by their
  NEEDED entries in that wheel and bundled. The measuring launcher is compiled for it too.
- AOTInductor (aoti-python, cpp-aoti): the .pt2 holds a shared object inductor compiled for this
  machine: there is no aarch64 one without building it on aarch64 (WHY_NOT).
- Rust forms: no aarch64 standard library here (WHY_NOT says what a user with one would run).

Builds go to artifacts/shared/<arch>/, bundles to bundles/<slug>/<arch>/<form>/; nothing native
is rebuilt.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from deploytui.core import defaults, paths
from deploytui.core.workspace import Workspace
from deploytui.families.cross_cpp import cpp_wheel, libraries
from deploytui.ship.bundler import Bundle, ShipError, bundle
from deploytui.ship.spec import BundleSpec, Library
from deploytui.spec import forms

ARCHES = {"aarch64": "aarch64", "arm64": "aarch64"}
# the wheel tags an aarch64 Linux with glibc 2.36 (Debian bookworm) installs, newest first: pip
# takes only the tags it is given (openvino publishes manylinux_2_35, nccl manylinux_2_18)
GLIBC = {"aarch64": 36}
PLATFORMS = {
    arch: (*(f"manylinux_2_{minor}_{arch}" for minor in range(top, 16, -1)), f"manylinux2014_{arch}")
    for arch, top in GLIBC.items()
}
TRIPLET = {"aarch64": "aarch64-linux-gnu"}
RUST_TARGET = {"aarch64": "aarch64-unknown-linux-gnu"}
AOTI_WHY = (
    "AOTInductor compiles the model into a shared object for this machine's CPU when it exports "
    "(torch 2.15 has no cross-compiling target for Linux aarch64: its cross_target_platform is "
    "Windows only): build the .pt2 on an aarch64 host"
)


def arch_of(text: str) -> str:
    """`uname -m`'s word for an --arch value; ValueError for one not supported."""
    if text not in ARCHES:
        raise ValueError(f"--arch {text}: only aarch64 (arm64) is supported besides this machine's")
    return ARCHES[text]


def rust_why(arch: str) -> str:
    t = RUST_TARGET[arch]
    return (
        f"a Rust form: no {t} standard library here (`rustup target add {t}` cannot download it); "
        f"with it: `cargo build --release --target {t}` with "
        f"CARGO_TARGET_{t.upper().replace('-', '_')}_LINKER={TRIPLET[arch]}-gcc"
    )


def why_not(form: forms.Form, arch: str) -> str:
    """ "" when `form` can be built for `arch` here, else the stage's one line."""
    if "aoti" in form.key:
        return AOTI_WHY
    if form.compiled and cpp_wheel(form) is None:
        return rust_why(arch)
    return ""


# --- the wheels ---------------------------------------------------------------------------


def wheelhouse(arch: str) -> Path:
    return paths.cache_dir() / f"wheelhouse-{arch}"


@dataclass
class Wheels:
    """The pins that have a wheel for the architecture, and the ones left out (pin -> why)."""

    kept: list[str] = field(default_factory=list)
    left_out: dict[str, str] = field(default_factory=dict)
    downloaded_bytes: int = 0


def _pip_download(pins: list[str], dest: Path, arch: str | None) -> tuple[bool, str]:
    argv = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(dest)]
    if arch:
        argv += ["--only-binary=:all:", "--python-version", "3.11", "--implementation", "cp"]
        for p in PLATFORMS[arch]:
            argv += ["--platform", p]
    env = {**os.environ, "PIP_CONFIG_FILE": "/dev/null", "PIP_CACHE_DIR": str(paths.cache_dir() / "pip")}
    res = subprocess.run([*argv, *pins], capture_output=True, text=True, env=env, check=False)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    return res.returncode == 0, (lines[-1] if lines else f"exit {res.returncode}")[:300]


def fill_wheelhouse(requirements: list[str], arch: str) -> Wheels:
    """The native pins as wheels for `arch` in its wheelhouse, once per set of pins: all at once,
    else pin by pin (a pin with no wheel for `arch` is tried as a pure-Python wheel or an sdist,
    else left out)."""
    house = wheelhouse(arch)
    house.mkdir(parents=True, exist_ok=True)
    key = hashlib.sha256("\n".join(sorted(requirements)).encode()).hexdigest()[:16]
    stamp = house / f".filled-{key}.json"
    if stamp.exists():
        return Wheels(**json.loads(stamp.read_text()))
    before = sum(p.stat().st_size for p in house.iterdir() if p.is_file())
    got = Wheels()
    ok, _ = _pip_download(list(requirements), house, arch)
    if ok:
        got.kept = list(requirements)
    else:
        for pin in requirements:
            ok, why = _pip_download([pin], house, arch)
            if not ok:
                ok, why = _portable(pin, house)
            (got.kept.append(pin) if ok else got.left_out.__setitem__(pin, why))
    got.downloaded_bytes = sum(p.stat().st_size for p in house.iterdir() if p.is_file()) - before
    stamp.write_text(json.dumps(dataclasses.asdict(got), indent=1) + "\n")
    return got


def _portable(pin: str, house: Path) -> tuple[bool, str]:
    """`pin` as a pure-Python wheel or an sdist (they install on any architecture)."""
    with tempfile.TemporaryDirectory() as tmp:
        ok, why = _pip_download([pin], Path(tmp), None)
        if not ok:
            return False, why
        files = list(Path(tmp).iterdir())
        if not files or not all(f.name.endswith(("-none-any.whl", ".tar.gz", ".zip")) for f in files):
            return False, f"no wheel for this architecture ({', '.join(f.name for f in files)} is another's)"
        for f in files:
            shutil.move(str(f), house / f.name)
    return True, ""


def unpacked(distribution: str, version: str, arch: str) -> Path:
    """The `arch` wheel of distribution==version unpacked into the cache (its site-packages)."""
    site = paths.cache_dir() / "cross" / arch / f"{distribution}-{version}"
    if (site / ".complete").exists():
        return site
    got = fill_wheelhouse([f"{distribution}=={version}"], arch)
    if got.left_out:
        raise ShipError(f"no {arch} wheel of {distribution}=={version}: {next(iter(got.left_out.values()))}")
    stem = f"{distribution.replace('-', '_').lower()}-{version}-"
    found = [w for w in wheelhouse(arch).glob("*.whl") if w.name.lower().startswith(stem)]
    if not found:
        raise ShipError(f"no {arch} wheel of {distribution}=={version} in {wheelhouse(arch)}")
    part = site.with_name(site.name + ".part")
    shutil.rmtree(part, ignore_errors=True)
    shutil.rmtree(site, ignore_errors=True)
    with zipfile.ZipFile(found[0]) as z:
        z.extractall(part)
    (part / ".complete").write_text(found[0].name + "\n")
    part.rename(site)
    return site


# --- the C/C++ programs -------------------------------------------------------------------


def bin_dir(ws: Workspace, arch: str) -> Path:
    return ws.shared_dir / arch / "bin"


def compiler(arch: str, lang: str = "g++") -> str:
    name = f"{TRIPLET[arch]}-{lang}"
    if not shutil.which(name):
        raise ShipError(f"no {name} (the cross compiler): `make arm64` installs it (root)")
    return name


def build_program(
    form: forms.Form, arch: str, ws: Workspace, version: str, companions: tuple[Path, ...] = ()
) -> Path:
    """The form's program compiled for `arch` by its family's g++ line with the cross compiler,
    against the `arch` wheel (distribution == the wheel's flag, at the native `version`);
    `companions`: the unpacked wheels of the libraries the wheel's own libraries load (the cross
    linker does not follow their RPATH: they are given as -rpath-link)."""
    w = cpp_wheel(form)
    assert w is not None
    program = Path(form.executable or "").name
    site = unpacked(w.flag, version, arch)
    pkg = site / w.flag
    out = bin_dir(ws, arch) / program
    stamp = out.with_name(f".{program}.built")
    sources = sorted(p for p in (paths.ROOT / "cpp").glob("*") if p.is_file())
    link_dirs = sorted({str(p.parent) for c in companions for p in c.rglob("*.so*") if p.is_file()})
    key = f"{pkg}\n{link_dirs}\n" + "".join(hashlib.sha256(p.read_bytes()).hexdigest()[:12] for p in sources)
    if out.exists() and stamp.exists() and stamp.read_text() == key:
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    lines = {name: line for name, _src, line in w.programs(compiler(arch), paths.ROOT / "cpp", pkg)}
    tmp = out.with_name(f".{program}.tmp{os.getpid()}")
    argv = [*lines[program](tmp), *(f"-Wl,-rpath-link,{d}" for d in link_dirs)]
    res = subprocess.run(argv, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        tmp.unlink(missing_ok=True)
        said = [ln for ln in res.stderr.splitlines() if ln.strip()] or [f"exit {res.returncode}"]
        # the linker's first complaint, not collect2's summary
        words = ("undefined reference", "cannot find", "error:")
        telling = [ln for ln in said if any(w in ln for w in words)]
        first = next((ln for ln in telling if "collect2" not in ln), said[-1])
        raise ShipError(f"{compiler(arch)} failed for {program}: {first.split('/bin/ld: ')[-1][:300]}")
    os.replace(tmp, out)
    stamp.write_text(key)
    return out


def companions(libs: tuple[Library, ...], package: str, arch: str) -> tuple[Path, ...]:
    """The `arch` wheels (unpacked) of the distributions that provide the native program's
    libraries from outside its own wheel's package (torch's libtorch_cpu loads libcupti and
    libcudart from nvidia's wheels), each at the version installed here."""
    from importlib.metadata import distributions

    resolved = (lib.path.resolve() for lib in libs)  # torch/lib/../../nvidia/… is not torch's
    wanted = [p for p in resolved if f"/{package}/" not in str(p)]
    sites: list[Path] = []
    for dist in distributions() if wanted else ():
        base = Path(str(dist.locate_file(""))).resolve()
        mine = {str(p.relative_to(base)) for p in wanted if p.is_relative_to(base)}
        if mine and any(str(f) in mine for f in dist.files or ()):
            sites.append(unpacked(dist.metadata["Name"], dist.version.split("+")[0], arch))
    return tuple(dict.fromkeys(sites))


# --- bundles ------------------------------------------------------------------------------


def default_dir(form: forms.Form, arch: str, ws: Workspace) -> Path:
    return ws.bundles_dir / arch / form.key


def spec(form: forms.Form, arch: str, *, ws: Workspace) -> BundleSpec:
    """What `form` ships for `arch`: the native spec with the architecture's requirements (a
    Python form) or program and libraries (a C/C++ form)."""
    from deploytui.scenarios.isolated import shipping
    from deploytui.spec.manifest import load as load_manifest

    if why := why_not(form, arch):
        raise ShipError(f"{form.key} for {arch}: {why}")
    manifest = load_manifest(ws)
    native = shipping.spec(form, manifest, ws=ws)
    extra = {**native.extra, "arch": arch}
    if native.is_python:
        got = fill_wheelhouse(list(native.requirements), arch)
        extra["left_out"] = got.left_out
        return dataclasses.replace(native, requirements=tuple(got.kept), arch=arch, extra=extra)
    w = cpp_wheel(form)
    assert w is not None  # why_not said so otherwise
    version = _version(w.flag)
    if not version:
        raise ShipError(f"{form.key}: no {w.flag} installed here to take its version from")
    beside = companions(native.libraries, w.flag, arch)
    program = build_program(form, arch, ws, version, beside)
    site = unpacked(w.flag, version, arch)
    libs, system = libraries(program, site, *beside)
    prog_rel = native.programs[0]
    files = tuple((program, rel) if rel == prog_rel else (src, rel) for src, rel in native.files)
    return dataclasses.replace(
        native, files=files, libraries=tuple(libs), system_libraries=tuple(system), arch=arch, extra=extra
    )


def _version(distribution: str) -> str:
    """The version of `distribution` installed here: the wheel the native program was compiled
    against (its aarch64 twin is taken at the same version)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution).split("+")[0]
    except PackageNotFoundError:
        return ""


def make(form: forms.Form, arch: str, out: Path | None = None, *, ws: Workspace, tar: bool = False) -> Bundle:
    return bundle(spec(form, arch, ws=ws), out or default_dir(form, arch, ws), tar=tar)


def launcher(arch: str) -> Path:
    """The measuring launcher (core/launcher.c) compiled for `arch`, into the cache."""
    from deploytui.core.measure import LAUNCHER_SRC

    src = LAUNCHER_SRC.read_bytes()
    exe = paths.cache_dir() / "launcher" / f"launcher-{arch}-{hashlib.sha256(src).hexdigest()[:12]}"
    if exe.exists():
        return exe
    exe.parent.mkdir(parents=True, exist_ok=True)
    tmp = exe.with_suffix(f".{os.getpid()}.tmp")
    cc = compiler(arch, "gcc")
    res = subprocess.run(
        [cc, "-O2", "-o", str(tmp), str(LAUNCHER_SRC)],
        capture_output=True,
        text=True,
        check=False,
        timeout=defaults.BUILD_TIMEOUT_S,
    )
    if res.returncode != 0:
        raise ShipError(f"could not compile the launcher for {arch}: {res.stderr.strip()[:300]}")
    os.replace(tmp, exe)
    return exe


def build(ws: Workspace, arch: str, say: Callable[[str], None] = lambda _line: None) -> dict[str, str]:
    """Every form of the model for `arch` (`deploytui build --arch`): its wheels downloaded, its
    program cross-compiled; form key -> "" when built, else the stage's one line. The measuring
    launcher first (key `launcher`)."""
    from deploytui.families import registry
    from deploytui.spec.manifest import availability
    from deploytui.spec.manifest import load as load_manifest

    results: dict[str, str] = {}
    try:
        say(f"the measuring launcher for {arch}")
        launcher(arch)
        results["launcher"] = ""
    except ShipError as e:
        results["launcher"] = str(e)
    manifest = load_manifest(ws)
    for form in registry.FORMS:
        if form.applies(ws.model):
            continue
        why = availability(form, ws, manifest)
        if why:
            results[form.key] = f"not built here: {why}"
            continue
        say(f"{form.key} for {arch}")
        try:
            spec(form, arch, ws=ws)
            results[form.key] = ""
        except (ShipError, OSError) as e:
            results[form.key] = str(e)
    return results
