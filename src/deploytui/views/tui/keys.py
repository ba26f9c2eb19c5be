"""The app's keys (`BINDINGS`), and the palette's commands and the help screen's rows made from
them: a binding's `tooltip` is its one long text, "Title — what it does" ({runs} is the run
settings' words), so the footer, the palette and the help screen cannot drift apart."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from textual.actions import parse
from textual.binding import Binding, BindingType

SEP = " — "

# the one-letter actions that are off on a screen of fields (`TYPING`): a letter typed there
# while a checkbox or a list has the focus (the b of 20MiB, the s of 50ms) must not build or run
TYPED_OVER = frozenset(
    {
        "run",
        "run_all",
        "run_everywhere",
        "build",
        "compare",
        "scale",
        "choose",
        "open_model",
        "export",
        "ship",
        "cancel",
    }
)

# the app's keys (DeployApp.BINDINGS); each tooltip is "Title — what it does", the palette's and the
# help screen's text
BINDINGS: list[BindingType] = [
    Binding("r", "run", "Run", id="run", tooltip="Run highlighted form — measure it: {runs}"),
    Binding(
        "a",
        "run_all",
        "Run all",
        id="run-all",
        tooltip="Run all forms — measure every built form in order, storing each",
    ),
    Binding(
        "A",
        "run_everywhere",
        "Run on targets",
        id="run-everywhere",
        show=False,
        tooltip="Run all on every target — every built form on each target named, the targets at "
        "once, a line of progress per target",
    ),
    Binding("b", "build", "Build", id="build", tooltip="Build — every artifact, incrementally"),
    Binding("c", "compare", "Compare", id="compare", tooltip="Compare — every form side by side"),
    Binding("s", "scale", "Scale", id="scale", tooltip="Scale — every form's costs across the mlp sizes"),
    Binding(
        "v",
        "serve",
        "Serve",
        id="serve",
        tooltip="Serve — latency percentiles and throughput per batch size and thread count",
    ),
    Binding(
        "o",
        "choose",
        "Choose",
        id="choose",
        tooltip="Choose — the forms that meet your constraints, ranked, and why the others do not",
    ),
    Binding(
        "m",
        "open_model",
        "Model",
        id="model",
        tooltip="Open a model — the zoo, the models built here, or your own file.py:factory",
    ),
    Binding(
        "t",
        "pick_target",
        "Target",
        id="target",
        tooltip="Target — show and measure on this machine or a target named by deploytui target add",
    ),
    Binding(
        "e",
        "export",
        "Export report",
        id="export",
        tooltip="Export report — write the Markdown report from the stored results",
    ),
    Binding(
        "i",
        "ship",
        "Ship check",
        id="ship",
        show=False,
        tooltip="Ship check — bundle the highlighted form, run it where only the bundle and /usr exist",
    ),
    Binding(
        "escape,x",
        "cancel",
        "Cancel run",
        id="cancel",
        show=False,
        tooltip="Cancel run — stop the measurement, build or ship check in flight",
    ),
    Binding("question_mark", "help", "Help", key_display="?", id="help", tooltip="Help — deploytui's keys"),
    Binding("q", "quit", "Quit", id="quit"),
    Binding("ctrl+q", "quit", "Quit", show=False, priority=True, id="quit-ctrl"),
]


def key_label(b: Binding) -> str:
    """How a binding's keys are written: its key_display, else its keys ("escape x")."""
    return b.key_display or b.key.replace(",", " ")


def unique(bindings: Iterable[Any]) -> Iterator[Binding]:
    """Each binding once per id (the first one for keys that share an id)."""
    seen: set[str | None] = set()
    for b in bindings:
        if isinstance(b, Binding) and b.id not in seen:
            seen.add(b.id)
            yield b


def long_text(b: Binding, **words: str) -> tuple[str, str]:
    """(title, what it does) from the tooltip; (description, "") without one."""
    if not b.tooltip:
        return b.description, ""
    title, _, what = b.tooltip.format(**words).partition(SEP)
    return title, what


def commands(
    target: Any, bindings: Iterable[Any], **words: str
) -> Iterator[tuple[str, str, Callable[[], Any]]]:
    """(title, help, callback) for each binding with a tooltip: the callback calls the action on
    `target` (the app or a screen) as the key would; the help ends with the key."""
    for b in unique(bindings):
        if not b.tooltip:
            continue
        title, what = long_text(b, **words)
        _, name, params = parse(b.action)
        yield (
            title,
            f"{what} ({key_label(b)})".strip(),
            functools.partial(getattr(target, f"action_{name}"), *params),
        )


def help_rows(bindings: Iterable[Any], **words: str) -> list[tuple[str, str]]:
    """(keys, what they do) for the help screen."""
    rows = []
    for b in unique(bindings):
        title, what = long_text(b, **words)
        rows.append((key_label(b), f"{title}: {what}" if what else title))
    return rows
