"""Runners: tiny programs that load one form in a fresh process and run its forwards.

They speak the runner protocol (`protocol.py`, shared with the Rust and C++ runners): inputs
from a safetensors file, outputs written to another, one JSON line of `stages_ms` (import /
load / first_forward / steady_forward) and, in Python, `modules_added` (top-level package ->
count, for the load step). Failures: one line `error: ...` on stderr and a non-zero exit.
"""
