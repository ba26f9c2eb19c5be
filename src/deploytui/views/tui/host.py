"""What a screen may ask of the app: `AppHost`, the few members the screens use, below both.

The screens never import the app (`app.py` imports them): each reads its app as an `AppHost`
(`host_of(self)`), as a Textual widget reads its screen through the DOM. `DeployApp` is one
(mypy checks it in `app.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Protocol, cast

if TYPE_CHECKING:
    from textual.binding import BindingType
    from textual.geometry import Size
    from textual.message_pump import MessagePump
    from textual.screen import Screen

    from deploytui.views.tui.session import Session


class AppHost(Protocol):
    """The app as the screens see it: its state, and the jobs they may start or cancel."""

    BINDINGS: ClassVar[list[BindingType]]  # the app's keys (the help screen lists them)
    session: Session  # what the app knows and does (no Textual in it)

    @property
    def size(self) -> Size: ...  # the terminal's size

    @property
    def job(self) -> str: ...  # the kind of the job in flight, "" when none

    def action_run(self, key: str | None = None) -> None: ...  # measure a form (r, enter)

    def action_cancel(self) -> None: ...  # cancel the job in flight (escape)

    def load_sections(self, key: str) -> None: ...  # a form's inspector sections, asked of the lane

    def start_sweep(self) -> None: ...  # the default sweep, in the lane

    def start_serve(self) -> None: ...  # the serving cells of the model shown, in the lane


def host_of(node: MessagePump) -> AppHost:
    """The app `node` runs in, as an `AppHost`."""
    return cast("AppHost", node.app)


def close(screen: Screen[Any], result: Any = None) -> None:
    """Dismiss `screen` with `result` while it is the one on top. Two closes can come in one turn
    (enter and escape typed together in a picker): Textual's `dismiss` pops whatever screen is on
    top, so the second one popped the screen below (the main screen: ScreenStackError, the app
    down with a traceback)."""
    if screen.app.screen is screen:
        screen.dismiss(result)
