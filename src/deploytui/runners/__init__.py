"""Runners: tiny programs that load one form in a fresh process, run one forward and print JSON.

Output contract, shared with the Rust and C++ runners: the last stdout line is one JSON object
`{"logits": [[...], ...]}` (f32 values printed round-trip); Python runners add `stages_ms`
(import / load / forward) and `modules_added` (top-level package -> count, for the load step).
Failures: one line `error: ...` on stderr and a non-zero exit.
"""
