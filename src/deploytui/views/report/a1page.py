"""A1 beside the reference page: each of the page's figures with ours, from the store and the
manifest only."""

from __future__ import annotations

import re

from deploytui.core import units
from deploytui.core.record_parts import median
from deploytui.core.units import human, ms
from deploytui.core.workspace import Workspace
from deploytui.families import registry
from deploytui.scenarios.startup.results import ResultsStore as Store
from deploytui.spec import a1_page
from deploytui.spec.manifest import Manifest, runtime_facts
from deploytui.views.report.common import _md_table, scrub
from deploytui.views.report.fields import runtime_fields

# ---- A1 beside the reference page -----------------------------------------------------------
NOT_MEASURED = "not measured yet"


def _is_a1(manifest: Manifest, ws: Workspace) -> bool:
    return (manifest.model or ws.model.text) == "a1"


def page_rows(ws: Workspace, store: Store, manifest: Manifest) -> list[dict[str, str]]:
    """Each of the reference page's A1 figures (`a1_page`) with ours beside it, from the store
    and the manifest only; a figure of ours not measured yet says so and how to get it."""
    return [
        {
            "topic": f.topic,
            "form": f.form,
            "figure": f.what,
            "page": f.page,
            "ours": _ours(f, store, manifest, ws),
        }
        for f in registry.FIGURES
    ]


def _ours(fig: a1_page.Figure, store: Store, manifest: Manifest, ws: Workspace) -> str:
    kind, _, arg = fig.ours.partition(":")
    form = registry.get(fig.form)
    if kind == "file":
        art = manifest.artifacts.get(arg)
        return _bytes(art.size) if art else f"{NOT_MEASURED}: not built (run deploytui build)"
    if kind == "runtime":
        got = runtime_fields(form, manifest, ws)
        return human(got["runtime_bytes"]) if got["runtime_bytes"] is not None else got["runtime_note"]
    if kind == "aoti":
        facts, why = runtime_facts(form, ws, manifest)
        objects = (facts or {}).get("aoti_objects") or []
        if not objects:
            return scrub(why) or f"{NOT_MEASURED}: the build's probe stored no AOTInductor object"
        value = objects[0].get(arg)
        return _bytes(value) if arg == "bytes" and isinstance(value, int) else str(value)
    if kind == "relocation":
        return _relocation(fig.form, store, manifest, ws)
    rec = store.forms.get(fig.form)
    if rec is None or not rec.measured:
        why = f" (last run {rec.status}: {scrub(rec.error or '')})" if rec is not None else ""
        return f"{NOT_MEASURED}{why}: run deploytui bench {fig.form}"
    if kind == "start":
        return f"{ms(median(rec.wall_s))} ({ms(min(rec.wall_s))})"
    if kind == "rss":
        return human(median(rec.peak_rss_bytes) or 0)
    if kind == "diff":
        return "–" if rec.max_abs_diff is None else f"{rec.max_abs_diff:.3g}"
    if kind == "stage":
        v = (rec.stages_ms or {}).get(arg)
        return units.ms_value(v, f"{NOT_MEASURED}: no {arg} stage stored", places=2)
    if kind == "modules":
        found = rec.modules_added_total if not arg else (rec.modules_added or {}).get(arg)
    else:  # "torch": one of torch's own subpackages
        found = (rec.modules_added_torch or {}).get(arg)
    return str(found) if found is not None else f"{NOT_MEASURED}: no module census stored"


def _bytes(n: int) -> str:
    """`5 507 B`, as the page writes sizes, with binary units beside from 1 KiB."""
    text = f"{n:,} B".replace(",", " ")
    return text if n < 1024 else f"{text} ({human(n)})"


def _relocation(key: str, store: Store, manifest: Manifest, ws: Workspace) -> str:
    """The stored run of `key` (burn-onnx's File form) when it panicked for its .bpk; else where
    its generated Model::default() looks for the .bpk (the build's copy of the generated code)."""
    rec = store.forms.get(key)
    if rec is not None and "Failed to load burnpack file" in (rec.error or ""):
        return scrub(rec.error or "")
    code = "a1/onnx/a1.rs"
    path = ws.artifacts / code
    found = re.search(r'Self::from_file\(\s*"([^"]+)"', path.read_text()) if path.is_file() else None
    if code not in manifest.artifacts or found is None:
        return f"{NOT_MEASURED}: {key} not built (run deploytui build)"
    ran = f"its stored run: {rec.status}" if rec is not None else "no stored run"
    return (
        f"{ran}, its .bpk in place; the generated Model::default() reads {scrub(found.group(1))}, "
        "a build-dir path: moved, it panics the same way (tests/test_faults.py)"
    )


def _page_section(ws: Workspace, store: Store, manifest: Manifest) -> list[str]:
    rows_ = page_rows(ws, store, manifest)
    parts = [
        "## A1 beside the reference page",
        f"The page's figures (`deploytui.spec.a1_page`) were taken on another machine ({a1_page.MACHINE}) "
        "with its own methods (start-up: 20 runs after one warm-up, the machine under other load; "
        "peak RSS: `/usr/bin/time -l`). Ours are this machine's, read from the stored results and "
        "the build's manifest; a figure not measured yet says so.",
    ]
    for topic in dict.fromkeys(r["topic"] for r in rows_):
        parts += [
            f"### {topic[0].upper()}{topic[1:]}",
            _md_table(
                ["form", "figure", "reference page", "ours"],
                [[r["form"], r["figure"], r["page"], r["ours"]] for r in rows_ if r["topic"] == topic],
            ),
        ]
    return parts
