"""A 0-d scalar tensor in, and outputs of five dtypes out: a float64 0-d total, a bool mask, an
int32 count, the float32 activations and a bfloat16 head. OpenVINO's C API has no rank-0 shape;
its CPU plugin drops the float64, int32 and bfloat16 Converts at compile time, giving those ports
a second name; its Python API hands bfloat16 over as float16 bits; bfloat16's rounding step is
2^-8 of the value, more than a float32 tolerance."""

import torch
from torch import nn


class Scalars(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(6, 4)
        self.head = nn.Linear(6, 3).to(torch.bfloat16)

    def forward(self, x: torch.Tensor, scale: torch.Tensor) -> dict[str, torch.Tensor]:
        y = self.lin(x) * scale
        return {
            "total": y.double().sum(),
            "mask": y > 0,
            "count": (y > 0).sum(dim=1).to(torch.int32),
            "y": y,
            "head": self.head(x.to(torch.bfloat16)),
        }


def make() -> tuple[nn.Module, tuple[torch.Tensor, torch.Tensor]]:
    torch.manual_seed(0)
    return Scalars().eval(), (torch.randn(3, 6), torch.tensor(1.5))
