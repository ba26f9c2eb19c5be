"""scikit-learn's handwritten digits (1,797 labelled 8x8 images shipped inside the wheel), split
once with a fixed seed: the images digits_cnn.py trains on, and the held-out ones `samples` yields
for `--data` (batches of BATCH images in the model's call shape, each with its labels)."""

import torch

BATCH = 32  # images per sample: the model's example input holds as many
TRAIN = 1000  # images the model learns from; the other 797 are held out


def split() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(train images, train labels, held-out images, held-out labels): images [N, 1, 8, 8] in
    0..1, labels int64 [N], the order a fixed permutation."""
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.tensor(d.images, dtype=torch.float32).unsqueeze(1) / 16.0
    y = torch.tensor(d.target, dtype=torch.int64)
    order = torch.randperm(len(y), generator=torch.Generator().manual_seed(0))
    x, y = x[order], y[order]
    return x[:TRAIN], y[:TRAIN], x[TRAIN:], y[TRAIN:]


def samples():
    """The held-out digits, BATCH at a time (the last partial batch left out: the exports have a
    fixed shape), each `{"args": (images,), "label": labels}`."""
    _, _, x, y = split()
    for i in range(0, len(y) - BATCH + 1, BATCH):
        yield {"args": (x[i : i + BATCH],), "label": y[i : i + BATCH]}
