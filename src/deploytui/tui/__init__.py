"""The Textual app: explore, run, diff and compare every form.

`run_app()` is what a bare `deploytui` calls. Importing this package loads no Textual and no
torch; the app module is imported inside `run_app`.
"""

from deploytui.tui._start import START_NS  # first: the start-up clock


def run_app() -> int:
    from deploytui.tui.app import DeployApp

    app = DeployApp(handle_signals=True)
    app.run()
    return app.return_code or 0


__all__ = ["START_NS", "run_app"]
