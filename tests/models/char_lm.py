"""A small causal character model that learned something: trained when first loaded (seconds;
its weights cached in the temporary folder, named for the sources) on standard-library source
text (tests/models/text.py). Causal convolutions over embeddings: logits [batch, positions,
vocabulary], the next character at each position, for the task's top-1 and perplexity."""

import hashlib
import importlib.util
import os
import tempfile
from pathlib import Path

import torch
from torch import nn

HERE = Path(__file__).resolve().parent


def _text():
    spec = importlib.util.spec_from_file_location("deploytui_test_text", HERE / "text.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class CharLM(nn.Module):
    def __init__(self, vocab: int, width: int = 64, context: int = 6) -> None:
        super().__init__()
        self.context = context
        self.embed = nn.Embedding(vocab, width)
        self.mix = nn.Conv1d(width, width, context)
        self.out = nn.Conv1d(width, vocab, 1)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = self.embed(ids).transpose(1, 2)  # [batch, width, positions]
        h = torch.relu(self.mix(nn.functional.pad(h, (self.context - 1, 0))))  # sees only the past
        return self.out(h).transpose(1, 2)  # [batch, positions, vocabulary]


def _cache() -> Path:
    h = hashlib.sha256()
    for name in ("char_lm.py", "text.py"):
        h.update((HERE / name).read_bytes())
    return Path(tempfile.gettempdir()) / f"deploytui-char-lm-{h.hexdigest()[:16]}.pt"


def make():
    with torch.inference_mode(False):  # it may train: whatever mode its caller is in
        return _make()


def _make():
    text = _text()
    train, _ = text.split()
    torch.manual_seed(0)
    model = CharLM(text.VOCAB)
    cache = _cache()
    try:
        model.load_state_dict(torch.load(cache, weights_only=True))
    except Exception:  # not trained yet here (or a damaged cache): train, keep it
        g = torch.Generator().manual_seed(0)
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        with torch.enable_grad():
            model.train()
            for _ in range(400):
                x, y = text.windows(train, 32, g)
                opt.zero_grad()
                loss = nn.functional.cross_entropy(model(x).reshape(-1, text.VOCAB), y.reshape(-1))
                loss.backward()
                opt.step()
        tmp = cache.with_name(f"{cache.name}.{os.getpid()}")
        torch.save(model.state_dict(), tmp)
        os.replace(tmp, cache)
    x, _ = text.windows(train, text.BATCH)
    return model.eval(), (x,)
