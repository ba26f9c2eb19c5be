"""The task's own metric on labelled data: top-1 accuracy of class scores (and perplexity for
next-token logits: scores over positions), for a form and for eager on the same rows, with the
difference and its confidence interval for the number of rows.

A row is one labelled prediction: an image of a batch, a token position of a sequence (labels of
IGNORE_INDEX are left out). The intervals, at CONFIDENCE: Wilson's score interval for a form's own
accuracy, and for the drop (eager's accuracy minus the form's, the same rows) the normal interval
of the paired per-row differences, whose spread comes only from the rows where the two disagree.
So 0.3 % on 200 rows reads as the noise it is.

Pure Python over flat values (tensorfile's), standard library only: the app imports this.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist

CONFIDENCE = 0.95
IGNORE_INDEX = -100  # a row left out (Hugging Face's convention for padding)
TOP1 = "top1"


def _z(confidence: float = CONFIDENCE) -> float:
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson(k: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Wilson's score interval of a proportion k/n ((0, 1) when n is 0)."""
    if n <= 0:
        return 0.0, 1.0
    z, p = _z(confidence), k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def paired_difference(
    a: list[bool], b: list[bool], confidence: float = CONFIDENCE
) -> tuple[float, float, float]:
    """(mean of a − b, low, high): the difference of two accuracies on the same rows, with the
    normal interval of the per-row differences (each −1, 0 or 1)."""
    n = len(a)
    if n == 0:
        return 0.0, -1.0, 1.0
    d = [int(x) - int(y) for x, y in zip(a, b, strict=True)]
    mean = sum(d) / n
    var = sum((v - mean) ** 2 for v in d) / (n - 1) if n > 1 else 0.0
    half = _z(confidence) * math.sqrt(var / n)
    return mean, max(-1.0, mean - half), min(1.0, mean + half)


def _argmax(values: list[float]) -> int:
    return max(range(len(values)), key=lambda i: values[i] if not math.isnan(values[i]) else -math.inf)


def _nll(row: list[float], label: int) -> float:
    top = max(row)
    if math.isinf(top) or math.isnan(top):
        return math.inf
    return math.log(sum(math.exp(v - top) for v in row)) + top - row[label]


@dataclass
class TaskTally:
    """One labelled output, a form's scores and eager's on the same rows, sample by sample."""

    output: str
    classes: int
    next_token: bool = False  # [batch, positions, vocabulary] logits: perplexity too
    form_right: list[bool] = field(default_factory=list)
    eager_right: list[bool] = field(default_factory=list)
    agree: int = 0
    form_nll: float = 0.0
    eager_nll: float = 0.0

    def add(self, got: list[float], want: list[float], labels: list[int]) -> None:
        c = self.classes
        if len(got) != len(labels) * c or len(want) != len(got):
            raise ValueError(f"{self.output}: {len(got)} scores for {len(labels)} labels of {c} classes")
        for r, label in enumerate(labels):
            if label == IGNORE_INDEX:
                continue
            g, w = got[r * c : (r + 1) * c], want[r * c : (r + 1) * c]
            gi, wi = _argmax(g), _argmax(w)
            self.form_right.append(gi == label)
            self.eager_right.append(wi == label)
            self.agree += gi == wi
            if self.next_token:
                self.form_nll += _nll(g, label)
                self.eager_nll += _nll(w, label)

    @property
    def rows(self) -> int:
        return len(self.form_right)

    def accuracy(self) -> tuple[float, float]:
        """(the form's top-1, eager's)."""
        n = self.rows or 1
        return sum(self.form_right) / n, sum(self.eager_right) / n

    def drop(self) -> tuple[float, float, float]:
        """Eager's top-1 minus the form's, and its interval."""
        return paired_difference(self.eager_right, self.form_right)

    def perplexity(self) -> tuple[float, float] | None:
        """(the form's, eager's) for next-token logits, else None."""
        if not self.next_token or not self.rows:
            return None
        return math.exp(min(self.form_nll / self.rows, 700.0)), math.exp(
            min(self.eager_nll / self.rows, 700.0)
        )
