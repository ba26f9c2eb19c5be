"""Start-up runs on an SSH target: each form's bundle copied there and measured there (bench)."""
