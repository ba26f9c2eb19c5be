"""Text that ships with Python: the source of a few standard-library modules, as character ids
(printable ASCII and the newline; anything else a space), split once: the first 80 % for
char_lm.py to learn from, the rest held out; `samples` yields the held-out text for `--data` as
batches of BATCH windows of SEQ characters, each labelled with the next character at every
position."""

import inspect

import torch

BATCH, SEQ = 8, 32
SAMPLES = 16  # batches `samples` yields: 4,096 held-out characters, enough for a figure, quick to run
MODULES = ("textwrap", "string", "shlex", "fnmatch", "glob")
VOCAB = 96  # id 0 the newline, 1..95 the printable ASCII characters 32..126


def ids() -> torch.Tensor:
    import importlib

    text = "\n".join(inspect.getsource(importlib.import_module(m)) for m in MODULES)
    codes = [0 if c == "\n" else ord(c) - 31 if 32 <= ord(c) <= 126 else 1 for c in text]
    return torch.tensor(codes, dtype=torch.int64)


def split() -> tuple[torch.Tensor, torch.Tensor]:
    t = ids()
    cut = int(len(t) * 0.8)
    return t[:cut], t[cut:]


def windows(t: torch.Tensor, count: int, generator: torch.Generator | None = None):
    """`count` windows of SEQ characters and their next characters, at random starts (or in order)."""
    if generator is None:
        starts = torch.arange(count) * SEQ
    else:
        starts = torch.randint(0, len(t) - SEQ - 1, (count,), generator=generator)
    x = torch.stack([t[s : s + SEQ] for s in starts.tolist()])
    y = torch.stack([t[s + 1 : s + SEQ + 1] for s in starts.tolist()])
    return x, y


def samples():
    """The held-out text in order, BATCH windows at a time: `{"args": (ids,), "label": next ids}`."""
    _, held = split()
    per = BATCH * SEQ
    for i in range(0, min(len(held) - per - 1, SAMPLES * per), per):
        x, y = windows(held[i:], BATCH)
        yield {"args": (x,), "label": y}
