"""The executorch family's exports: torch.export of the model lowered to a .pte (XNNPACK where it
can be, ExecuTorch's own delegation report beside it as JSON), its PT2E int8 and the dynamic-batch
program."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from deploytui.families.common.samples import calibration_inputs
from deploytui.families.common.torch_export import dynamic_program, program

# what the build's fork server imports once for these exports (deploytui.builder.forkserver)
PRELOAD = (
    "executorch.exir",
    "executorch.backends.xnnpack.partition.xnnpack_partitioner",
    "executorch.backends.xnnpack.quantizer.xnnpack_quantizer",
    "executorch.devtools.backend_debug",
    "torchao.quantization.pt2e.quantize_pt2e",
)


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


def export_executorch(m: Any, out: Path, stem: str) -> dict[str, Any]:
    """torch.export, then ExecuTorch's edge dialect lowered to XNNPACK where it can be, to a .pte."""
    return lower(program(m), out, stem)


# Hugging Face's masks index with `torch.arange(n) + offset`; XNNPACKQuantizer's
# transform_for_annotation (`_convert_scalars_to_attrs`) makes the scalar of every aten.add / aten.mul
# a float32 constant, so that index turns float: what the quantizer does to any such model
FLOAT_INDEX = (
    " (XNNPACKQuantizer turned the integer scalar of an add or mul into a float32 constant, so an "
    "index computed from it is float: its _convert_scalars_to_attrs, whatever the samples)"
)


def export_executorch_int8(m: Any, out: Path, stem: str) -> dict[str, Any]:
    """PT2E static int8 for XNNPACK: `XNNPACKQuantizer` (symmetric, per-channel weights) on the
    exported program `ep`, calibrated on the example inputs and the calibration set, converted,
    exported again and lowered like the fp32 .pte (what XNNPACK does not take stays fp32: the
    delegation report says which)."""
    import torch
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    prepared = prepare_pt2e(program(m).module(), quantizer)
    sets = calibration_inputs(m, out)
    try:
        with torch.no_grad():
            for flat in sets:
                args, kwargs = m.call(flat)
                prepared(*args, **kwargs)
    except IndexError as e:  # on every input alike, the example's too: the quantizer's own limit
        if "used as indices" not in str(e):
            raise
        raise IndexError(f"{e}{FLOAT_INDEX}") from None
    converted = convert_pt2e(prepared)
    facts = lower(torch.export.export(converted, m.args, m.kwargs), out, f"{stem}_int8")
    return {**facts, "quantizer": "XNNPACKQuantizer symmetric per-channel", "calibration_inputs": len(sets)}


def export_dyn_executorch(m: Any, out: Path, stem: str) -> dict[str, Any]:
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    def lower(ep: Any) -> dict[str, Any]:
        program = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]).to_executorch()
        (out / f"{stem}_dyn.pte").write_bytes(program.buffer)
        return {"pte_bytes": len(program.buffer)}

    return dynamic_program(m, lower)
