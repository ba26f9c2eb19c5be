"""Inspectors fuzzed on mutated copies of real artifacts: only InspectError may escape."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deploytui.families.burn import sections as burn_sections
from deploytui.families.pytorch import sections as pytorch_sections
from deploytui.inspectors import InspectError, archive, elf, onnx_graph, safetensors_header

FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
SLOW = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@st.composite
def mutations(draw):
    """A list of edits: truncate, overwrite a few bytes, or insert bytes."""
    return draw(
        st.lists(
            st.tuples(
                st.sampled_from(["truncate", "flip", "insert"]),
                st.floats(0, 1),
                st.binary(min_size=1, max_size=16),
            ),
            min_size=1,
            max_size=4,
        )
    )


def mutate(data: bytes, edits) -> bytes:
    for op, where, junk in edits:
        i = int(where * len(data))
        if op == "truncate":
            data = data[:i]
        elif op == "flip":
            data = data[:i] + junk + data[i + len(junk) :]
        else:
            data = data[:i] + junk + data[i:]
    return data


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    """Where the mutated copies go: one file a source, written again for each example (pytest
    removes its old temporary folders; a folder per example had left 1,300 in /tmp)."""
    return tmp_path_factory.mktemp("fuzz")


def mutated_copy(src: Path, edits, scratch: Path) -> Path:
    dest = scratch / src.name
    dest.write_bytes(mutate(src.read_bytes(), edits))
    return dest


def only_inspect_error(fn, *args) -> None:
    try:
        fn(*args)
    except InspectError:
        pass


def read_every_member(path: Path) -> None:
    for m in archive.members(path):
        archive.read_text(path, m.name, limit=4096)


@pytest.mark.parametrize("name", ["a1_script.pt", "a1_trace.pt", "a1_export.pt2", "a1_aoti.pt2"])
@FUZZ
@given(edits=mutations())
def test_archive_inspector(built_artifacts, scratch, name, edits):
    only_inspect_error(read_every_member, mutated_copy(built_artifacts / "a1" / name, edits, scratch))


@FUZZ
@given(edits=mutations())
def test_safetensors_inspector(built_artifacts, scratch, edits):
    only_inspect_error(
        safetensors_header.read, mutated_copy(built_artifacts / "a1" / "a1.safetensors", edits, scratch)
    )


@SLOW
@given(edits=mutations())
def test_onnx_inspector(built_artifacts, scratch, edits):
    only_inspect_error(onnx_graph.summary, mutated_copy(built_artifacts / "a1" / "a1.onnx", edits, scratch))


@SLOW
@given(edits=mutations())
def test_capture_inspector(built_artifacts, scratch, edits):
    only_inspect_error(
        burn_sections.capture_section, mutated_copy(built_artifacts / "a1" / "capture.json", edits, scratch)
    )


@pytest.mark.parametrize("name", ["a1/bin/burn-embed", "shared/bin/cpp-aoti"])
@SLOW
@given(edits=mutations())
def test_elf_inspectors(built_artifacts, scratch, name, edits):
    path = mutated_copy(built_artifacts / name, edits, scratch)
    only_inspect_error(elf.ldd, path)
    only_inspect_error(elf.undefined_symbols, path)


@SLOW
@given(edits=mutations())
def test_aoti_package_so_inspector(built_artifacts, scratch, edits):
    path = mutated_copy(built_artifacts / "a1" / "a1_aoti.pt2", edits, scratch)
    only_inspect_error(pytorch_sections.aoti_so_sections, path)
