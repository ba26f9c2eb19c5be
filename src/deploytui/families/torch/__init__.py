"""The torch family."""
