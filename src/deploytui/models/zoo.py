"""The zoo shipped with the tool: factories returning (eval-mode module, example inputs).

Weights come from a fixed seed (or, for a1, the closed formula): nothing is downloaded.
Imports torch: build and runner subprocesses only.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from deploytui.models.a1_module import a1_input, a1_model

SEED = 0


def _seeded(build: Callable[[], nn.Module]) -> nn.Module:
    """Build a module under a fixed seed without touching the caller's RNG state."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return build().eval()


def a1() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    return a1_model(), (a1_input(),)


class Mlp(nn.Sequential):
    """fc1, relu1, .., fc{depth+1}: Linear layers with ReLU between (a1's layout when depth=1).

    A Sequential, so TorchScript's `script` compiles it (a forward that looks its layers up by
    name with getattr does not); ReLU has no parameters, so the state_dict is fc1 .. fc{depth+1}
    as the burn Mlp twin reads it."""

    def __init__(self, d_in: int, hidden: int, depth: int, d_out: int) -> None:
        sizes = [d_in, *([hidden] * depth), d_out]
        layers: list[tuple[str, nn.Module]] = []
        for i, (a, b) in enumerate(itertools.pairwise(sizes), 1):
            layers += [(f"relu{i - 1}", nn.ReLU())] if i > 1 else []
            layers.append((f"fc{i}", nn.Linear(a, b)))
        super().__init__(OrderedDict(layers))


def mlp(
    d_in: int = 64, hidden: int = 256, depth: int = 2, d_out: int = 10, batch: int = 8
) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    if min(d_in, hidden, depth, d_out, batch) < 1:
        raise ValueError("mlp sizes must all be >= 1")
    model = _seeded(lambda: Mlp(d_in, hidden, depth, d_out))
    x = torch.randn(batch, d_in, generator=torch.Generator().manual_seed(SEED))
    return model, (x,)


class ConvNet(nn.Module):
    """Conv-BN-ReLU, MaxPool, a residual Conv-BN-ReLU block, global average pool, Linear."""

    def __init__(self, channels: int = 16, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, channels, 3, padding=1), nn.BatchNorm2d(channels), nn.ReLU(), nn.MaxPool2d(2)
        )
        self.block = nn.Sequential(
            nn.Conv2d(channels, channels, 3, padding=1), nn.BatchNorm2d(channels), nn.ReLU()
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(channels, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stem(x)
        x = x + self.block(x)
        return self.head(torch.flatten(self.pool(x), 1))


def _randomise_batchnorm(model: nn.Module) -> None:
    """Give BatchNorm non-trivial running statistics, so eval-mode BN is really exercised."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            with torch.no_grad():
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)


def convnet(channels: int = 16, classes: int = 10) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    def build() -> nn.Module:
        model = ConvNet(channels, classes)
        _randomise_batchnorm(model)
        return model

    model = _seeded(build)
    x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(SEED))
    return model, (x,)


class TinyLM(nn.Module):
    """Embedding over token ids, TransformerEncoderLayers (no dropout), a Linear head to the vocab."""

    def __init__(self, vocab: int, dim: int, heads: int, ff: int, layers: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, ff, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(self.embed(tokens)))


def tinylm(
    vocab: int = 1000, dim: int = 64, heads: int = 4, ff: int = 128, layers: int = 2, seq: int = 16
) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    model = _seeded(lambda: TinyLM(vocab, dim, heads, ff, layers))
    tokens = torch.randint(0, vocab, (1, seq), generator=torch.Generator().manual_seed(SEED))
    return model, (tokens,)


FACTORIES: dict[str, Callable[..., Any]] = {"a1": a1, "mlp": mlp, "convnet": convnet, "tinylm": tinylm}
