"""deploytui.inspectors.elf: parsers on fixed texts, errors, and the real C++ programs and AOTI .so.

The parser and error tests need nothing; the rest need the session fixture `built_artifacts`
(tests/conftest.py): the full build, run once.
"""

from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path

import pytest

from deploytui.inspectors import InspectError, elf

# ---------------------------------------------------------------- parsers

LDD_TEXT = """\
\tlinux-vdso.so.1 (0x00007ffd5a7f2000)
\tlibtorch_cpu.so => /venv/torch/lib/libtorch_cpu.so (0x00007f0e2c000000)
\tlibtorch.so => not found
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f0e2be1e000)
\t/lib64/ld-linux-x86-64.so.2 (0x00007f0e41a1b000)
"""

NM_TEXT = """\
                 w __gmon_start__
                 U aoti_torch_clone
                 U memcpy@GLIBC_2.14
                 U aoti_torch_cpu_addmm_out
                 U _ZdlPv@GLIBCXX_3.4
"""

LD_DEBUG_TEXT = """\
      100:\tfile=libc10.so [0];  needed by ./prog [0]
      100:\tfind library=libc10.so [0]; searching
      100:\t search path=/venv/torch/lib\t\t(RPATH from file ./prog)
      100:\t  trying file=/venv/torch/lib/glibc-hwcaps/x86-64-v3/libc10.so
      100:\t  trying file=/venv/torch/lib/libc10.so
      100:\t
      100:\tfile=libc10.so [0];  generating link map
      100:\tfile=libm.so.6 [0];  needed by /venv/torch/lib/libc10.so [0]
      100:\tfind library=libm.so.6 [0]; searching
      100:\t search cache=/etc/ld.so.cache
      100:\t  trying file=/lib/x86_64-linux-gnu/libm.so.6
      100:\tfile=libm.so.6 [0];  generating link map
      100:\tcalling init: /lib64/ld-linux-x86-64.so.2
      101:\tcalling init: /lib/x86_64-linux-gnu/libother.so.1
      100:\tfile=/tmp/a/model.wrapper.so [0];  dynamically loaded by /venv/torch/lib/libtorch_cpu.so [0]
      100:\tfile=/tmp/a/model.wrapper.so [0];  generating link map
"""


def test_parse_ldd():
    pairs, static = elf.parse_ldd(LDD_TEXT)
    assert not static
    assert pairs == [
        ("libtorch_cpu.so", "/venv/torch/lib/libtorch_cpu.so"),
        ("libtorch.so", None),
        ("libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6"),
        ("ld-linux-x86-64.so.2", "/lib64/ld-linux-x86-64.so.2"),
    ]
    assert elf.parse_ldd("\tnot a dynamic executable\n") == ([], True)


def test_parse_nm_undefined():
    assert elf.parse_nm_undefined(NM_TEXT) == [  # the weak (w) one too
        "__gmon_start__",
        "aoti_torch_clone",
        "memcpy@GLIBC_2.14",
        "aoti_torch_cpu_addmm_out",
        "_ZdlPv@GLIBCXX_3.4",
    ]
    assert elf.parse_nm_undefined("   T defined_here\n   B bss\n") == []


def test_parse_ld_debug():
    assert elf.parse_ld_debug(LD_DEBUG_TEXT, pid=100) == [
        "/venv/torch/lib/libc10.so",
        "/lib/x86_64-linux-gnu/libm.so.6",
        "/lib64/ld-linux-x86-64.so.2",
        "/tmp/a/model.wrapper.so",
    ]
    assert "/lib/x86_64-linux-gnu/libother.so.1" in elf.parse_ld_debug(LD_DEBUG_TEXT)


