"""The tract family."""
