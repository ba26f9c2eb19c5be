"""The model's sample sets, written by the export-samples step: the evaluation set every form is
judged on (accuracy/inputs_K.safetensors, eager's outputs on each in reference_K, the labels in
labels_K when the data has them, and accuracy/set.json: what the set is) and the calibration set
the int8 exports of several families calibrate on (`calibration_inputs`).

Without `--data` both are drawn like the example inputs with fixed seeds (SAMPLES and CALIBRATION
inputs). With `--data` (core/dataref.py, read by models/data.py) the user's samples are streamed
once and split, each by a seeded draw, into two disjoint parts: the calibration part (at most
`calibration` samples) and the evaluation part (the rest); the sizes, the seed and a fingerprint
of the data's bytes go into set.json and from there into every form's record.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from deploytui.judge.precision import CALIBRATION, SAMPLES, class_scores

PRELOAD = ("safetensors.torch",)  # what the build's fork server imports once for these exports

ACCURACY_DIR = "accuracy"  # inputs_K, reference_K, labels_K .safetensors and set.json
SET_FILE = "set.json"
CALIBRATION_FILE = "calibration.safetensors"  # K/NAME per sample
ACCURACY_SEED = 1000  # sample k of the drawn accuracy set is drawn from seed ACCURACY_SEED + k
CALIBRATION_SEED = 2000
BLOCK = 4  # one sample in every BLOCK goes to the calibration part, while it has room
LABELS_KEY = "labels"
IGNORE_INDEX = -100  # a label position left out of the metric (Hugging Face's convention)


def _drawn_like(t: Any, gen: Any) -> Any:
    """A tensor drawn like `t`: floats from a normal with its mean and spread, integers (token
    ids) uniformly over its range; a constant tensor (an all-ones mask, a scale), a single value
    or booleans as they are."""
    import torch

    if t.dtype == torch.bool or t.numel() < 2:
        return t.clone()
    if t.dtype.is_floating_point:
        mean, std = float(t.mean()), float(t.std())
        if not std > 0:  # a constant (a scale, a mask): as it is
            return t.clone()
        noise = torch.randn(t.shape, generator=gen, dtype=torch.float32).to(t.dtype)
        return noise * std + mean
    lo, hi = int(t.min()), int(t.max())
    if lo == hi:
        return t.clone()
    return torch.randint(lo, hi + 1, t.shape, generator=gen, dtype=t.dtype)


def draw_samples(m: Any, seed: int, count: int) -> list[dict[str, Any]]:
    """`count` input sets drawn like the model's example inputs, sample k from seed `seed + k`."""
    import torch

    out = []
    for k in range(count):
        gen = torch.Generator().manual_seed(seed + k)
        out.append({name: _drawn_like(t, gen) for name, t in m.inputs.items()})
    return out


class Split:
    """Which samples calibrate: one of every BLOCK consecutive samples, its place in the block
    drawn with the seed, until the calibration part holds `calibration`; the rest are evaluated.
    The parts are disjoint, the data is read once, and the same seed splits the same data alike."""

    def __init__(self, calibration: int, seed: int) -> None:
        self.rng, self.room, self.pick = random.Random(seed), calibration, -1

    def calibrates(self, k: int) -> bool:
        if k % BLOCK == 0:
            self.pick = k + self.rng.randrange(BLOCK)
        if k == self.pick and self.room > 0:
            self.room -= 1
            return True
        return False


def labelled_output(outputs: dict[str, Any], label: Any, name: str) -> str:
    """The output a label scores: class scores whose shape without the classes is the label's."""
    fits = [n for n, y in outputs.items() if math.prod(y.shape[:-1]) == label.numel() and y.shape[-1] >= 2]
    exact = [n for n in fits if list(outputs[n].shape[:-1]) == list(label.shape)] or fits
    best = [n for n in exact if class_scores(n, list(outputs[n].shape))] or exact
    if not best:
        shapes = ", ".join(f"{n} {list(y.shape)}" for n, y in outputs.items())
        raise _data_error(
            f"{name}: its labels have shape {list(label.shape)}, and no output is class scores over "
            f"that shape ({shapes})"
        )
    return best[0]


