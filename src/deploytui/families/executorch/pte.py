"""An exported program lowered to an ExecuTorch .pte, XNNPACK where it can be, with ExecuTorch's
own delegation report (which operators XNNPACK took) beside it as JSON: what the fp32 and the
int8 ExecuTorch exports share."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def lower(ep: Any, out: Path, name: str) -> dict[str, Any]:
    """`ep` → `<name>.pte` + `<name>_delegation.json` in `out`; returns the export's facts."""
    from importlib.metadata import version

    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.devtools.backend_debug import get_delegation_info
    from executorch.exir import to_edge_transform_and_lower

    edge = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])
    info = get_delegation_info(edge.exported_program().graph_module)
    report = {
        "delegated_subgraphs": info.num_delegated_subgraphs,
        "delegated_nodes": info.num_delegated_nodes,
        "non_delegated_nodes": info.num_non_delegated_nodes,
        "operators": [
            {"op": op, "delegated": b.delegated, "non_delegated": b.non_delegated}
            for op, b in sorted(info.delegation_by_operator.items())
        ],
    }
    program = edge.to_executorch()
    (out / f"{name}.pte").write_bytes(program.buffer)
    (out / f"{name}_delegation.json").write_text(json.dumps(report, indent=1) + "\n")
    return {
        "executorch": version("executorch"),
        "pte_bytes": len(program.buffer),
        **{k: v for k, v in report.items() if k != "operators"},
    }