def test_system_classification_and_runtime_size():
    assert elf.is_system_path("/lib/x86_64-linux-gnu/libc.so.6")
    assert elf.is_system_path("/usr/lib/x86_64-linux-gnu/libstdc++.so.6")
    assert not elf.is_system_path("/work/.venv/lib/python3.11/site-packages/torch/lib/libc10.so")
    assert not elf.is_system_path("/usr/lib/python3/dist-packages/torch/lib/libc10.so")
    libs = [
        elf.Library("a.so", "/opt/x/a.so", 100, system=False),
        elf.Library("a.so", "/opt/x/a.so", 100, system=False),  # same file twice: once
        elf.Library("libc.so.6", "/lib/libc.so.6", 1000, system=True),  # system: not counted
        elf.Library("gone.so", "/tmp/gone.so", 0, system=False, exists=False),
        elf.Library("b.so", "/opt/x/b.so", 10, system=False),
    ]
    assert elf.runtime_size(libs) == 110


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize("func", [elf.ldd, elf.undefined_symbols])
def test_non_elf_raises(tmp_path, func):
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    with pytest.raises(InspectError, match="not an ELF file"):
        func(text)
    with pytest.raises(InspectError, match="no such file"):
        func(tmp_path / "missing")
    with pytest.raises(InspectError, match="directory"):
        func(tmp_path)


def test_missing_tool_raises(monkeypatch):
    monkeypatch.setattr(elf.shutil, "which", lambda name: None)
    with pytest.raises(InspectError, match="`nm` not found"):
        elf.undefined_symbols("/bin/true")
    with pytest.raises(InspectError, match="`ldd` not found"):
        elf.ldd("/bin/true")


def test_aoti_shared_object_errors(tmp_path):
    not_zip = tmp_path / "x.pt2"
    not_zip.write_bytes(b"garbage")
    with pytest.raises(InspectError, match="ZIP"):
        elf.aoti_shared_object(not_zip, tmp_path / "out")
    no_so = tmp_path / "y.pt2"
    with zipfile.ZipFile(no_so, "w") as z:
        z.writestr("y/data.pkl", b"x")
    with pytest.raises(InspectError, match=r"no \.so member"):
        elf.aoti_shared_object(no_so, tmp_path / "out")
    with pytest.raises(InspectError, match="is missing"):
        elf.aoti_shared_object(tmp_path / "nope.pt2", tmp_path / "out")


def test_loaded_libraries_of_a_system_program():
    true = shutil.which("true")
    run = elf.loaded_libraries([true])
    assert run.returncode == 0
    assert any(lib.name.startswith("libc.so") for lib in run.libraries)
    assert run.runtime_size == 0  # only system libraries


def test_loaded_libraries_missing_program():
    with pytest.raises(InspectError, match="cannot run"):
        elf.loaded_libraries(["/nonexistent/program"])


# ---------------------------------------------------------------- real artifacts


def _art(built) -> Path:
    if isinstance(built, (str, os.PathLike)):
        return Path(built)
    return Path(built.art)


@pytest.fixture(scope="module")
def art(built_artifacts) -> Path:
    art = _art(built_artifacts)
    if not (art / "shared" / "bin" / "cpp-aoti").is_file() and shutil.which("g++") is None:
        pytest.skip("no g++: the C++ programs were not built")
    return art


@pytest.fixture(scope="module")
def aoti_so(art, tmp_path_factory) -> Path:
    (so,) = elf.aoti_shared_object(art / "a1" / "a1_aoti.pt2", tmp_path_factory.mktemp("aoti-so"))
    return so


@pytest.fixture(scope="module")
def aoti_lean_so(art, tmp_path_factory) -> Path:
    (so,) = elf.aoti_shared_object(art / "a1" / "a1_aoti_lean.pt2", tmp_path_factory.mktemp("aoti-lean-so"))
    return so


def test_ldd_on_real_binary(art):
    report = elf.ldd(art / "shared" / "bin" / "cpp-torchscript")
    by_name = {lib.name: lib for lib in report.libraries}
    assert report.not_found == ()
    assert not by_name["libtorch_cpu.so"].system and by_name["libtorch_cpu.so"].size > 50 * 2**20
    assert by_name["libc.so.6"].system
    assert 100 * 2**20 < report.runtime_size < report.total_size


