"""The onnxruntime family."""
