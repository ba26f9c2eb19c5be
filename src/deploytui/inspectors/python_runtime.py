"""What a Python form drags along: the installed distributions its runtime needs, and their size.

The roots of each runtime are registry data (`registry.RUNTIME_DISTRIBUTIONS`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from packaging.utils import canonicalize_name

from deploytui.inspectors import InspectError


@dataclass(frozen=True)
class Distribution:
    name: str
    version: str
    bytes: int


def _requirements(dist: metadata.Distribution, extras: frozenset[str]) -> list[tuple[str, frozenset[str]]]:
    """What `dist` installed with `extras` requires here: (name, its extras) for each requirement
    whose marker holds on this machine for no extra or one of `extras` (torch's
    `cuda-toolkit[cudart,…]` pulls nvidia-cuda-runtime only through cuda-toolkit's extras)."""
    from packaging.requirements import InvalidRequirement, Requirement

    found = []
    for line in dist.requires or []:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if req.marker is not None and not any(req.marker.evaluate({"extra": e}) for e in ("", *extras)):
            continue
        found.append((req.name, frozenset(req.extras)))
    return found


def _size(dist: metadata.Distribution) -> int:
    total = 0
    for f in dist.files or []:
        try:
            total += Path(str(dist.locate_file(f))).stat().st_size
        except OSError:
            pass
    return total


def _installed(roots: tuple[str, ...]) -> list[metadata.Distribution]:
    """Every installed distribution reachable from `roots` through its requirements, extras
    included."""
    if not roots:
        raise InspectError("no distributions to start from")
    seen: dict[str, metadata.Distribution] = {}
    walked: dict[str, frozenset[str]] = {}  # the extras each distribution was walked with
    todo: list[tuple[str, frozenset[str]]] = [(r, frozenset()) for r in roots]
    while todo:
        raw, extras = todo.pop()
        name = canonicalize_name(raw)
        if name in walked and extras <= walked[name]:
            continue
        if name not in seen:
            try:
                seen[name] = metadata.distribution(name)
            except metadata.PackageNotFoundError:
                if name in map(canonicalize_name, roots):
                    raise InspectError(f"{name} is not installed in this environment") from None
                continue
        walked[name] = walked.get(name, frozenset()) | extras
        todo.extend(_requirements(seen[name], walked[name]))
    return list(seen.values())


@functools.lru_cache(maxsize=8)
def closure(roots: tuple[str, ...]) -> tuple[Distribution, ...]:
    """Every installed distribution reachable from `roots`, with its size on disk, largest first."""
    found = [Distribution(d.metadata["Name"], d.version, _size(d)) for d in _installed(roots)]
    return tuple(sorted(found, key=lambda d: -d.bytes))


def metadata_dirs(roots: tuple[str, ...]) -> list[Path]:
    """The .dist-info folders of the closure (their RECORD lists every installed file with its
    hash): what a fingerprint of the installed runtime reads, without sizing every file."""
    out = []
    for dist in _installed(roots):
        where = getattr(dist, "_path", None)  # PathDistribution: the .dist-info folder
        if where is not None:
            out.append(Path(where))
    return sorted(out)
