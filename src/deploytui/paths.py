"""Where things live: the project, its artifacts, its caches. One place for every path."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from deploytui.models import ModelRef, parse

ROOT = Path(__file__).resolve().parents[2]


def artifacts_dir() -> Path:
    """The artifacts folder (`DEPLOYTUI_ARTIFACTS` overrides it, e.g. for tests on a copy)."""
    return Path(os.environ.get("DEPLOYTUI_ARTIFACTS", ROOT / "artifacts")).resolve()


def cache_dir() -> Path:
    """Caches kept outside the clone (cargo target dir, inductor caches): `DEPLOYTUI_CACHE` overrides."""
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "deploytui"
    return Path(os.environ.get("DEPLOYTUI_CACHE", default)).resolve()


def scratch_dir() -> Path:
    """TMPDIR for torch, onnxruntime and the runners. Inductor keeps its precompiled headers there
    (4 of ~150 MB per AOTI build, keyed by this venv's paths so no other clone can use them): in
    the venv, they go when the clone goes instead of piling up in the shared cache."""
    return Path(sys.prefix) / "tmp"


def python() -> str:
    """The interpreter of this venv: runners and build steps run in it."""
    return sys.executable


SHARED = "shared"  # artifacts/shared/: the model-independent programs, built once for every model
_current: ModelRef | None = None


def set_model(ref: ModelRef) -> None:
    """The model this process works on (`--model`); subprocesses inherit it (DEPLOYTUI_MODEL)."""
    global _current
    _current = ref
    os.environ["DEPLOYTUI_MODEL"] = ref.text


def model() -> ModelRef:
    """The current model: set_model's, else $DEPLOYTUI_MODEL, else a1."""
    return _current if _current is not None else parse(os.environ.get("DEPLOYTUI_MODEL") or None)


def model_dir(slug: str | None = None) -> Path:
    """artifacts/<slug>/: one model's manifest, results, inputs, reference, exports and binaries."""
    return artifacts_dir() / (slug or model().slug)


def shared_dir() -> Path:
    return artifacts_dir() / SHARED


def bin_dir() -> Path:
    return shared_dir() / "bin"


def results_path(slug: str | None = None) -> Path:
    return model_dir(slug) / "results.json"


def reference_path(slug: str | None = None) -> Path:
    """Eager's outputs (output_0, ...), written by the build's export-model step."""
    return model_dir(slug) / "reference.safetensors"


def inputs_path(slug: str | None = None) -> Path:
    return model_dir(slug) / "inputs.safetensors"


def outputs_path(form_key: str, slug: str | None = None) -> Path:
    """The last run's outputs of a form (the Diff view recomputes from them)."""
    return model_dir(slug) / "outputs" / f"{form_key}.safetensors"


def ship_path(slug: str | None = None) -> Path:
    """Each form's last isolated check of its bundle (`deploytui ship FORM --check`)."""
    return model_dir(slug) / "ship.json"


def bundles_dir(slug: str | None = None) -> Path:
    """Where `deploytui ship` writes a model's bundles by default (bundles/<slug>/<form>/)."""
    return ROOT / "bundles" / (slug or model().slug)
