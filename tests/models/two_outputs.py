import torch
from torch import nn


class TwoHeads(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.trunk = nn.Linear(6, 5)
        self.a = nn.Linear(5, 2)
        self.b = nn.Linear(5, 3)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = torch.relu(self.trunk(x))
        return self.a(h), self.b(h)


def make():
    torch.manual_seed(1)
    return TwoHeads().eval(), (torch.randn(2, 6),)
