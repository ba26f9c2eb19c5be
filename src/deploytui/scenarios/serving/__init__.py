"""Serving cells: each form at each batch size and thread count (serve), serve.json (store), their
tables and charts (text)."""
