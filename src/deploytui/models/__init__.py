"""Models as users hold them: loading (subprocesses), the zoo, library models, the check."""
