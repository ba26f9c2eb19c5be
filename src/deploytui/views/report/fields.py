"""One flat row per form from the store, the manifest and the ship checks: the report's fields
(ship and weight sizes, the runtime the build probed, the isolated check, numerics, stages)."""

from __future__ import annotations

import dataclasses
from typing import Any

from deploytui.core.record_parts import median, tolerance_text
from deploytui.core.units import human
from deploytui.core.workspace import Workspace
from deploytui.families import registry
from deploytui.scenarios.accuracy import variants
from deploytui.scenarios.startup.results import ResultsStore as Store
from deploytui.ship import store as ship_store
from deploytui.ship.store import ShipCheck
from deploytui.spec import forms as F
from deploytui.spec.manifest import Manifest, model_info, runtime_facts
from deploytui.views.report.common import scrub


def ship_bytes(form: F.Form, ws: Workspace) -> int | None:
    sizes = [p.stat().st_size for p in form.ship_paths(ws) if p.exists()]
    return sum(sizes) if len(sizes) == len(form.ship_paths(ws)) else None


def weight_fields(form: F.Form, info: dict[str, Any] | None, ws: Workspace) -> dict[str, Any]:
    """What the form ships to carry the weights against the model's unique parameter bytes
    (model.json; each storage once, a tied matrix once): the bytes of its model files (graph or
    code with them). A form without model files keeps its weights in its program or reads them
    from a baked path: not counted. A ratio near 2 on a model whose tied matrix is most of its
    bytes is that matrix shipped twice."""
    ref = ws.model
    unique = (info or {}).get("unique_param_bytes")
    unique = unique if isinstance(unique, int) and unique > 0 else None
    art = ws.artifacts
    files = [art / f.replace("{m}", ref.slug) for f in form.model_files]
    extra = [art / f.replace("{m}", ref.slug) for f in form.optional_files]  # an .onnx's external data
    ok = bool(files) and all(p.is_file() for p in files) and not form.applies(ref)
    shipped = sum(p.stat().st_size for p in [*files, *(p for p in extra if p.is_file())]) if ok else None
    return {
        "weights_shipped_bytes": shipped,
        "weights_in": "model files" if ok else ("program" if not form.model_files else None),
        "unique_param_bytes": unique,
        "weights_ratio": round(shipped / unique, 3) if shipped is not None and unique else None,
    }


def runtime_fields(form: F.Form, manifest: Manifest, ws: Workspace) -> dict[str, Any]:
    """The runtime facts the build probed for `form`, as report fields (never runs anything)."""
    facts, why = runtime_facts(form, ws, manifest)
    if facts is None:
        return {
            "runtime_bytes": None,
            "runtime_probed_at": None,
            "runtime_note": scrub(why),
            "runtime_parts": None,
        }
    if facts.get("probe") == "distributions":
        parts = [
            {"name": d.get("name"), "version": d.get("version"), "bytes": d.get("bytes")}
            for d in facts.get("distributions") or []
        ]
    else:
        parts = [
            {"name": lib.get("name"), "path": scrub(str(lib.get("path"))), "bytes": lib.get("size")}
            for lib in facts.get("libraries") or []
            if lib.get("exists") and not lib.get("system")
        ]
    return {
        "runtime_bytes": facts["runtime_bytes"],
        "runtime_probed_at": facts.get("probed_at"),
        "runtime_note": "",
        "runtime_parts": parts,
    }


def isolated_fields(check: ShipCheck | None) -> dict[str, Any]:
    """A form's last `deploytui ship --check` (artifacts/<model>/ship.json) as report fields:
    `isolated` is true (passed), false, or null (never checked)."""
    if check is None:
        return dict.fromkeys(ISOLATED_FIELDS) | {"isolated_reason": ""}
    return {
        "isolated": check.passed,
        "isolated_reason": scrub(check.reason),
        "bundle_bytes": check.unpacked_bytes,
        "bundle_compressed_bytes": check.compressed_bytes,
        "bundle_venv_bytes": check.venv_bytes,
        "isolated_start_median_s": check.startup_median_s,
        "isolated_peak_rss_bytes": check.peak_rss_median_bytes,
        "isolated_checked_at": check.checked_at,
    }


ISOLATED_FIELDS = (
    "isolated",
    "isolated_reason",
    "bundle_bytes",
    "bundle_compressed_bytes",
    "bundle_venv_bytes",
    "isolated_start_median_s",
    "isolated_peak_rss_bytes",
    "isolated_checked_at",
)


def rows(ws: Workspace, store: Store, manifest: Manifest) -> list[dict[str, Any]]:
    """One flat row per form that has a result, in registry order."""
    out = []
    shipped = ship_store.load(ws.ship_path).forms
    info = model_info(ws.model_dir)
    for form in registry.FORMS:
        rec = store.forms.get(form.key)
        if rec is None:
            continue
        wall, rss = list(rec.wall_s), rec.peak_rss_bytes
        st = rec.wall
        out.append(
            {
                "form": form.key,
                "title": form.title,
                "family": form.family,
                "status": rec.status,
                "error": scrub(rec.error or ""),
                "n": len(wall),
                "start_min_s": st.min if st else None,
                "start_median_s": st.median if st else None,
                "start_max_s": st.max if st else None,
                "start_mean_s": st.mean if st else None,
                "start_stdev_s": st.stdev if st and st.n > 1 else None,
                "peak_rss_median_bytes": median(rss),
                "peak_rss_min_bytes": min(rss) if rss else None,
                "peak_rss_max_bytes": max(rss) if rss else None,
                "ships": ", ".join(
                    f"{p.name} ({human(p.stat().st_size)})" if p.exists() else f"{p.name} (missing)"
                    for p in form.ship_paths(ws)
                )
                or "–",
                "ship_bytes": ship_bytes(form, ws),
                **weight_fields(form, info, ws),
                "runtime": registry.RUNTIME_TITLES[form.runtime],
                **runtime_fields(form, manifest, ws),
                **isolated_fields(shipped.get(form.key)),
                "max_abs_diff": rec.max_abs_diff,
                "max_rel_diff": max((d.max_rel for d in rec.outputs), default=None) if rec.outputs else None,
                "worst": _worst(rec),
                "tolerance": tolerance_text(rec.outputs) or None,
                "within_tol": rec.within_tol,
                "stage": rec.stage,
                "stage_status": rec.stage_status,
                "log": rec.log,
                "stages_ms": rec.stages_ms,
                "modules_added": rec.modules_added,
                "modules_added_torch": rec.modules_added_torch,
                "modules_added_total": rec.modules_added_total,
                "measured_at": rec.measured_at,
                "precision": form.precision,
                "parent": form.parent or None,
                "accuracy": dataclasses.asdict(rec.accuracy) if rec.accuracy is not None else None,
                "within_budget": rec.accuracy.within_budget if rec.accuracy is not None else None,
                "task": dataclasses.asdict(rec.task) if rec.task is not None else None,
                "vs_parent": (
                    variants.ratios(
                        rec,
                        form.parent,
                        store.forms.get(form.parent),
                        lambda key: ship_bytes(registry.get(key), ws),
                    )
                    if form.variant
                    else None
                ),
            }
        )
    return out


def _worst(rec: Any) -> str | None:
    """`logits[0, 2]`: where the largest difference over all outputs is."""
    if not rec.outputs:
        return None
    d = max(rec.outputs, key=lambda o: o.max_abs)
    return f"{d.name}{d.worst[0].index}" if d.worst else d.name
