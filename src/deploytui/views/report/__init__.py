"""The report: markdown, JSON and CSV from what is stored; it runs nothing."""
