"""A plotext 6 chart as a Textual widget (plotext is imported lazily, on first draw; the figure
comes from deploytui.core.plot)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable

from rich.text import Text
from textual.widgets import Static

from deploytui.core.plot import figure as _figure
from deploytui.core.plot import hbars as _hbars
from deploytui.core.plot import thin as _thin


def bars(
    labels: list[str],
    values: list[float],
    *,
    title: str = "",
    log: bool = False,
    value_text: Callable[[float], str] | None = None,
) -> Callable[[int, int], str]:
    """Horizontal bars, first label on top, one row each (core.plot.hbars: a label is cut with …
    rather than run into its neighbour). With `log`, bar lengths are log10 of the values."""

    def draw(width: int, height: int) -> str:
        return _hbars(labels, values, width, height, title=title, log=log, value_text=value_text or str)

    return draw


def series(values: list[float], *, title: str = "") -> Callable[[int, int], str]:
    """Run times as bars, one per run."""

    def draw(width: int, height: int) -> str:
        fig = _figure(width, height)
        names = [str(i + 1) for i in range(len(values))]
        sig = fig.bar(names, values, width=0.6)
        fig.draw(sig)
        at, shown = _thin(list(range(1, len(names) + 1)), names, width - 8)
        fig.ruler(axis="x").ticks(at, shown)  # run numbers that fit side by side
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
