"""The tract family's inspector section: the nodes of the model as tract optimised it."""

from __future__ import annotations

from pathlib import Path

from deploytui.families.tract.family import TRACT_NODES
from deploytui.inspectors import InspectError
from deploytui.inspectors.section import Builders, Section, one, operators


def tract_nodes_section(path: Path) -> Section:
    """tract_nodes.txt (NAME, OP, OUTPUT FACTS per line, tab-separated), as tract-run listed it."""
    if not path.exists():
        raise InspectError(f"{path.name} is missing: the tract-optimise step has not run")
    rows = [line.split("\t", 2) for line in path.read_text(errors="replace").splitlines()]
    rows = [r for r in rows if len(r) == 3]
    if not rows:
        raise InspectError(f"{path.name} lists no nodes")
    ops = operators([r[1] for r in rows if r[1] not in {"Source", "Const"}])
    return Section(
        "Graph",
        f"the model as tract optimised it: {len(rows)} nodes ({ops})",
        "table",
        columns=["node", "operator", "output"],
        rows=rows,
    )


BUILDERS: Builders = {
    TRACT_NODES: (
        "Graph",
        "table",
        lambda i: "the model as tract optimised it",
        one(lambda i: tract_nodes_section(i.file())),
    ),
}
