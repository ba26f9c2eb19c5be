"""What the readers of `--data` (models/data.py, models/images.py) hand on: a sample as the
model's flat named inputs with its label, the count of what a folder could not give, and the
one error every refusal of the data is (one line naming the sample)."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from deploytui.models.load import INPUT_DTYPES


class DataError(ValueError):
    """The data cannot be used: one line for the user, naming the sample."""


@dataclass
class Sample:
    name: str  # "sample 3" (a factory's) or the file's name (a folder's)
    inputs: dict[str, torch.Tensor]  # the model's flat inputs by name, in its order
    label: torch.Tensor | None = None


@dataclass
class Skipped:
    """A folder's files that could not be read: how many, and the first one with why; and the
    images of an image folder's last partial batch, left out (`dropped`)."""

    count: int = 0
    first: str = ""
    dropped: int = 0

    def add(self, name: str, e: BaseException) -> None:
        self.count += 1
        self.first = self.first or f"{name}: {type(e).__name__}: {first_line(e)}"


def shown(t: torch.Tensor) -> str:
    return f"{INPUT_DTYPES.get(t.dtype, str(t.dtype).removeprefix('torch.'))}{list(t.shape)}"


def first_line(e: BaseException) -> str:
    """An exception's first line of text, at most 200 characters: what a refusal quotes."""
    return (str(e).strip().splitlines() or [""])[0][:200]
