"""The A1 MLP as a torch module. Imports torch: only build and runner subprocesses use it."""

from __future__ import annotations

import torch
from torch import nn

from deploytui.models import a1


class Mlp(nn.Module):
    """fc1 Linear 4->8, ReLU, fc2 Linear 8->3 (the reference page's main-line MLP)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(a1.D_IN, a1.D_HIDDEN)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(a1.D_HIDDEN, a1.D_OUT)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


def a1_model() -> Mlp:
    """The model in eval mode with the closed-form weights (no RNG)."""
    model = Mlp()
    with torch.no_grad():
        for name, value in a1.weights().items():
            model.get_parameter(name).copy_(torch.tensor(value, dtype=torch.float32))
    return model.eval()


def a1_input() -> torch.Tensor:
    return torch.tensor(a1.input_values(), dtype=torch.float32)
