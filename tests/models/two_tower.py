"""A two-tower recommender as such models are written: `forward(batch)` takes a dict of tensors
(user and item ids, the user's dense features) and returns a dict (the score, both embeddings);
`with_kwargs` also passes a keyword tensor beside the dict (a temperature)."""

import torch
from torch import nn


class TwoTower(nn.Module):
    def __init__(self, users: int = 100, items: int = 200, features: int = 4, dim: int = 16) -> None:
        super().__init__()
        self.user_embed = nn.Embedding(users, dim)
        self.item_embed = nn.Embedding(items, dim)
        self.user_tower = nn.Sequential(nn.Linear(dim + features, 32), nn.ReLU(), nn.Linear(32, dim))
        self.item_tower = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, dim))

    def forward(
        self, batch: dict[str, torch.Tensor], temperature: torch.Tensor | None = None
    ) -> dict[str, torch.Tensor]:
        user = torch.cat([self.user_embed(batch["user_ids"]), batch["user_features"]], dim=-1)
        u = self.user_tower(user)
        i = self.item_tower(self.item_embed(batch["item_ids"]))
        score = (u * i).sum(dim=-1)
        if temperature is not None:
            score = score / temperature
        return {"score": score, "user": u, "item": i}


def _batch(n: int = 4) -> dict[str, torch.Tensor]:
    return {
        "user_ids": torch.randint(0, 100, (n,)),
        "item_ids": torch.randint(0, 200, (n,)),
        "user_features": torch.randn(n, 4),
    }


def make():
    torch.manual_seed(5)
    return TwoTower().eval(), (_batch(),)


def with_kwargs():
    torch.manual_seed(5)
    return TwoTower().eval(), (_batch(),), {"temperature": torch.full((1,), 2.0)}
