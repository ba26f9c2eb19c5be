"""How numbers are written and rounded, the same everywhere (app, CLI, inspectors, report)."""

from __future__ import annotations

import struct


def f32(x: float) -> float:
    """Round a Python float (f64) to the nearest f32, returned as a Python float."""
    value: float = struct.unpack("<f", struct.pack("<f", x))[0]
    return value


def human(n: float) -> str:
    """Bytes in binary units with the unit spelled out: 812.3 MiB, 4.0 KiB, 17 B."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def short_size(n: float | None) -> str:
    """Bytes in binary units for narrow columns, 3 significant digits: 812M, 2.8M, 11.6K, 1.2G."""
    if n is None:
        return "–"
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale:
            v = n / scale
            return f"{v:.1f}{unit}" if v < 100 else f"{v:.0f}{unit}"
    return f"{int(n)}B"


def seconds(s: float | None) -> str:
    """A duration in the unit that suits it: 850µs, 12.3ms, 412ms, 1.60s."""
    if s is None:
        return "–"
    if s < 1e-3:
        return f"{s * 1e6:.0f}µs"
    if s < 1.0:
        return f"{s * 1e3:.1f}ms" if s < 0.1 else f"{s * 1e3:.0f}ms"
    return f"{s:.2f}s"


def ms(s: float | None, width: int = 0) -> str:
    """A duration in milliseconds for tables: 1.83 ms, 412.6 ms (two decimals under 10 ms)."""
    if s is None:
        return "–".rjust(width + 3)
    text = f"{s * 1000:.1f}" if s >= 0.01 else f"{s * 1000:.2f}"
    return f"{text:>{width}} ms"
