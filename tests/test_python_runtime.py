"""The installed distributions a Python form drags along: requirements followed through extras
(torch requires `cuda-toolkit[cudart,…]`, and only that extra pulls nvidia-cuda-runtime: a
bundle pinned without it could not make its venv from its own wheels)."""

from __future__ import annotations

from deploytui.inspectors import python_runtime


def _dist(site, name: str, *requires: str) -> None:
    info = site / f"{name}-1.0.dist-info"
    info.mkdir()
    lines = [f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"]
    lines += [f"Requires-Dist: {r}\n" for r in requires]
    (info / "METADATA").write_text("".join(lines))
    (info / "RECORD").write_text("")


def test_requirements_are_followed_through_the_extras_asked_for(tmp_path, monkeypatch):
    _dist(tmp_path, "dtapp", "dtkit[cudart]", 'dtdocs; extra == "docs"')
    _dist(tmp_path, "dtkit", 'dtruntime; extra == "cudart"', 'dtfft; extra == "cufft"', "dtbase")
    for name in ("dtruntime", "dtfft", "dtbase", "dtdocs"):
        _dist(tmp_path, name)
    monkeypatch.syspath_prepend(str(tmp_path))
    names = {d.name for d in python_runtime.closure(("dtapp",))}
    assert names == {"dtapp", "dtkit", "dtruntime", "dtbase"}


def test_an_extra_asked_for_later_is_walked_again(tmp_path, monkeypatch):
    _dist(tmp_path, "dtroot", "dtplain", "dtlib")
    _dist(tmp_path, "dtplain", "dtlib[more]")
    _dist(tmp_path, "dtlib", 'dtextra; extra == "more"')
    _dist(tmp_path, "dtextra")
    monkeypatch.syspath_prepend(str(tmp_path))
    names = {d.name for d in python_runtime.closure(("dtroot",))}
    assert names == {"dtroot", "dtplain", "dtlib", "dtextra"}
