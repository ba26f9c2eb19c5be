"""The isolated check: a form bundled and run in the ship sandbox, compared with eager, its verdict
in ship.json (shipping)."""
