"""The burn family."""
