"""How numbers are written and rounded, the same everywhere (app, CLI, inspectors, report): the
one place durations (ns/µs/ms/s) and sizes (B/KiB/MiB/GiB, or K/M/G in narrow columns) become
text. A figure never reads as zero because of its unit: it moves to a smaller one."""

from __future__ import annotations

import re
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
    """A duration in the unit that suits it: 450ns, 12.4µs, 850µs, 12.3ms, 412ms, 1.60s."""
    if s is None:
        return "–"
    if s <= 0:
        return "0s"
    if s < 1e-6:
        return f"{s * 1e9:.0f}ns"
    if s < 1e-3:
        return f"{s * 1e6:.1f}µs" if s < 1e-4 else f"{s * 1e6:.0f}µs"
    if s < 1.0:
        return f"{s * 1e3:.1f}ms" if s < 0.1 else f"{s * 1e3:.0f}ms"
    return f"{s:.2f}s"


def from_ms(v: float | None) -> str:
    """A duration stored in milliseconds (a runner's stages), in the unit that suits it."""
    return seconds(None if v is None else v / 1e3)


def ms(s: float | None, width: int = 0) -> str:
    """A duration in milliseconds for tables: 1.83 ms, 412.6 ms (two decimals under 10 ms); one
    that would read 0.00 ms is written in µs instead (4.2 µs)."""
    if s is None:
        return "–".rjust(width + 3)
    if 0 < s < 5e-6:
        return f"{f'{s * 1e6:.1f}':>{width}} µs"
    text = f"{s * 1000:.1f}" if s >= 0.01 else f"{s * 1000:.2f}"
    return f"{text:>{width}} ms"


def ms_value(v: float | None, missing: str = "–", places: int | None = None, sig: int | None = None) -> str:
    """A figure already in milliseconds (a stage, a forward) for tables: `ms` of it, or with
    `places` decimals (380.20 ms), or with `sig` significant digits in the unit that suits it
    (1.32 s, 8.89 ms, 11.9 µs); one that would read as zero is written in µs."""
    if not isinstance(v, (int, float)):
        return missing
    if places is not None:
        return f"{v * 1e3:.1f} µs" if 0 < v < 0.5 * 10**-places else f"{v:.{places}f} ms"
    if sig is not None:
        return duration(v / 1e3, sig)
    return ms(v / 1e3)


_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "kib": 1 << 10,
    "kb": 1000,
    "m": 1 << 20,
    "mib": 1 << 20,
    "mb": 1000**2,
    "g": 1 << 30,
    "gib": 1 << 30,
    "gb": 1000**3,
}
_TIME_UNITS = {"us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "": 1.0}
_NUMBER = re.compile(r"\s*([0-9]*\.?[0-9]+(?:e[-+]?[0-9]+)?)\s*([a-zµ/%]*)\s*", re.IGNORECASE)


def _split(text: str, what: str, known: dict[str, float] | dict[str, int]) -> tuple[float, float]:
    m = _NUMBER.fullmatch(text)
    unit = m.group(2).lower() if m else ""
    if m is None or unit not in known:
        units = ", ".join(u for u in known if u)
        raise ValueError(f"{what} {text.strip()!r} not understood: a number and one of {units}")
    return float(m.group(1)), known[unit]


def parse_size(text: str) -> int:
    """Bytes from a size as people write it: `50MiB`, `50M` (binary), `20MB` (decimal), `4096`."""
    value, scale = _split(text, "size", _SIZE_UNITS)
    return round(value * scale)


def parse_seconds(text: str) -> float:
    """Seconds from a duration as people write it: `50ms`, `1.5s`, `800us` (a bare number: seconds)."""
    value, scale = _split(text, "duration", _TIME_UNITS)
    return value * scale


def duration(s: float, sig: int = 3) -> str:
    """Seconds for a line of text, with `sig` significant digits in the largest unit the figure
    reaches (1.5 s, 40.2 ms, 11.9 µs), never in exponent notation (a stage of 1320 ms had read
    `1.32e+03 ms`)."""
    scale, unit = next(
        ((k, u) for k, u in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")) if abs(s) >= k), (1e-9, "ns")
    )
    x = s / scale
    text = f"{x:.{sig}g}"
    return f"{x:.0f} {unit}" if "e" in text else f"{text} {unit}"
