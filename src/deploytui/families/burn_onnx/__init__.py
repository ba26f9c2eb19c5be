"""The burn_onnx family."""
