"""What a Python form drags along: the installed distributions its runtime needs, and their size."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import metadata

from deploytui.inspectors import InspectError

# the top-level distribution each Python runtime starts from
ROOTS = {"python-torch": ("torch", "safetensors"), "python-onnxruntime": ("onnxruntime", "numpy")}


@dataclass(frozen=True)
class Distribution:
    name: str
    version: str
    bytes: int


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements(dist: metadata.Distribution) -> list[str]:
    from packaging.requirements import InvalidRequirement, Requirement

    names = []
    for line in dist.requires or []:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        names.append(req.name)
    return names


def _size(dist: metadata.Distribution) -> int:
    total = 0
    for f in dist.files or []:
        try:
            total += dist.locate_file(f).stat().st_size
        except OSError:
            pass
    return total


@functools.lru_cache(maxsize=8)
def closure(runtime: str) -> tuple[Distribution, ...]:
    """Every installed distribution reachable from the runtime's roots, largest first."""
    if runtime not in ROOTS:
        raise InspectError(f"{runtime} is not a Python runtime")
    seen: dict[str, Distribution] = {}
    todo = list(ROOTS[runtime])
    while todo:
        name = _norm(todo.pop())
        if name in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            if name in map(_norm, ROOTS[runtime]):
                raise InspectError(f"{name} is not installed in this environment") from None
            continue
        seen[name] = Distribution(dist.metadata["Name"], dist.version, _size(dist))
        todo.extend(_requirements(dist))
    return tuple(sorted(seen.values(), key=lambda d: -d.bytes))
