"""The command line: `deploytui COMMAND`, one module per command; main parses and dispatches."""
