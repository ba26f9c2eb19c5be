import torch
from torch import nn


class Branchy(nn.Module):
    """Takes a branch on a value computed from the input: torch.export refuses it."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc(x)
        if y.sum() > 0:
            return y * 2
        return y - 1


def make():
    torch.manual_seed(3)
    return Branchy().eval(), (torch.randn(2, 4),)
