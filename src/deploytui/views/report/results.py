"""`deploytui report --results DIR`: each model's page and the matrix of every model through every
form, as docs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deploytui.core import shorten
from deploytui.core.workspace import Workspace
from deploytui.families import registry
from deploytui.scenarios.startup.results import ResultsStore as Store
from deploytui.views.report.common import _md_table, scrub
from deploytui.views.report.render import markdown
from deploytui.views.report.sweep import scale_section

GENERATED = "<!-- written by `deploytui report --results DIR` from the stored results: do not edit -->"


def _cell(rec: Any) -> str:
    """One (model, form) of the matrix: ✓, n/a, or the stage that stopped it and the tool's words."""
    if rec is None:
        return "–"
    if rec.status == "not-applicable":
        return "n/a"
    if rec.status == "ok" and rec.accuracy is not None and rec.accuracy.within_budget:
        cos = min((o.cosine for o in rec.accuracy.outputs), default=1.0)
        return f"✓ cos {cos:.4f}"  # a variant: within its accuracy budget
    if rec.status == "ok" and rec.within_tol and rec.accuracy is None:
        return "✓"
    words = scrub(rec.error or rec.status)
    words = words.rsplit("error: ", 1)[-1].replace("|", "\\|").replace("\n", " ")  # the tool's own words
    words = shorten.end(words, 60)
    return f"✗ {rec.stage or rec.status}: `{words}`"


Sizes = dict[str, tuple[list[int], list[int]]]  # form -> batch sizes it ran at, refused (serve_text)


def _sizes(form: str, sizes: Sizes | None) -> str:
    """` · batch ✓ 1, 8 ✗ 32` where `bench --batch` ran the form (nothing where it did not)."""
    if not sizes or form not in sizes:
        return ""
    yes, no = sizes[form]
    return (
        " · batch"
        + (f" ✓ {', '.join(map(str, yes))}" if yes else "")
        + (f" ✗ {', '.join(map(str, no))}" if no else "")
    )


def matrix(stores: dict[str, Store], sizes: dict[str, Sizes] | None = None) -> str:
    """Every model measured here through every form (model text -> its store), with the batch
    sizes each form ran at and refused where `bench --batch` measured it (model text -> sizes)."""
    sizes = sizes or {}
    header = ["form", *(f"`{scrub(text)}`" for text in stores)]
    body = [
        [
            f.key,
            *(
                _cell(store.forms.get(f.key)) + _sizes(f.key, sizes.get(text))
                for text, store in stores.items()
            ),
        ]
        for f in registry.FORMS
    ]
    return (
        "\n\n".join(
            [
                GENERATED,
                "# Every model through every form, as measured here",
                "✓ = built, ran and matched eager within the model's tolerance; otherwise the stage that "
                "stopped it and the tool's decisive line; n/a = the form cannot exist for the model "
                "(the hand-written burn forms need the Mlp layout); – = not measured. `batch ✓ 1, 8 ✗ 64`: "
                "the batch sizes `bench --batch` ran the form at (on its dynamic-batch export where it "
                "has one) and those it refused. Each model's own figures are in its file beside this one.",
                _md_table(header, body),
            ]
        )
        + "\n"
    )


def model_page(ws: Workspace, store: Store) -> str:
    """One model's page of docs/results: its report without the sweep, marked as written by a tool."""
    from deploytui.spec import manifest as manifest_file

    return GENERATED + "\n\n" + markdown(ws, store, manifest_file.load(ws), scale=False)


def write_results(folder: Path, base: Workspace) -> list[Path]:
    """The measured results of every model built under `base`'s artifacts folder, as docs:
    `<slug>.md` per model with stored results (the report without the sweep), `matrix.md` (every
    model through every form) and `scale.md` (the sweep, when there is one). Files of other
    writers in `folder` are left alone."""
    from deploytui.core.modelref import parse
    from deploytui.scenarios.startup import results
    from deploytui.spec import manifest as manifest_file

    folder.mkdir(parents=True, exist_ok=True)
    from deploytui.scenarios.serving import store as serve_store
    from deploytui.scenarios.serving import text as serve_text

    written: list[Path] = []
    stores: dict[str, Store] = {}
    sizes: dict[str, Sizes] = {}
    for text, slug in manifest_file.built_models(base.artifacts).items():
        ws = base.for_model(parse(text))
        store = results.load(ws.results_path)
        if not store.forms:
            continue
        stores[text] = store
        sizes[text] = serve_text.accepted(serve_store.load(ws).forms)
        written.append(_write(folder / f"{slug}.md", model_page(ws, store)))
    if stores:
        written.append(_write(folder / "matrix.md", matrix(stores, sizes)))
    scale = scale_section(base)
    if scale:
        written.append(_write(folder / "scale.md", "\n\n".join([GENERATED, *scale]) + "\n"))
    return written


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
