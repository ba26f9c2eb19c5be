"""Start-up runs: each form in fresh processes (bench), the records stored per model (results)."""
