"""Shared fixtures: the real build (once per session) and copies of it for fault tests.

Every test that uses the build (`built_artifacts`, directly or through another fixture) is
marked `build` here, so `pytest -m "not build"` (`make check`) runs what needs no build without
any test file saying so.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from deploytui.core.modelref import parse
from deploytui.core.workspace import SHARED, Workspace
from workspaces import A1

BUILD_FIXTURE = "built_artifacts"


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the build's users `build`; and for `make test`'s two xdist workers (`--dist
    loadgroup`), keep each file on one worker (its module fixtures are made once, its tests run
    in order) except the cases marked `spread`: the long per-model tests, independent of each
    other, that would otherwise leave one worker with all of them."""
    for item in items:
        if BUILD_FIXTURE in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.build)
        if item.get_closest_marker("spread") is None:
            item.add_marker(pytest.mark.xdist_group(item.path.name))
    # the long spread cases first (a stable sort: the rest keep their order), so that neither
    # worker is left alone with them at the end
    items.sort(key=lambda item: item.get_closest_marker("spread") is None)


@pytest.fixture(scope="session")
def built_artifacts() -> Path:
    """Run the whole build once into the real artifacts folder (incremental: usually a no-op)."""
    from deploytui.builder import run_build, selected
    from deploytui.spec.context import BuildContext

    ctx = BuildContext.of(A1)
    manifest = run_build(ctx)
    ran = {s.name for s in selected(ctx)}  # not an on-demand step a serving test left cancelled
    failed = {n: manifest.steps[n].reason for n in manifest.failed_steps() if n in ran}
    assert not failed, f"build steps failed: {failed}"
    return A1.artifacts


@pytest.fixture
def a1(built_artifacts: Path) -> Workspace:
    """a1 in the real (built) artifacts folder."""
    return A1


@pytest.fixture(scope="session")
def eager() -> list[list[float]]:
    """Eager PyTorch logits of a1 computed here, independently of the build's reference."""
    import torch

    from deploytui.models.a1_module import a1_input, a1_model

    with torch.inference_mode():
        return a1_model()(a1_input()).tolist()


@pytest.fixture
def artifacts_copy(built_artifacts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of the built artifacts root (a1's folder and shared/). Paths in it are the
    root's: `artifacts_copy / "a1" / ...`; `copy_ws` is a1's workspace in it. The deploytui
    processes a test starts get it through DEPLOYTUI_ARTIFACTS (set here for them: the test
    process itself reads no such variable)."""
    dest = tmp_path / "artifacts"
    skip = shutil.ignore_patterns("results.json*", "outputs", "logs")
    for part in (SHARED, "a1"):
        shutil.copytree(built_artifacts / part, dest / part, ignore=skip, symlinks=True)
    monkeypatch.setenv("DEPLOYTUI_ARTIFACTS", str(dest))
    return dest


@pytest.fixture
def copy_ws(artifacts_copy: Path) -> Workspace:
    """a1 in the private copy of the artifacts (`artifacts_copy`)."""
    return Workspace.at(parse("a1"), artifacts_copy, artifacts_copy.parent / "bundles")