def _data_error(message: str) -> Exception:
    from deploytui.models.data_types import DataError

    return DataError(message)


class _Writer:
    """The evaluation part, written sample by sample (inputs, eager's outputs, labels)."""

    def __init__(self, m: Any, folder: Path) -> None:

        self.m, self.folder, self.count = m, folder, 0
        self.order = m.inputs_metadata()  # the names in call order (and a nested call's structure)
        self.output: str | None = None  # the output the labels score
        self.labelled: bool | None = None

    def add(self, name: str, inputs: dict[str, Any], label: Any) -> None:
        import torch
        from safetensors.torch import save_file

        from deploytui.judge.numerics import OUTPUTS_KEY
        from deploytui.models.load import output_tensors

        args, kwargs = self.m.call(inputs.values())
        try:
            with torch.inference_mode():
                y = output_tensors(self.m.module(*args, **kwargs))
        except Exception as e:  # the model refuses this sample's values
            raise _data_error(
                f"{name}: the model raised {type(e).__name__}: {str(e).splitlines()[0][:200]}"
            ) from None
        if self.labelled is None:
            self.labelled = label is not None
        elif self.labelled != (label is not None):
            has, before = ("has a label", "do not") if label is not None else ("has no label", "do")
            raise _data_error(f"{name}: {has}, the samples before it {before}")
        if label is not None:
            self.output = self.output or labelled_output(y, label, name)
            scores = y[self.output]
            if label.numel() == math.prod(scores.shape[:-1]):  # a batch of one's label: 3 for [1, 10]
                label = label.reshape(scores.shape[:-1])
            if list(scores.shape[:-1]) != list(label.shape):
                shapes = f"{list(label.shape)}, {self.output} is {list(scores.shape)}"
                raise _data_error(f"{name}: its labels have shape {shapes}")
            bad = label[(label != IGNORE_INDEX) & ((label < 0) | (label >= scores.shape[-1]))]
            if bad.numel():
                raise _data_error(
                    f"{name}: label {int(bad[0])} is outside the {scores.shape[-1]} classes of {self.output}"
                )
        k = self.count
        save_file(inputs, str(self.folder / f"inputs_{k}.safetensors"), metadata=self.order)
        save_file(
            {n: t.contiguous() for n, t in y.items()},
            str(self.folder / f"reference_{k}.safetensors"),
            metadata={OUTPUTS_KEY: json.dumps(list(y))},
        )
        if label is not None:
            save_file({LABELS_KEY: label.contiguous()}, str(self.folder / f"labels_{k}.safetensors"))
        self.count += 1


class Progress:
    """A line on stderr (the step's log; the CLI shows lines starting `samples:`) while a long
    set is read: the first after `first_s`, then one every `every_s`, and the total at the end
    when any was shown. Cheap: a clock read per sample."""

    def __init__(
        self, first_s: float = 2.0, every_s: float = 5.0, now: Callable[[], float] = time.monotonic
    ) -> None:
        self.now, self.every_s = now, every_s
        self.next, self.shown = now() + first_s, False

    def line(self, text: str) -> None:
        print(f"samples: {text}", file=sys.stderr, flush=True)

    def tick(self, seen: int, calibration: int, evaluation: int) -> None:
        if self.now() >= self.next:
            self.line(f"{seen} read ({calibration} calibrate, {evaluation} evaluate)")
            self.next, self.shown = self.now() + self.every_s, True

    def done(self, seen: int, calibration: int, evaluation: int) -> None:
        if self.shown:
            self.line(f"{seen} read, done ({calibration} calibrate, {evaluation} evaluate)")


def _digest(h: Any, part: str, inputs: dict[str, Any], label: Any) -> None:
    h.update(part.encode())
    for n, t in [*inputs.items(), *([(LABELS_KEY, label)] if label is not None else [])]:
        h.update(f"{n}{t.dtype}{list(t.shape)}".encode())
        h.update(t.contiguous().numpy().tobytes())


