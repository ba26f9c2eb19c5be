"""The timed forwards of the runner protocol, the same in every language: after the first
forward, W untimed warm-up forwards, then K each timed alone with the language's monotonic
clock; the process's CPU time and the wall time over the K. Checked here against forwards of a
known length: Python in process, C++ through cpp/protocol.h in a small harness (no libtorch);
Rust's is runner-io's own test (`timing_against_a_known_spin_and_sleep`)."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import time

import pytest

from deploytui.core import paths
from deploytui.runners import protocol
from deploytui.runners.protocol import Stages, parse_args, timed_forwards


def _spin(ms: float) -> None:
    """5 ms of this thread's CPU time: its wall time is at least that, however loaded the machine."""
    t0 = time.thread_time()
    while (time.thread_time() - t0) * 1000 < ms:
        pass


def _check_spin(line: dict, k: int, w: int) -> None:
    """K forwards that each burn 5 ms of CPU: each timed at 5 ms or more, alone (the K times fit
    in the loop's wall time), and the process's CPU time over the loop is the K x 5 ms they
    burnt (no bound on the wall time: the machine is shared, a spinning thread is preempted)."""
    assert line["warmup"] == w and len(line["forward_ms"]) == k
    p50 = statistics.median(line["forward_ms"])
    assert min(line["forward_ms"]) >= 5.0, line["forward_ms"]
    assert line["stages_ms"]["steady_forward"] == pytest.approx(p50, abs=1e-3)
    assert 0.9 * 5.0 * k <= line["cpu_ms"] <= 1.3 * 5.0 * k, line
    assert line["loop_ms"] >= sum(line["forward_ms"]) * 0.999


def _check_sleep(line: dict) -> None:
    """Forwards that sleep 5 ms: each timed at 5 ms or more, and almost no CPU time."""
    assert min(line["forward_ms"]) >= 5.0, line["forward_ms"]
    assert line["cpu_ms"] < 0.5 * len(line["forward_ms"]), line


def _python_line(forward, k: int, w: int) -> dict:
    stages = Stages()
    calls = []
    timed_forwards(lambda: calls.append(forward()), k, stages, w)
    assert len(calls) == 1 + w + k
    return {
        "stages_ms": stages.ms,
        "warmup": stages.warmup,
        "forward_ms": stages.forward_ms,
        "cpu_ms": stages.cpu_ms,
        "loop_ms": stages.loop_ms,
    }


def test_python_times_each_forward_alone():
    _check_spin(_python_line(lambda: _spin(5), 20, 3), 20, 3)
    _check_sleep(_python_line(lambda: time.sleep(0.005), 10, 0))
    stages = Stages()
    timed_forwards(lambda: None, 0, stages, 2)
    assert stages.ms["steady_forward"] is None and stages.forward_ms == [] and stages.cpu_ms is None


def test_python_flags_and_their_bounds(capsys):
    a = parse_args(["m", "--inputs", "i", "--outputs", "o", "--warmup", "4", "--threads", "2"], "u")
    assert (a.warmup, a.threads, a.repeat) == (4, 2, protocol.DEFAULT_REPEAT)
    for bad in (["--threads", "0"], ["--repeat", str(protocol.MAX_REPEAT + 1)], ["--warmup", "-1"]):
        with pytest.raises(SystemExit) as e:
            parse_args(["m", "--inputs", "i", "--outputs", "o", *bad], "u")
        assert e.value.code == 2
    assert "must be a whole number from" in capsys.readouterr().err


def test_python_model_file_is_one_that_exists(tmp_path, capsys):
    model = tmp_path / "m.onnx"
    model.write_bytes(b"x")
    flags = ["--inputs", "i", "--outputs", "o"]
    assert protocol.model_file(parse_args([str(model), *flags], "u"), "u") == str(model)
    for argv, code, words in (
        ([str(tmp_path / "gone.onnx"), *flags], 1, "model file not found"),
        ([str(model), str(model), *flags], 2, "usage: u"),
    ):
        with pytest.raises(SystemExit) as e:
            protocol.model_file(parse_args(argv, "u"), "u")
        assert e.value.code == code and words in capsys.readouterr().err


@pytest.fixture(scope="module")
def timing_check(tmp_path_factory):
    if shutil.which(os.environ.get("CXX", "g++")) is None:
        pytest.skip("no g++")
    exe = tmp_path_factory.mktemp("timing") / "timing_check"
    build = subprocess.run(
        [
            os.environ.get("CXX", "g++"),
            "-std=c++20",
            "-O2",
            f"-I{paths.ROOT / 'cpp'}",
            str(paths.ROOT / "tests" / "cpp" / "timing_check.cpp"),
            "-o",
            str(exe),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    return exe


def _cpp(exe, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=60, check=False)


def test_cpp_times_each_forward_alone(timing_check):
    io = ("MODEL", "--inputs", "i", "--outputs", "o")
    run = _cpp(timing_check, "spin", "5", *io, "--repeat", "20", "--warmup", "3", "--threads", "2")
    assert run.returncode == 0, run.stderr
    line = json.loads(run.stdout)
    _check_spin(line, 20, 3)
    assert line["threads"] == {"requested": 2, "reported": None}
    run = _cpp(timing_check, "sleep", "5", *io, "--repeat", "10")
    _check_sleep(json.loads(run.stdout))
    zero = json.loads(_cpp(timing_check, "spin", "1", *io, "--repeat", "0").stdout)
    assert zero["forward_ms"] == [] and zero["cpu_ms"] is None and zero["stages_ms"]["steady_forward"] is None
    for bad in (("--threads", "0"), ("--repeat", "10001"), ("--warmup", "x")):
        run = _cpp(timing_check, "spin", "1", *io, *bad)
        assert run.returncode == 1 and run.stderr.startswith("error: --"), run.stderr


def test_the_protocol_reads_a_samples_list(tmp_path):
    listing = tmp_path / "samples.txt"
    listing.write_text("a.safetensors\tx.safetensors\n\nb.safetensors\ty.safetensors\n")
    args = parse_args(["m", "--inputs", "i", "--outputs", "o", "--samples", str(listing)], "usage")
    assert args.samples == [("a.safetensors", "x.safetensors"), ("b.safetensors", "y.safetensors")]
    assert parse_args(["m", "--inputs", "i", "--outputs", "o"], "usage").samples == []
    listing.write_text("only-one-column\n")
    with pytest.raises(SystemExit) as e:
        parse_args(["m", "--inputs", "i", "--outputs", "o", "--samples", str(listing)], "usage")
    assert e.value.code == 2
