"""A plotext 6 chart as a Textual widget (plotext is imported lazily, on first draw; the figure
comes from deploytui.core.plot)."""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Hashable

from rich.text import Text
from textual.widgets import Static

from deploytui.core.plot import figure as _figure


def bars(
    labels: list[str],
    values: list[float],
    *,
    title: str = "",
    log: bool = False,
    value_text: Callable[[float], str] | None = None,
) -> Callable[[int, int], str]:
    """Horizontal bars, first label on top. With `log`, bar lengths are log10 of the values and
    the axis ticks are labelled with real values (decades)."""

    def draw(width: int, height: int) -> str:
        fig = _figure(width, height)
        vals = [float(v) for v in values]
        names = [
            f"{lab} {value_text(v)}" if value_text else lab for lab, v in zip(labels, vals, strict=False)
        ]
        floor = 0
        if log and any(v > 0 for v in vals):
            floor = math.floor(math.log10(min(v for v in vals if v > 0)))
            vals = [math.log10(v) - floor + 0.3 if v > 0 else 0.0 for v in vals]
        sig = fig.bar(names[::-1], vals[::-1], orientation="h", width=0.6)
        fig.draw(sig)
        ruler = fig.ruler(axis="x")
        ruler.lim(0, max(vals, default=0) * 1.02 or None)  # plotext may clip the longest bar otherwise
        if log:  # bar lengths are log10 values: the real values are in the labels, not on the axis
            ruler.ticks([], [])
        if title:
            fig.title(title)
        return str(fig.build())

    return draw


def series(values: list[float], *, title: str = "") -> Callable[[int, int], str]:
    """Run times as bars, one per run."""

    def draw(width: int, height: int) -> str:
        fig = _figure(width, height)
        sig = fig.bar([str(i + 1) for i in range(len(values))], values, width=0.6)
        fig.draw(sig)
        if title:
            fig.title(title)
        return str(fig.build())

    return draw


def _no_background(text: Text) -> Text:
    """plotext paints its own canvas colour; drop it so the chart sits on the app's background."""
    from rich.style import Style

    out = Text(text.plain)
    for span in text.spans:
        st = span.style if isinstance(span.style, Style) else Style.parse(str(span.style))
        out.stylize(Style(color=st.color, bold=st.bold), span.start, span.end)
    return out


class PlotextChart(Static):
    """Redraws its drawing function at its own size; shows `empty` text when there is none."""

    DEFAULT_CSS = "PlotextChart { height: 12; }"

    CACHE = 32  # drawings kept, by (key, width, height): going back to a form costs no plotext

    def __init__(self, empty: str = "", *, id: str | None = None) -> None:
        super().__init__(empty, id=id, markup=False)
        self._draw: Callable[[int, int], str] | None = None
        self._key: Hashable = None
        self._empty = empty
        self._shown: tuple = ()
        self._drawn: OrderedDict[tuple, Text] = OrderedDict()

    def plot(
        self, draw: Callable[[int, int], str] | None, empty: str | None = None, key: Hashable = None
    ) -> None:
        """Show `draw`'s chart. `key` names what it draws (the same key, the same picture):
        then the picture is drawn once per size, and not again while it is on show."""
        self._draw, self._key = draw, key
        if empty is not None:
            self._empty = empty
        self._refresh_plot()

    def on_resize(self) -> None:
        self._refresh_plot()

    def _refresh_plot(self) -> None:
        w, h = self.size.width, self.size.height
        if self._draw is None or w < 10 or h < 4:
            self._shown = ()
            self.update(Text(self._empty if self._draw is None else ""))
            return
        cache_key = (self._key, w, h) if self._key is not None else None
        if cache_key is not None and cache_key == self._shown:
            return
        text = self._drawn.get(cache_key) if cache_key is not None else None
        if text is None:
            try:
                text = _no_background(Text.from_ansi(self._draw(w, h)))
            except Exception as e:  # a chart must never take the app down
                text, cache_key = Text(f"chart failed: {type(e).__name__}: {e}", style="red"), None
            if cache_key is not None:
                self._drawn[cache_key] = text
                while len(self._drawn) > self.CACHE:
                    self._drawn.popitem(last=False)
        elif cache_key is not None:
            self._drawn.move_to_end(cache_key)
        self._shown = cache_key or ()
        self.update(text)
