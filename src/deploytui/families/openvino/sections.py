"""The OpenVINO family's inspector section: the IR's layers."""

from __future__ import annotations

from pathlib import Path

from deploytui.families.openvino import openvino_ir
from deploytui.families.openvino.family import OPENVINO_IR
from deploytui.inspectors.section import Builders, Section, one, operators


def openvino_section(path: Path) -> Section:
    """The IR's layers, as its .xml lists them."""
    rows = openvino_ir.layers(path)
    ops = operators([r[1] for r in rows if r[1] not in {"Const", "Parameter", "Result"}])
    return Section(
        "Graph",
        f"OpenVINO IR: {len(rows)} layers ({ops})",
        "table",
        columns=["id", "type", "name", "output"],
        rows=[list(r) for r in rows],
    )


BUILDERS: Builders = {
    OPENVINO_IR: ("Graph", "table", lambda i: "OpenVINO IR", one(lambda i: openvino_section(i.file()))),
}
