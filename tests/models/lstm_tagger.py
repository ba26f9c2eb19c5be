import torch
from torch import nn


class Tagger(nn.Module):
    """A 2-layer bidirectional LSTM tagger over int64 token ids: embedding, LSTM, per-token logits."""

    def __init__(self, vocab: int = 100, dim: int = 16, hidden: int = 24, tags: int = 5) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, hidden, num_layers=2, bidirectional=True, batch_first=True)
        self.out = nn.Linear(2 * hidden, tags)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h, _ = self.lstm(self.embed(tokens))
        return self.out(h)


def make():
    torch.manual_seed(4)
    return Tagger().eval(), (torch.randint(0, 100, (1, 12)),)
