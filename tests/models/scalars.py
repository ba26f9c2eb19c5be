"""A 0-d scalar tensor in, and outputs of four dtypes out: a float64 0-d total, a bool mask, an
int32 count and the float32 activations. OpenVINO's C API has no rank-0 shape, and its CPU plugin
drops the float64 and int32 Converts at compile time, giving those outputs a second name."""

import torch
from torch import nn


class Scalars(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(6, 4)

    def forward(self, x: torch.Tensor, scale: torch.Tensor) -> dict[str, torch.Tensor]:
        y = self.lin(x) * scale
        return {"total": y.double().sum(), "mask": y > 0, "count": (y > 0).sum(dim=1).to(torch.int32), "y": y}


def make() -> tuple[nn.Module, tuple[torch.Tensor, torch.Tensor]]:
    torch.manual_seed(0)
    return Scalars().eval(), (torch.randn(3, 6), torch.tensor(1.5))
