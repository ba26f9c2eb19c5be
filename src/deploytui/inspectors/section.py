"""A view-model section (what one inspector shows in one tab), the shape of a section builder
(the core's, inspectors/form_view.py BUILDERS, and each family's, its `sections` module), and the
sections of source text several kinds show: a code file, the code members of an archive."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from deploytui.core.workspace import Workspace
from deploytui.inspectors import InspectError, archive
from deploytui.spec.forms import Inspect


@dataclass
class Section:
    tab: str
    title: str
    kind: str  # "text" | "code" | "table" | "tree"
    text: str = ""
    language: str | None = None
    columns: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    error: str = ""


@dataclass(frozen=True)
class Placed:
    """A form's `Inspect` entry in a workspace: what a section builder gets (`file()` is the
    entry's file for the workspace's model, under its artifacts folder)."""

    entry: Inspect
    ws: Workspace

    @property
    def path(self) -> str:
        return self.entry.path

    @property
    def title(self) -> str:
        return self.entry.title

    def file(self) -> Path:
        return self.entry.file(self.ws)


Builder = Callable[[Placed], list[Section]]
# Inspect.kind -> (its tab, section kind, title when it cannot be built, builder of its sections)
Builders = dict[str, tuple[str, str, Callable[[Placed], str], Builder]]


CHAIN_UP_TO = 8  # a graph of at most this many operators is named as its chain
KINDS_SHOWN = 6  # a larger one by its most used kinds of operator, this many


def operators(ops: Sequence[str]) -> str:
    """A graph's operators for a section's title, short at any size: the chain of a small graph
    (`Gemm → Relu → Gemm`), or a large one's kinds, most used first (`Conv ×56, Relu ×35, … 4
    more kinds`): a title listing 339 nodes filled the pane at 80×24."""
    if len(ops) <= CHAIN_UP_TO:
        return " → ".join(ops)
    counts = Counter(ops).most_common()
    shown = ", ".join(f"{op} ×{n}" if n > 1 else op for op, n in counts[:KINDS_SHOWN])
    more = len(counts) - KINDS_SHOWN
    return shown + (f", … {more} more kind{'s' * (more > 1)}" if more > 0 else "")


def one(build: Callable[[Placed], Section]) -> Builder:
    return lambda i: [build(i)]


def code_file(tab: str, path: Path, language: str | None, title: str | None = None) -> Section:
    if not path.exists():
        raise InspectError(f"{path.name} is missing ({path}): run `deploytui build`")
    text = path.read_text(errors="replace")
    return Section(tab, title or path.name, "code", text=text, language=language)


def zip_code(
    path: Path, suffixes: tuple[str, ...], language: str, limit: int = 3, under: str = ""
) -> list[Section]:
    """Source members of an archive: names ending in one of `suffixes` (and containing `under`)."""
    out: list[Section] = []
    for m in archive.members(path):
        if m.name.endswith(suffixes) and under in m.name and len(out) < limit:
            out.append(
                Section(
                    "Code",
                    f"{path.name}: {m.name}",
                    "code",
                    text=archive.read_text(path, m.name),
                    language=language,
                )
            )
    if not out:
        raise InspectError(f"{path.name} holds no {'/'.join(suffixes)} source")
    return out
