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
    # the CLI's stages: three significant digits in the unit that suits, never 1.32e+03 ms
    assert [units.ms_value(v, sig=3) for v in (1320.4, 8.886, 999.7, 0.0119, 0.00045, 0)] == [
        "1.32 s",
        "8.89 ms",
        "1000 ms",
        "11.9 µs",
        "450 ns",
        "0 ns",
    ]
    assert units.ms_value(None) == "–"


def test_sizes():
    assert units.human(17) == "17 B" and units.human(4096) == "4.0 KiB"
    assert [units.short_size(n) for n in (812 << 20, 2.8 * (1 << 20), 11.6 * 1024, None)] == [
        "812M",
        "2.8M",
        "11.6K",
        "–",
    ]


def test_the_cli_table_lines_up_every_form_and_writes_each_stage_in_its_unit():
    from deploytui.core.record import RunRecord
    from deploytui.views.cli.table import table_line
    from tui_support import record

    lines = [
        table_line(RunRecord.from_json(record(key, [30.5, 31.0], 30.0, stages=True)))
        for key in ("onnxruntime-native-int8", "tract")
    ]
    assert len({line.index(" n=2 ") for line in lines}) == 1, lines  # the longest key fits its column
    stages = lines[0].splitlines()[1]
    assert "import 1.21 s  load 380 ms  forward#1 2.4 ms  steady 900 µs" in stages, stages
