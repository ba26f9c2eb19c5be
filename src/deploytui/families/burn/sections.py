"""The burn family's inspector section: the GraphIr burn-capture recorded."""

from __future__ import annotations

import json
from pathlib import Path

from deploytui.families.burn.family import BURN_GRAPHIR
from deploytui.inspectors import InspectError
from deploytui.inspectors.section import Builders, Section, one


def capture_section(path: Path) -> Section:
    if not path.exists():
        raise InspectError(f"{path.name} is missing: the burn-capture step has not run")
    try:
        data = json.loads(path.read_text())
        ops = data["operations"]
    except (ValueError, KeyError, TypeError) as e:
        raise InspectError(f"{path.name} is not a captured graph: {e}") from None
    rows = []
    for i, op in enumerate(ops):
        ins = " ".join(f"#{t.get('id')}{t.get('shape')}" for t in op.get("inputs", []))
        outs = " ".join(f"#{t.get('id')}{t.get('shape')}" for t in op.get("outputs", []))
        rows.append([str(i), str(op.get("kind", "?")), ins, outs])
    title = (
        f"burn GraphIr captured on Device::capture: {len(ops)} operations, inputs {data.get('inputs')}, "
        f"outputs {data.get('outputs')}, {len(data.get('values', []))} recorded values"
    )
    return Section("Graph", title, "table", columns=["#", "operation", "inputs", "outputs"], rows=rows)


BUILDERS: Builders = {
    BURN_GRAPHIR: ("Graph", "table", lambda i: "captured GraphIr", one(lambda i: capture_section(i.file()))),
}
