"""The environment forms and torch build steps run in (shared by the bench, the build and the
runtime probe): the user's, with torch's and onnxruntime's writes kept in the venv and our cache."""

from __future__ import annotations

import os
from pathlib import Path

from deploytui.core import paths


def torch_env(cache: Path | None = None) -> dict[str, str]:
    """Keep torch's and onnxruntime's writes inside the venv and our cache.

    (notes: inductor's precompiled headers, ORT telemetry)
    """
    return {
        "TMPDIR": str(paths.scratch_dir()),
        "TORCHINDUCTOR_CACHE_DIR": str((cache or paths.cache_dir()) / "inductor"),
        "ORT_DISABLE_TELEMETRY": "1",
    }


def runner_env() -> dict[str, str]:
    """The environment every form runs in: the user's, with our caches, no Rust backtraces."""
    env = {k: v for k, v in os.environ.items() if k != "RUST_BACKTRACE"}
    env.update(torch_env())
    paths.scratch_dir().mkdir(parents=True, exist_ok=True)
    return env
