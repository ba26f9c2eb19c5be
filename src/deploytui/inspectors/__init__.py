"""Inspectors: pure functions from an artifact path to a small view model.

Every inspector fails with exactly one error type, `InspectError`, whose message is shown in
place by the app and the CLI. No inspector loads a pickled format (.pt, .pt2): those are read as
ZIP archives only; loading them happens in runner subprocesses.
"""


class InspectError(Exception):
    """An artifact could not be inspected (missing, truncated, corrupt, tool missing)."""
