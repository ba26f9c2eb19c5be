"""A model's ship.json (artifacts/<slug>/ship.json, `paths.ship_path`): each form's isolated
check (verdict, reason, bundle sizes, the sandboxed run's start-up and peak RSS), kept next to
its results.json. Plain JSON, nothing run: the report and
the app read it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deploytui import jsonio

VERSION = 1

PASS, FAIL = "✓", "✗"


def load(path: Path) -> dict[str, dict[str, Any]]:
    """form key → its isolated fact; {} when missing or unreadable."""
    try:
        data = jsonio.read(path)
    except (OSError, ValueError):
        return {}
    if (
        not isinstance(data, dict)
        or data.get("version") != VERSION
        or not isinstance(data.get("forms"), dict)
    ):
        return {}
    return {
        k: v for k, v in data["forms"].items() if isinstance(v, dict) and v.get("verdict") in (PASS, FAIL)
    }


def put(path: Path, key: str, fact: dict[str, Any]) -> None:
    facts = load(path)
    facts[key] = fact
    path.parent.mkdir(parents=True, exist_ok=True)
    jsonio.write_atomic(path, {"version": VERSION, "forms": facts})
