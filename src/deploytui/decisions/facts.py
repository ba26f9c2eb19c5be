"""The one place `choose` reads the stores: each form's `FormFacts` for a model, from its
results.json (the stored runs), its serve.json (the serving cells: p99 and throughput per batch
size), the manifests (what is built, the sizes the build recorded, the
runtime facts its probe steps stored) and its ship.json (the isolated checks). Reads files, runs
nothing; a damaged store is reported in the warnings and read as far as it goes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import replace

from deploytui.core.record import RunRecord
from deploytui.core.record_parts import tolerance_text
from deploytui.core.workspace import Workspace
from deploytui.decisions.choose import BUILD_FAILED, BUILT, NOT_APPLICABLE, NOT_BUILT, FormFacts
from deploytui.families import registry
from deploytui.scenarios.serving import store as serve_store
from deploytui.scenarios.startup import results
from deploytui.ship import store as ship_store
from deploytui.ship.store import ShipCheck
from deploytui.spec import forms, manifest
from deploytui.spec.manifest import Manifest


def read(
    ws: Workspace, store: results.ResultsStore | None = None, target: str | None = None
) -> tuple[list[FormFacts], list[str]]:
    """Every form of the registry, in its order, as stored for the workspace's model on this
    machine, or on `target` (its start-up runs; what a bundle holds and ships is the same
    there, serving cells are this machine's only); and what a damaged store dropped. `store`:
    the runs already loaded (the app's session)."""
    store = store if store is not None else results.load(ws.results_on(target))
    view = manifest.load(ws)
    shipped = ship_store.load(ws.ship_path)
    served = (
        serve_store.load(ws)
        if target is None
        else serve_store.ServeStore(ws.target_dir(target) / "serve.json")
    )
    facts = []
    for i, form in enumerate(registry.FORMS):
        ran, refused = serve_store.by_batch(served.forms, form.key)
        fact = _facts(i, form, ws, view, store.forms.get(form.key), shipped.forms.get(form.key))
        state, state_why = build_state(registry.for_batch(form), view, ws)
        facts.append(
            replace(
                fact,
                serving=ran,
                serving_refused=refused,
                serving_built=state,
                serving_built_why=state_why,
                target=target or "",
            )
        )
    return facts, [*store.dropped, *shipped.dropped, *served.dropped]


def _facts(
    order: int,
    form: forms.Form,
    ws: Workspace,
    view: Manifest,
    rec: RunRecord | None,
    shipped: ShipCheck | None,
) -> FormFacts:
    built, why = build_state(form, view, ws)
    runtime, runtime_missing = manifest.runtime_facts(form, ws, view)
    ran = rec.status if rec is not None and rec.status in ("ok", "failed") else ""
    ok = rec is not None and rec.measured
    wall, rss = (rec.wall, rec.rss) if rec is not None else (None, None)
    if rec is not None and rec.target is not None and rec.target.emulated:
        wall, rss = None, None  # qemu's timings: stored and shown, never ranked
    facts = FormFacts(
        key=form.key,
        title=form.title,
        model=ws.hint_options(),
        runtime=form.runtime,
        python=form.needs_python,
        files=len(form.ship_files(ws)),
        order=order,
        built=built,
        built_why=why,
        ran=ran,
        run_error=(rec.error or rec.status) if rec is not None and ran == "failed" else "",
        runs=len(rec.wall_s) if rec is not None else 0,
        measured_at=rec.measured_at if rec is not None else None,
        startup_s=wall.median if ok and wall else None,
        peak_rss_bytes=rss.median if ok and rss else None,
        max_abs_diff=rec.max_abs_diff if ok and rec else None,
        within_tol=rec.within_tol if ok and rec else None,
        tolerance=tolerance_text(rec.outputs if rec else None),
        files_bytes=files_bytes(form, view, ws) if built != NOT_APPLICABLE else None,
        runtime_bytes=runtime["runtime_bytes"] if runtime else None,
        runtime_missing=runtime_missing,
        isolated=shipped.passed if shipped is not None else None,
        isolated_reason=shipped.reason if shipped is not None else "",
        bundle_bytes=shipped.compressed_bytes if shipped is not None else None,
    )
    task = rec.task if ok and rec is not None else None
    if task is not None and (ws.data is None or task.data == ws.data.text):  # on the data asked for
        facts = dataclasses.replace(
            facts, task_drop=task.drop, task_drop_ci=(task.drop_low, task.drop_high), task_data=task.data
        )
    elif ws.data is not None:
        facts = dataclasses.replace(facts, task_data=ws.data.text, task_missing=True)
    acc = rec.accuracy if ok and rec is not None else None
    if acc is None or not acc.outputs:
        return dataclasses.replace(facts, precision=form.precision)
    top1s = [o.top1 for o in acc.outputs if o.top1 is not None]  # the worst output's figures
    return dataclasses.replace(
        facts,
        precision=form.precision,
        within_budget=acc.within_budget,
        top1=min(top1s) if top1s else None,
        cosine=min(o.cosine for o in acc.outputs),
    )


def build_state(form: forms.Form, view: Manifest, ws: Workspace) -> tuple[str, str]:
    """BUILT, NOT_APPLICABLE, BUILD_FAILED or NOT_BUILT, and why it is not built."""
    why = manifest.availability(form, ws, view)
    if form.applies(ws.model):
        return NOT_APPLICABLE, why
    if not why:
        return BUILT, why
    if why.startswith(("not built", "missing artifact")):
        return NOT_BUILT, why
    return BUILD_FAILED, why


def files_bytes(form: forms.Form, view: Manifest, ws: Workspace) -> int | None:
    """The model files + program that ship, as the build recorded their sizes (the file's own
    size where the manifest has none); None when one is missing."""
    total = 0
    for rel in form.ship_files(ws):
        art = view.artifacts.get(rel)
        size = art.size if art is not None else None
        if size is None:
            path = ws.artifacts / rel
            if not path.is_file():
                return None
            size = path.stat().st_size
        total += size
    return total
