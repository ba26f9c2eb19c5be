"""Widgets of the deploytui app."""
