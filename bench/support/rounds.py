"""Rounds for a bench that compares two sides, and its verdict: the sides take turns in
alternating order (ABBA…: drift and the one going first hit both alike), one ratio per round; the
verdict is the median ratio with its spread and the medians of the first and the second half of
the rounds. A verdict that flips between two runs is no verdict: it counts as stable when the
halves agree within the target. Noisy rounds need more of them, so `run` adds rounds (four at a
time, keeping the order balanced) while a verdict is not stable, up to a limit, as pyperf adds
runs."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any


def _a_first(r: int) -> bool:
    """Whether side A goes first in round r: A B, B A, B A, A B, … (ABBA)."""
    return r % 4 in (0, 3)


@dataclass(frozen=True)
class Verdict:
    ratio: float
    spread: tuple[float, float]
    halves: tuple[float, float]
    within: bool
    stable: bool
    rounds: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def line(self) -> str:
        return (
            f"ratio {self.ratio:.3f} (rounds {self.spread[0]:.3f}–{self.spread[1]:.3f}, "
            f"halves {self.halves[0]:.3f}/{self.halves[1]:.3f})"
        )


def verdict(ratios: list[float], target: float) -> Verdict:
    """Within: the median ratio is within ±target of 1; stable: the halves differ by at most target."""
    half = len(ratios) // 2
    first, second = statistics.median(ratios[:half]), statistics.median(ratios[half:])
    ratio = statistics.median(ratios)
    return Verdict(
        ratio=ratio,
        spread=(min(ratios), max(ratios)),
        halves=(first, second),
        within=abs(ratio - 1) <= target,
        stable=abs(first - second) <= target,
        rounds=len(ratios),
    )


def _more_rounds(done: int, least: int, most: int, verdicts: list[Verdict]) -> int:
    """How many rounds to run next: up to `least` first; then four more while a verdict is not
    stable and `most` allows; 0 when done."""
    if done < least:
        return least - done
    if all(v.stable for v in verdicts) or done + 4 > most:
        return 0
    return 4


class RoundFailed(Exception):
    """A round that gave no figures (a run failed): the rounds stop, and this says why."""


def run(
    one_round: Callable[[bool], dict[str, float]],
    least: int,
    most: int,
    judge: Callable[[str, list[float]], Verdict],
) -> tuple[dict[str, Verdict], dict[str, list[float]]]:
    """Rounds until done: `one_round(a_first)` runs one, side A first or not (ABBA), and gives
    each measure's ratio; `judge(measure, ratios)` its verdict. At least `least` rounds, then four
    more at a time while a verdict is not stable, up to `most`. The verdicts and every round's
    ratios; RoundFailed from a round stops them."""
    ratios: dict[str, list[float]] = {}
    verdicts: dict[str, Verdict] = {}
    done = 0
    while step := _more_rounds(done, least, most, list(verdicts.values())):
        for _ in range(step):
            for measure, r in one_round(_a_first(done)).items():
                ratios.setdefault(measure, []).append(r)
            done += 1
        verdicts = {m: judge(m, rs) for m, rs in ratios.items()}
    return verdicts, ratios
