"""The ExecuTorch family's inspector section: XNNPACK's delegation report."""

from __future__ import annotations

import json
from pathlib import Path

from deploytui.families.executorch.family import PTE_DELEGATION
from deploytui.inspectors import InspectError
from deploytui.inspectors.section import Builders, Section, one


def delegation_section(path: Path) -> Section:
    """The .pte's operators, delegated to XNNPACK or left to ExecuTorch's kernels, as
    ExecuTorch's get_delegation_info reported them at export (`<m>_delegation.json`)."""
    if not path.exists():
        raise InspectError(f"{path.name} is missing: the export-executorch step has not run")
    try:
        data = json.loads(path.read_text())
        rows = [[str(o["op"]), str(o["delegated"]), str(o["non_delegated"])] for o in data["operators"]]
        title = (
            f"XNNPACK delegation: {data['delegated_nodes']} nodes in {data['delegated_subgraphs']} "
            f"delegated subgraph(s), {data['non_delegated_nodes']} left to ExecuTorch's kernels"
        )
    except (ValueError, KeyError, TypeError) as e:
        raise InspectError(f"{path.name} is not a delegation report: {e}") from None
    return Section("Graph", title, "table", columns=["operator", "delegated", "not delegated"], rows=rows)


BUILDERS: Builders = {
    PTE_DELEGATION: (
        "Graph",
        "table",
        lambda i: "XNNPACK delegation",
        one(lambda i: delegation_section(i.file())),
    ),
}
