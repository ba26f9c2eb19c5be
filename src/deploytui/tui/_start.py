"""The app's start timestamp, taken when the package is first imported (before Textual loads)."""

import time

START_NS = time.perf_counter_ns()