def test_undefined_symbols_on_real_binary(art):
    syms = elf.undefined_symbols(art / "shared" / "bin" / "cpp-torchscript")
    assert syms.aoti_count == 0
    assert any(s.startswith("_ZN3c10") for s in syms.other)  # c10:: symbols from libc10 / libtorch_cpu


def test_aoti_so_undefined_symbols(aoti_so):
    syms = elf.undefined_symbols(aoti_so)
    assert 15 <= syms.aoti_count <= 40  # 23 with torch 2.15 for A1
    assert "aoti_torch_cpu_addmm_out" in syms.aoti
    assert (
        "aoti_torch_create_tensor_from_blob_v2" in syms.aoti
        or "aoti_torch_create_tensor_from_blob" in syms.aoti
    )
    assert syms.all[: syms.aoti_count] == syms.aoti
    assert not any(s.startswith("aoti_torch_") for s in syms.other)
    assert not any(s.startswith(("_ZN3c10", "_ZN2at")) for s in syms.other)  # only the C shim ABI


def test_aoti_so_needs_libtorch_without_rpath(aoti_so, aoti_lean_so):
    default = elf.ldd(aoti_so)
    assert "libtorch.so" in default.not_found  # NEEDED, no RPATH: found only through the loader
    lean = elf.ldd(aoti_lean_so)
    assert lean.not_found == ()
    assert not any(lib.name.startswith("libtorch") for lib in lean.libraries)
    assert elf.undefined_symbols(aoti_lean_so).aoti_count == elf.undefined_symbols(aoti_so).aoti_count


def test_runtime_libraries_default_vs_lean(art, tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    runs = {
        form: elf.loaded_libraries(
            [
                art / "shared" / "bin" / exe,
                art / "a1" / model,
                "--inputs",
                art / "a1" / "inputs.safetensors",
                "--outputs",
                tmp_path / f"{form}.safetensors",
            ],
            env=env,
        )
        for form, exe, model in (
            ("cpp-torchscript", "cpp-torchscript", "a1_script.pt"),
            ("cpp-aoti", "cpp-aoti", "a1_aoti.pt2"),
            ("cpp-aoti-lean", "cpp-aoti", "a1_aoti_lean.pt2"),
        )
    }
    for form, run in runs.items():
        assert run.returncode == 0, (form, run.stderr)
        assert '"stages_ms"' in run.stdout
    names = {form: {lib.name for lib in run.libraries} for form, run in runs.items()}
    for form in runs:
        assert {"libtorch_cpu.so", "libc10.so"} <= names[form]
    assert {"libtorch.so", "libtorch_cuda.so"} <= names["cpp-aoti"]
    assert "libtorch_cuda.so" not in names["cpp-aoti-lean"]
    assert "libtorch_cuda.so" not in names["cpp-torchscript"]
    # the dlopen'ed model .so is listed, but it lived in the unpack folder: not runtime
    assert any(n.endswith(".wrapper.so") for n in names["cpp-aoti-lean"])
    assert runs["cpp-aoti-lean"].runtime_size == runs["cpp-torchscript"].runtime_size
    assert runs["cpp-aoti"].runtime_size > 3 * runs["cpp-aoti-lean"].runtime_size


def test_loaded_libraries_kills_a_program_past_its_timeout():
    import time

    t0 = time.monotonic()
    with pytest.raises(InspectError, match="did not finish within"):
        elf.loaded_libraries(["sleep", "30"], timeout_s=0.3)
    assert time.monotonic() - t0 < 5
    with pytest.raises(InspectError, match="did not finish within"):  # in the caller's group
        elf.loaded_libraries(["sleep", "30"], timeout_s=0.3, own_group=False)
    assert time.monotonic() - t0 < 10
