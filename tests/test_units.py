"""The one place figures become text: no duration reads as zero, sizes in binary units."""

from __future__ import annotations

from deploytui.core import units


def test_a_duration_moves_to_a_smaller_unit_rather_than_read_zero():
    assert [units.seconds(s) for s in (3e-8, 1.2e-5, 8.5e-4, 0.0123, 0.412, 1.6)] == [
        "30ns",
        "12.0µs",
        "850µs",
        "12.3ms",
        "412ms",
        "1.60s",
    ]
    assert units.from_ms(0.012) == "12.0µs" and units.from_ms(380.2) == "380ms"
    assert units.ms(4.2e-6) == "4.2 µs" and units.ms(0.00183) == "1.83 ms" and units.ms(0.4126) == "412.6 ms"


def test_ms_values_keep_their_tables_format_above_zero():
    assert units.ms_value(380.2, places=2) == "380.20 ms"  # the report's stages, as before
    assert units.ms_value(0.001, places=2) == "1.0 µs"  # was 0.00 ms
    assert units.ms_value(0.0123, sig=3) == "0.0123 ms"  # the CLI's stages, as before
    assert units.ms_value(None) == "–"


def test_sizes():
    assert units.human(17) == "17 B" and units.human(4096) == "4.0 KiB"
    assert [units.short_size(n) for n in (812 << 20, 2.8 * (1 << 20), 11.6 * 1024, None)] == [
        "812M",
        "2.8M",
        "11.6K",
        "–",
    ]
