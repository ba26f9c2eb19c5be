"""The openvino family."""
