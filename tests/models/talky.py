"""A model file that talks: JSON-looking and plain lines on stdout at import, in the factory and
in forward, chatter on stderr, a Python warning, a slow factory; it returns a dict with a None."""

import sys
import time
import warnings

import torch
from torch import nn

print('{"config": "dump", "hidden": 4}')
print("{ not json at all")
print("stderr chatter at import", file=sys.stderr)
warnings.warn("a warning at import", stacklevel=1)


class Talky(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> dict[str, object]:
        print('{"forward": "called"}')
        return {"logits": self.fc(x), "aux": (x * 2, None)}


def make():
    print('{"factory": "building"}', flush=True)
    print("slow factory...", file=sys.stderr)
    time.sleep(2)
    torch.manual_seed(5)
    return Talky().eval(), (torch.randn(2, 4),)
