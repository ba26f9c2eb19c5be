"""Load this bundle's PyTorch model and run it once (a standalone script: torch, safetensors).

usage: python load.py MODE MODEL_FILE   MODE: eager (model.py's Mlp + safetensors weights), jit
(TorchScript), export (torch.export .pt2), aoti (AOTInductor .pt2). The input is input.json
beside this script; prints one JSON line {"logits": [[...]]}.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))


def load(mode: str, path: str) -> Any:
    import torch

    if mode == "eager":
        from safetensors.torch import load_file

        sys.path.insert(0, HERE)
        from model import Mlp  # type: ignore[import-not-found]

        model = Mlp().eval()
        model.load_state_dict(load_file(path))
        return model
    if mode == "jit":
        return torch.jit.load(path)
    if mode == "export":
        return torch.export.load(path).module()
    if mode == "aoti":
        return torch._inductor.aoti_load_package(path)
    raise SystemExit(f"error: unknown mode {mode!r}")


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: load.py MODE MODEL_FILE", file=sys.stderr)
        return 2
    import torch

    torch.set_num_threads(1)
    with open(os.path.join(HERE, "input.json")) as f:
        x = torch.tensor(json.load(f)["input"], dtype=torch.float32)
    try:
        model = load(*argv)
    except Exception as e:
        print(f"error: could not load {argv[1]} ({argv[0]}): {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    with torch.inference_mode():
        y = model(x)
    if isinstance(y, (list, tuple)):
        y = y[0]
    print(json.dumps({"logits": y.tolist()}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
