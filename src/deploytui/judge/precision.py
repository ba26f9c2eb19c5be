"""The precision axis: what a lower-precision variant of a form (int8) is judged by.

A variant is not expected to be bit-close to eager, so the fp32 tolerance check does not judge
it; its `Budget` does, on accuracy figures measured over the example inputs plus a fixed-seed
set drawn like them (`deploytui.scenarios.accuracy.accuracy` runs the variant on them): per
output the largest and
mean absolute error, the cosine similarity with eager's output (the worst sample) and, for an
output that looks like class scores, how often its top-1 agrees with eager's.

Pure Python over flat values (tensorfile's), standard library only: the app imports this.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from deploytui.judge.numerics import element_diff

FP32 = "fp32"
INT8 = "int8"
SAMPLES = 8  # fixed-seed inputs drawn like the example ones, besides them (accuracy set)
CALIBRATION = 8  # fixed-seed inputs of the calibration set (other seeds), besides the examples


@dataclass(frozen=True)
class Budget:
    """A variant's declared accuracy budget: every output's worst-sample cosine similarity with
    eager at least `min_cosine`, and every class-score output's top-1 agreement with eager at
    least `min_top1`."""

    min_cosine: float = 0.99
    min_top1: float = 0.8

    def says(self) -> str:
        return f"cosine ≥ {self.min_cosine:g}, top-1 agreement ≥ {self.min_top1:.0%}"


INT8_BUDGET = Budget()


NOT_SCORES = ("hidden", "pooler", "embed", "feature", "state")  # [batch, n] outputs that are not


def class_scores(name: str, shape: list[int]) -> bool:
    """An output that looks like class scores: a `logits` output with the classes last (a
    language model's [batch, positions, vocabulary] too), or [batch, classes] unless its name
    says it is a representation (BERT's `pooler_output`, a `last_hidden_state`)."""
    lower = name.lower()
    if len(shape) < 2 or shape[-1] < 2:
        return False
    return "logits" in lower or (len(shape) == 2 and not any(w in lower for w in NOT_SCORES))


def cosine(got: list[float], want: list[float]) -> float:
    """Cosine similarity of two flat outputs over the elements that are not NaN in both (eager's
    NaN is the answer there, as in numerics.element_diff): 1 when both are all zeros, NaN where
    one holds a NaN or an infinity the other does not."""
    pairs = [(g, w) for g, w in zip(got, want, strict=True) if not (math.isnan(g) and math.isnan(w))]
    dot = sum(g * w for g, w in pairs)
    ng = math.sqrt(sum(g * g for g, _ in pairs))
    nw = math.sqrt(sum(w * w for _, w in pairs))
    if ng == 0 and nw == 0:
        return 1.0
    if ng == 0 or nw == 0:
        return 0.0
    return dot / (ng * nw)


def _argmax(values: list[float]) -> int:
    return max(range(len(values)), key=lambda i: values[i] if not math.isnan(values[i]) else -math.inf)


def top1_matches(got: list[float], want: list[float], classes: int) -> tuple[int, int]:
    """(rows whose top-1 class agrees, rows): rows of `classes` values each."""
    rows = len(want) // classes if classes else 0
    same = sum(
        _argmax(got[r * classes : (r + 1) * classes]) == _argmax(want[r * classes : (r + 1) * classes])
        for r in range(rows)
    )
    return same, rows


@dataclass
class OutputTally:
    """One output's accuracy figures, accumulated sample by sample."""

    name: str
    shape: list[int]
    samples: int = 0
    n: int = 0
    abs_sum: float = 0.0
    max_abs: float = 0.0
    min_cosine: float = 1.0
    top1_same: int = 0
    top1_rows: int = 0

    def add(self, got: list[float], want: list[float]) -> None:
        diffs = [element_diff(g, w) for g, w in zip(got, want, strict=True)]
        self.samples += 1
        self.n += len(diffs)
        self.abs_sum += sum(diffs)
        self.max_abs = max(self.max_abs, *diffs) if diffs else self.max_abs
        c = cosine(got, want)
        self.min_cosine = c if math.isnan(c) else min(self.min_cosine, c)
        if class_scores(self.name, self.shape):
            same, rows = top1_matches(got, want, self.shape[-1])
            self.top1_same += same
            self.top1_rows += rows

    @property
    def mean_abs(self) -> float:
        return self.abs_sum / self.n if self.n else 0.0

    @property
    def top1(self) -> float | None:
        return self.top1_same / self.top1_rows if self.top1_rows else None

    def breaks(self, budget: Budget) -> str:
        """ "" when within the budget, else how it is not."""
        if math.isinf(self.max_abs):
            return f"{self.name}: NaN or infinity where eager's output is finite, or the reverse"
        if not self.min_cosine >= budget.min_cosine:
            return f"{self.name}: cosine {self.min_cosine:.4f} < {budget.min_cosine:g}"
        top1 = self.top1
        if top1 is not None and top1 < budget.min_top1:
            return f"{self.name}: top-1 agreement {top1:.0%} < {budget.min_top1:.0%}"
        return ""
