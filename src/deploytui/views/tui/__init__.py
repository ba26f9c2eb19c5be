"""The Textual app: explore, run, diff and compare every form.

`run_app()` is what a bare `deploytui` calls. Importing this package loads no Textual and no
torch; the app module is imported inside `run_app`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deploytui.views.tui import _start

if TYPE_CHECKING:
    from deploytui.core.workspace import Workspace
    from deploytui.views.tui.app import DeployApp


def run_app(ws: Workspace, *, headless: bool = False) -> DeployApp:
    """Run the app on `ws` (the model shown first, the artifacts folder) until it exits; returns
    it (its `return_code`, `ready_ms`, `ready_at_ns`)."""
    _start.hold_gc()  # released by the app once its first frame is up
    from deploytui.views.tui.app import DeployApp

    app = DeployApp(ws, handle_signals=True)
    app.run(headless=headless)
    return app


__all__ = ["run_app"]
