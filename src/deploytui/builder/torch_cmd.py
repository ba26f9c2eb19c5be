"""One PyTorch export, run in its own process: `python -m deploytui.builder.torch_cmd WHAT OUT_DIR`.

Prints one JSON object as its last stdout line: the export's own wall time, the Python
warnings it raised (the TorchScript deprecations, for instance) and tool versions.
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any


def export_safetensors(out: Path) -> dict[str, Any]:
    """The weights for the eager form, and eager's logits: the reference every form is diffed against."""
    import torch
    from safetensors.torch import save_file

    from deploytui.model import a1_input, a1_model

    model = a1_model()
    save_file(model.state_dict(), str(out / "a1.safetensors"))
    with torch.inference_mode():
        logits = model(a1_input()).tolist()
    (out / "reference.json").write_text(json.dumps({"logits": logits, "torch": torch.__version__}))
    return {}


def export_torchscript(out: Path) -> dict[str, Any]:
    import torch

    from deploytui.model import a1_input, a1_model

    model, x = a1_model(), a1_input()
    torch.jit.script(model).save(str(out / "a1_script.pt"))
    torch.jit.trace(model, (x,)).save(str(out / "a1_trace.pt"))
    return {}


def export_torch_export(out: Path) -> dict[str, Any]:
    import torch

    from deploytui.model import a1_input, a1_model

    ep = torch.export.export(a1_model(), (a1_input(),))
    (out / "a1_export_graph.py").write_text(ep.graph_module.code)
    torch.export.save(ep, str(out / "a1_export.pt2"))
    return {}


def _aoti(out: Path, name: str, inductor_configs: dict[str, Any] | None) -> dict[str, Any]:
    import torch

    from deploytui.model import a1_input, a1_model

    ep = torch.export.export(a1_model(), (a1_input(),))
    torch._inductor.aoti_compile_and_package(
        ep, package_path=str(out / name), inductor_configs=inductor_configs
    )
    return {"inductor_configs": inductor_configs or {}}


def export_aoti(out: Path) -> dict[str, Any]:
    return _aoti(out, "a1_aoti.pt2", None)


def export_aoti_lean(out: Path) -> dict[str, Any]:
    return _aoti(out, "a1_aoti_lean.pt2", {"aot_inductor.link_libtorch": False})


def export_onnx(out: Path) -> dict[str, Any]:
    import onnx
    import torch

    from deploytui.model import a1_input, a1_model

    torch.onnx.export(
        a1_model(), (a1_input(),), str(out / "a1.onnx"), input_names=["x"], output_names=["logits"]
    )
    m = onnx.load(str(out / "a1.onnx"))
    return {
        "opset": [[o.domain or "ai.onnx", o.version] for o in m.opset_import],
        "nodes": [n.op_type for n in m.graph.node],
        "onnx": onnx.__version__,
    }


EXPORTS = {
    "safetensors": export_safetensors,
    "torchscript": export_torchscript,
    "torch-export": export_torch_export,
    "aoti": export_aoti,
    "aoti-lean": export_aoti_lean,
    "onnx": export_onnx,
}


def main(argv: list[str]) -> int:
    what, out = argv[0], Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    import torch

    t_import = time.perf_counter() - t0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        t1 = time.perf_counter()
        facts = EXPORTS[what](out)
        export_s = time.perf_counter() - t1
    seen: list[str] = []
    for w in caught:
        line = f"{w.category.__name__}: {w.message}"
        if line not in seen:
            seen.append(line)
        print(f"warning: {line}", file=sys.stderr)
    facts.update(
        torch=torch.__version__, import_s=round(t_import, 3), export_s=round(export_s, 3), warnings=seen
    )
    print(json.dumps(facts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
