"""deploytui: build, run and measure every way of deploying one PyTorch model."""

__version__ = "0.1.0"
