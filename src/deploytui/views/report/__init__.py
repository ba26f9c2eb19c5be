"""The report: markdown, JSON and CSV from what is stored; it runs nothing.

The reference page's tables rebuilt from the stored results. Headless: the app's export key and
`deploytui report` both call `write_report`. Paths are made relative to the project, and anything
outside it is shortened, so a report holds no absolute paths from this machine and nothing from
the environment. A report only serialises what is stored (results.json, the manifest and its
probed runtime facts): it never runs a program.

common (scrub, the markdown table), fields (one flat row per form), tables (the per-form tables'
cells), a1page (A1 beside the reference page), choosing (how to choose), serving, sweep (the
scale section), render (markdown, JSON, CSV, `write_report`) and results (`--results DIR`: each
model's page and the matrix).
"""

from __future__ import annotations

from deploytui.views.report.a1page import NOT_MEASURED, page_rows
from deploytui.views.report.choosing import choose_section, how_to_choose
from deploytui.views.report.common import scrub
from deploytui.views.report.fields import (
    ISOLATED_FIELDS,
    isolated_fields,
    rows,
    runtime_fields,
    ship_bytes,
    weight_fields,
)
from deploytui.views.report.render import FORMATS, METHOD, RENDER, as_csv, as_json, markdown, write_report
from deploytui.views.report.results import GENERATED, Sizes, matrix, write_results
from deploytui.views.report.serving import serve_section
from deploytui.views.report.sweep import scale_section

__all__ = [
    "FORMATS",
    "GENERATED",
    "ISOLATED_FIELDS",
    "METHOD",
    "NOT_MEASURED",
    "RENDER",
    "Sizes",
    "as_csv",
    "as_json",
    "choose_section",
    "how_to_choose",
    "isolated_fields",
    "markdown",
    "matrix",
    "page_rows",
    "rows",
    "runtime_fields",
    "scale_section",
    "scrub",
    "serve_section",
    "ship_bytes",
    "weight_fields",
    "write_report",
    "write_results",
]
