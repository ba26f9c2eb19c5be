"""The libtorch family."""
