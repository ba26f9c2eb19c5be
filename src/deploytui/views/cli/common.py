"""What several commands share: the model and place options, the count check, the build's
progress lines."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from deploytui.core.record import RunRecord


class CommandParser(argparse.ArgumentParser):
    """A command's parser (`add_subparsers(parser_class=CommandParser)`). `options`, when given,
    adds the options that need a costly import, once, when the command is parsed or its help
    asked: every other command, and the app, go without that import."""

    def __init__(
        self, *args: Any, options: Callable[[argparse.ArgumentParser], None] | None = None, **kw: Any
    ):
        super().__init__(*args, **kw)
        self._options = options

    def complete(self) -> None:
        """Add the deferred options now (once); what reads the parser's options calls it."""
        if self._options is not None:
            options, self._options = self._options, None
            options(self)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self.complete()
        return super().parse_known_args(args, namespace)


MODEL_HELP = (
    "the model: a zoo name (a1, mlp:hidden=512,depth=4, convnet, tinylm), "
    "package.module:factory, path/to/file.py:factory, torchvision:NAME, timm:NAME, "
    "hf:FOLDER (a saved Hugging Face model) or hf-config:CONFIG.json (default a1)"
)


DATA_HELP = (
    "your samples, to judge every form on (and, with labels, score by the task's top-1) and to "
    "calibrate the int8 variants on: path/to/file.py:samples, package.module:samples, or a folder "
    "of .safetensors/.npz/.pt files with an optional labels.json, or a folder of images in class "
    "sub-folders; options ,calibration=N ,seed=S ,transform=file.py:fn (images: a PIL image -> "
    "its tensor, where the model's library gives no transform) (docs/data.md)"
)


def data_opt(q: argparse.ArgumentParser, default: Any) -> None:
    q.add_argument("--data", default=default, metavar="SPEC", help=DATA_HELP)


def shape_opts(q: argparse.ArgumentParser, default: Any) -> None:
    q.add_argument(
        "--input-shape",
        default=default,
        metavar="AxBxC",
        help="torchvision:, timm: and image models: the example input's shape (default: the model's own)",
    )
    q.add_argument(
        "--seq-len",
        type=int,
        default=default,
        metavar="N",
        help="hf: and hf-config: text models: the example token ids' length (default 16)",
    )


def model_opts(q: argparse.ArgumentParser) -> None:
    """A command's --model with its --input-shape/--seq-len and --artifacts/--bundles: the same
    options as before the command, given after it (SUPPRESS: the top level's value stands)."""
    q.add_argument("--model", default=argparse.SUPPRESS, metavar="REF", help=MODEL_HELP)
    shape_opts(q, argparse.SUPPRESS)
    place_opts(q, argparse.SUPPRESS)


def place_opts(q: argparse.ArgumentParser, default: Any) -> None:
    """--artifacts and --bundles: where the models' files and their bundles go (read into the
    Workspace once, in `main`)."""
    q.add_argument(
        "--artifacts",
        type=Path,
        default=default,
        metavar="DIR",
        help="the artifacts folder (default: $DEPLOYTUI_ARTIFACTS, else artifacts/ in the source "
        "checkout, else $XDG_DATA_HOME/deploytui/artifacts)",
    )
    q.add_argument(
        "--bundles",
        type=Path,
        default=default,
        metavar="DIR",
        help="where `ship` puts bundles (default: $DEPLOYTUI_BUNDLES, else bundles/ beside the default "
        "artifacts folder)",
    )


def check_counts(args: argparse.Namespace) -> str:
    if args.n < 1 or args.warmup < 0 or args.timeout <= 0:
        return "need -n >= 1, --warmup >= 0, --timeout > 0"
    return ""


def build_progress(verbose: bool, quiet_up_to_date: bool = False, out: TextIO | None = None) -> Any:
    """The build's progress lines, as `build` prints them; with `quiet_up_to_date` a step that
    is up to date prints nothing (its start line waits until the step does something)."""
    from deploytui.builder import BuildEvent
    from deploytui.core.units import duration

    pending: dict[str, str] = {}  # per step: its start line, until it does something

    def say(step: str, text: str) -> None:
        for line in [pending.pop(step, None), text]:
            if line is not None:
                print(line, flush=True, file=out or sys.stdout)

    def show(e: BuildEvent) -> None:
        if e.kind == "start":
            start = f"[{e.index}/{e.total}] {e.step}: {e.title}"
            if quiet_up_to_date:
                pending[e.step] = start
            else:
                say(e.step, start)
        elif e.kind == "line" and (verbose or _is_progress(e.text)):
            say(e.step, f"    {e.text}" if verbose else f"    {e.text[:150]}")
        elif e.kind == "end" and not (quiet_up_to_date and e.status == "up-to-date"):
            extra = f" — {e.text}" if e.text else ""  # steps run side by side: the end names its step
            say(e.step, f"    {e.step}: {e.status} ({duration(e.wall_s)}){extra}")
        elif e.kind == "end":
            pending.pop(e.step, None)

    return show


def _is_progress(line: str) -> bool:
    """Lines worth showing without --verbose: why a step runs or waits, cargo's progress and
    warnings."""
    s = line.strip()
    return s.startswith(
        (
            "stale:",
            "waiting:",
            "Compiling",
            "Finished",
            "warning:",
            "error",
            "[torch.onnx]",
            "Building",
            "samples:",
        )
    )


def failing(records: list[RunRecord]) -> bool:
    """A command that measured these exits 1: a form failed, or missed its tolerance or budget."""
    from deploytui.core.record import RunStatus
    from deploytui.scenarios.startup import bench

    return any(
        r.status not in (RunStatus.OK, RunStatus.NOT_APPLICABLE)
        or (r.status == RunStatus.OK and not bench.judged_ok(r))
        for r in records
    )
