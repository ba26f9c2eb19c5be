"""Build code several families share: the torch export process, the cargo and C++ drivers."""