def _fresh(folder: Path) -> None:
    folder.mkdir(exist_ok=True)
    for p in folder.glob("*.safetensors"):
        p.unlink()


def export_samples(
    m: Any, out: Path, stem: str, data: Any = None, progress: Progress | None = None
) -> dict[str, Any]:
    """The evaluation set and the calibration set: drawn like the example inputs, or the user's
    data (`data`, a DataRef) split in two, `progress` told as it is read. Its facts: what
    set.json says."""
    from safetensors.torch import save_file

    folder = out / ACCURACY_DIR
    _fresh(folder)
    writer = _Writer(m, folder)
    calibration: list[dict[str, Any]] = []
    h = hashlib.sha256()
    if data is None:
        for k, inputs in enumerate(draw_samples(m, ACCURACY_SEED, SAMPLES)):
            writer.add(f"sample {k}", inputs, None)
        calibration = draw_samples(m, CALIBRATION_SEED, CALIBRATION)
        facts: dict[str, Any] = {"data": None, "seed": ACCURACY_SEED, "calibration_seed": CALIBRATION_SEED}
    else:
        from deploytui.models.data import samples
        from deploytui.models.data_types import DataError, Skipped

        skipped, split, seen = Skipped(), Split(data.calibration, data.seed), 0
        progress = progress or Progress()
        last: Any = None  # the last calibration sample: evaluated instead when it would be the only one
        for s in samples(data, m, skipped):
            if split.calibrates(seen):
                calibration.append(s.inputs)
                last = s
            else:
                writer.add(s.name, s.inputs, s.label)
                _digest(h, "e", s.inputs, s.label)
            seen += 1
            progress.tick(seen, len(calibration), writer.count)
        progress.done(seen, len(calibration), writer.count)
        if not seen:
            gone = (
                f" ({skipped.count} unreadable file(s) skipped, first {skipped.first})"
                if skipped.count
                else ""
            )
            raise DataError(f"--data {data.text} holds no samples{gone}")
        if not writer.count and last is not None:  # too few to split: the one sample is evaluated
            calibration.pop()
            writer.add(last.name, last.inputs, last.label)
            _digest(h, "e", last.inputs, last.label)
        for c in calibration:
            _digest(h, "c", c, None)
        facts = {
            "data": data.text,
            "seed": data.seed,
            "skipped": skipped.count,
            "skipped_first": skipped.first or None,
            "dropped": skipped.dropped,
        }
    order = {**m.inputs_metadata(), "source": "data" if data is not None else "drawn"}
    save_file(
        {f"{k}/{name}": t for k, s in enumerate(calibration) for name, t in s.items()},
        str(out / CALIBRATION_FILE),
        metadata=order,
    )
    facts |= {
        "fingerprint": h.hexdigest()[:16] if data is not None else None,
        "calibration_samples": len(calibration),
        "evaluation_samples": writer.count,
        "labels": bool(writer.labelled),
        "labelled_output": writer.output,
    }
    (folder / SET_FILE).write_text(json.dumps(facts, indent=1) + "\n")
    return facts


def calibration_inputs(m: Any, out: Path) -> list[tuple[Any, ...]]:
    """The calibration set, each as the flat call-order tuple (`m.call` makes a call of one): the
    user's calibration part, or the example inputs and the drawn set."""
    from safetensors import safe_open
    from safetensors.torch import load_file

    with safe_open(str(out / CALIBRATION_FILE), framework="pt") as f:
        source = (f.metadata() or {}).get("source", "drawn")
    stored = load_file(str(out / CALIBRATION_FILE))
    count = len({k.split("/", 1)[0] for k in stored})
    sets = [tuple(m.inputs.values())] if source != "data" or not count else []
    sets += [tuple(stored[f"{k}/{name}"] for name in m.inputs) for k in range(count)]
    return sets
