"""A one-line horizontal gauge: label, bar, value text. Fed live by the running process."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget


class Gauge(Widget):
    """`value` against `maximum`; `text` is what the number means (e.g. "1.23s")."""

    DEFAULT_CSS = "Gauge { height: 1; }"

    value: reactive[float] = reactive(0.0)
    maximum: reactive[float] = reactive(1.0)
    text: reactive[str] = reactive("")

    def __init__(self, label: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.label = label

    def set(self, value: float, maximum: float, text: str) -> None:
        self.maximum = max(maximum, 1e-12)
        self.value = max(value, 0.0)
        self.text = text

    def render(self) -> Text:
        width = max(self.size.width, 20)
        label = f"{self.label:<9}"
        tail = f" {self.text:>9}"
        bar_w = max(width - len(label) - len(tail), 4)
        frac = min(self.value / self.maximum, 1.0) if self.maximum else 0.0
        full = int(frac * bar_w)
        out = Text(label, style="bold")
        out.append("█" * full, style="green" if frac < 0.999 else "yellow")
        out.append("░" * (bar_w - full), style="grey35")
        out.append(tail)
        return out
