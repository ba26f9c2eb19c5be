"""The executorch family."""
