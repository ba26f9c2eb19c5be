"""A small CNN that learned something: trained at load time, in seconds, on the first 1,000 of
scikit-learn's digits (tests/models/digits.py), its weights kept in a cache file named for this
source and digits.py so that every later load (each export, the eager runner) reads them."""

import hashlib
import importlib.util
import os
import tempfile
from pathlib import Path

import torch
from torch import nn

HERE = Path(__file__).resolve().parent


def _digits():
    spec = importlib.util.spec_from_file_location("deploytui_test_digits", HERE / "digits.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class DigitsCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def _train(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> None:
    torch.manual_seed(0)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(30):
        order = torch.randperm(len(y))
        for i in range(0, len(y), 50):
            idx = order[i : i + 50]
            opt.zero_grad()
            nn.functional.cross_entropy(model(x[idx]), y[idx]).backward()
            opt.step()


def _cache() -> Path:
    h = hashlib.sha256()
    for name in ("digits_cnn.py", "digits.py"):
        h.update((HERE / name).read_bytes())
    return Path(tempfile.gettempdir()) / f"deploytui-digits-cnn-{h.hexdigest()[:16]}.pt"


def make():
    with torch.inference_mode(False):  # it may train: whatever mode its caller is in
        return _make()


def _make():
    digits = _digits()
    x, y, _, _ = digits.split()
    torch.manual_seed(0)
    model = DigitsCNN()
    cache = _cache()
    try:
        model.load_state_dict(torch.load(cache, weights_only=True))
    except Exception:  # not trained yet here (or a damaged cache): train, keep it
        with torch.enable_grad():
            model.train()
            _train(model, x, y)
        tmp = cache.with_name(f"{cache.name}.{os.getpid()}")
        torch.save(model.state_dict(), tmp)
        os.replace(tmp, cache)
    return model.eval(), (x[: digits.BATCH],)
