"""`--data`: the spec, the readers (a factory, a folder of tensor files), the split into a
calibration and an evaluation part, the task's metric with its interval, and bad data as one
line naming the sample and the input. Quick: a tiny model in this process, no build."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from deploytui.core import dataref
from deploytui.judge import task

HERE = Path(__file__).resolve().parent
DIGITS = HERE / "models" / "digits.py"


# the spec


def test_parse_names_a_factory_a_module_or_a_folder(tmp_path):
    f = dataref.parse(f"{DIGITS}:samples")
    assert (f.kind, f.factory, f.calibration, f.seed) == ("file", "samples", dataref.CALIBRATION, 0)
    assert f.problem() == "" and f.sources() == (DIGITS,)
    m = dataref.parse("json.decoder:samples,calibration=3,seed=7")
    assert (m.kind, m.target, m.calibration, m.seed) == ("module", "json.decoder", 3, 7)
    assert m.text == "json.decoder:samples,calibration=3,seed=7" and dataref.parse(m.text) == m
    d = dataref.parse(str(tmp_path))
    assert (d.kind, d.problem()) == ("folder", "")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("x.py", "name the factory"),
        ("d,calibration=0", "calibration is a whole number >= 1"),
        ("d,batch=3", "data options are calibration=N, seed=S and transform="),
        ("d.py:samples,transform=t.py:f", "transform= is for a folder of images"),
        ("d,transform=t.py", "transform= names a function"),
        ("", "--data names"),
    ],
)
def test_parse_refuses_in_one_line(text, says):
    with pytest.raises(dataref.DataRefError, match=says):
        dataref.parse(text)


def test_problem_says_what_is_missing(tmp_path):
    assert "does not exist" in dataref.parse(str(tmp_path / "nope")).problem()
    assert "does not exist" in dataref.parse(f"{tmp_path}/nope.py:samples").problem()


# the metric and its intervals


def test_wilson_interval_matches_the_textbook_values():
    lo, hi = task.wilson(81, 263)  # Wilson (1927) / Newcombe (1998): 0.2553..0.3662 at 95 %
    assert (round(lo, 4), round(hi, 4)) == (0.2553, 0.3662)
    assert task.wilson(0, 0) == (0.0, 1.0)


def test_paired_difference_is_noise_when_few_rows_differ():
    eager = [True] * 200
    form = [True] * 199 + [False]  # 0.5 % lower on 200 rows: one row
    d, lo, hi = task.paired_difference(eager, form)
    assert d == pytest.approx(0.005) and lo < 0 < hi  # the interval holds no drop at all
    d, lo, hi = task.paired_difference([True] * 200, [True] * 100 + [False] * 100)
    assert lo > 0.4  # half the rows lost: no noise about it
    assert task.paired_difference([True] * 5, [True] * 5) == (0.0, 0.0, 0.0)


def test_task_tally_scores_rows_against_labels_and_eager():
    t = task.TaskTally("logits", 3)
    eager = [0.9, 0.1, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    form = [0.9, 0.1, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0]  # row 1 flips to class 0
    t.add(form, eager, [0, 1, task.IGNORE_INDEX])
    assert t.rows == 2 and t.accuracy() == (0.5, 1.0) and t.agree == 1
    assert t.drop()[0] == 0.5
    with pytest.raises(ValueError, match="scores for"):
        t.add(form, eager, [0, 1])


def test_perplexity_of_next_token_logits():
    t = task.TaskTally("logits", 2, next_token=True)
    t.add([0.0, 0.0], [0.0, 0.0], [1])  # uniform over two tokens: perplexity 2
    assert t.perplexity() == pytest.approx((2.0, 2.0))


def test_score_text_reads_the_drop_in_points():
    from deploytui.core.record import RunRecord
    from deploytui.core.record_parts import TaskScore
    from deploytui.scenarios.accuracy import score_text

    s = TaskScore(
        "top1",
        "output_0",
        576,
        0.969,
        0.972,
        0.003,
        -0.004,
        0.010,
        0.95,
        0.98,
        0.95,
        0.99,
        18,
        6,
        0,
        "d:samples",
        "abcd",
    )
    assert score_text.cells(s) == ["96.9 %", "97.2 %", "+0.3 pt", "[−0.4, +1.0] pt (95 %)"]
    assert "on 576 rows of 18 samples" in score_text.task_text(s)
    rec = RunRecord("torch-eager", [], "", task=s)
    assert RunRecord.from_json(json.loads(json.dumps(rec.to_json()))).task == s


# the readers, on a tiny model


@pytest.fixture
def tiny():
    import torch

    from deploytui.core.modelref import parse
    from deploytui.models.load import LoadedModel

    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(4, 3)).eval()
    return LoadedModel(parse("a1"), module, (torch.zeros(2, 4),), {})


def _factory(tmp_path: Path, body: str) -> dataref.DataRef:
    p = tmp_path / "data.py"
    p.write_text("import torch\n\n\ndef samples():\n" + body)
    return dataref.parse(f"{p}:samples,calibration=2")


def _export(tiny, tmp_path, data):
    from deploytui.families.common.samples import export_samples

    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    return out, export_samples(tiny, out, "tiny", data)


def test_factory_samples_split_into_disjoint_parts(tiny, tmp_path):
    from safetensors.torch import load_file

    data = _factory(
        tmp_path,
        "    g = torch.Generator().manual_seed(1)\n"
        "    for k in range(12):\n"
        "        yield {'args': (torch.randn(2, 4, generator=g),), 'label': torch.tensor([k % 3, 0])}\n",
    )
    out, facts = _export(tiny, tmp_path, data)
    assert facts["calibration_samples"] + facts["evaluation_samples"] == 12
    assert 1 <= facts["calibration_samples"] <= 2 and facts["labels"] and facts["labelled_output"]
    assert json.loads((out / "accuracy" / "set.json").read_text())["fingerprint"] == facts["fingerprint"]
    cal = load_file(str(out / "calibration.safetensors"))
    evals = [
        load_file(str(out / "accuracy" / f"inputs_{k}.safetensors"))["input_0"]
        for k in range(facts["evaluation_samples"])
    ]
    for k in range(facts["calibration_samples"]):  # disjoint: no calibration sample is judged on
        assert not any(bool((cal[f"{k}/input_0"] == e).all()) for e in evals)
    again = _export(tiny, tmp_path, data)[1]
    assert again == facts  # the same seed: the same split and fingerprint
    other = _export(tiny, tmp_path, dataref.parse(f"{data.target}:samples,calibration=2,seed=5"))[1]
    assert (
        other["fingerprint"] != facts["fingerprint"]
        or other["calibration_samples"] != facts["calibration_samples"]
    )


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("    yield (torch.zeros(2, 5),)\n", "sample 0: input_0 is F32[2, 5], the model takes F32[2, 4]"),
        ("    yield (torch.zeros(2, 4, dtype=torch.int64),)\n", "input_0 is I64[2, 4]"),
        ("    yield {'args': (torch.zeros(2, 4),), 'kwargs': {'mask': torch.ones(2)}}\n", "has mask"),
        ("    raise RuntimeError('no disk')\n    yield 1\n", "raised RuntimeError at sample 0: no disk"),
        ("    return 3\n", "raised TypeError"),
        ("    return []\n", "holds no samples"),
        (
            "    yield {'args': (torch.zeros(2, 4),), 'label': torch.tensor([0, 1, 2])}\n",
            "labels have shape [3]",
        ),
        (
            "    yield {'args': (torch.zeros(2, 4),), 'label': torch.tensor([0, 7])}\n",
            "label 7 is outside the 3 classes",
        ),
        (
            "    yield {'args': (torch.zeros(2, 4),), 'label': torch.tensor([0.5, 1.0])}\n",
            "labels are class indices",
        ),
    ],
)
def test_bad_data_is_one_line_naming_the_sample(tiny, tmp_path, body, says):
    from deploytui.models.data_types import DataError

    data = dataref.parse(f"{_factory(tmp_path, body).target}:samples,calibration=1,seed=3")
    with pytest.raises(DataError) as e:
        _export(tiny, tmp_path, data)
    assert says in str(e.value) and "\n" not in str(e.value)


def test_a_printing_factory_still_reads(tiny, tmp_path, capsys):
    data = _factory(
        tmp_path, "    print('loading…')\n    for _ in range(3):\n        yield (torch.ones(2, 4),)\n"
    )
    assert _export(tiny, tmp_path, data)[1]["evaluation_samples"] >= 1


def test_a_folder_of_tensor_files_with_labels_and_a_damaged_file(tiny, tmp_path):
    import numpy as np
    import torch
    from safetensors.torch import save_file

    folder = tmp_path / "set"
    folder.mkdir()
    for k in range(4):
        save_file({"x": torch.full((2, 4), float(k))}, str(folder / f"s{k}.safetensors"))
    np.savez(folder / "s4.npz", input_0=np.ones((2, 4), np.float32), label=np.array([1, 2]))
    torch.save((torch.ones(2, 4),), folder / "s5.pt")
    (folder / "s6.safetensors").write_bytes(b"not a tensor file")
    (folder / "labels.json").write_text(
        json.dumps({f"s{k}.safetensors": [0, 1] for k in range(4)} | {"s5.pt": [2, 2]})
    )
    _, facts = _export(tiny, tmp_path, dataref.parse(f"{folder},calibration=1"))
    assert facts["calibration_samples"] + facts["evaluation_samples"] == 6
    assert facts["skipped"] == 1 and facts["skipped_first"].startswith("s6.safetensors")
    assert facts["labels"]


def test_a_folder_label_for_a_missing_file_is_refused(tiny, tmp_path):
    import torch
    from safetensors.torch import save_file

    from deploytui.models.data_types import DataError

    folder = tmp_path / "set"
    folder.mkdir()
    save_file({"x": torch.zeros(2, 4)}, str(folder / "a.safetensors"))
    (folder / "labels.json").write_text(json.dumps({"b.safetensors": [0, 0]}))
    with pytest.raises(DataError, match=r"labels b\.safetensors, which is not a tensor file"):
        _export(tiny, tmp_path, dataref.parse(str(folder)))


def test_without_data_the_drawn_set_stays(tiny, tmp_path):
    from deploytui.judge.precision import CALIBRATION, SAMPLES

    out, facts = _export(tiny, tmp_path, None)
    assert (facts["evaluation_samples"], facts["calibration_samples"], facts["data"]) == (
        SAMPLES,
        CALIBRATION,
        None,
    )
    from deploytui.families.common.samples import calibration_inputs

    assert len(calibration_inputs(tiny, out)) == CALIBRATION + 1  # the example first
    assert not math.isnan(facts["seed"])


# the build: what the data reaches


def test_the_data_reaches_export_samples_and_the_calibrated_exports_only(tmp_path):
    from deploytui.builder import plan
    from deploytui.core.modelref import parse
    from deploytui.core.workspace import Workspace
    from deploytui.spec.context import BuildContext

    ws = Workspace.at(parse("convnet"), tmp_path)
    data = dataref.parse(f"{DIGITS}:samples")
    plain = {s.name: s for s in plan(BuildContext.of(ws))}
    given = {s.name: s for s in plan(BuildContext.of(ws.with_data(data)))}
    changed = {n for n in plain if (plain[n].argv, plain[n].inputs) != (given[n].argv, given[n].inputs)}
    assert changed == {"export-samples"}
    assert DIGITS in given["export-samples"].inputs and "--data" in given["export-samples"].argv
    reads = {n for n, s in given.items() if ws.model_dir / "calibration.safetensors" in s.inputs}
    assert reads == {"export-executorch-int8", "export-openvino-int8"}  # the calibrated ones
    assert ws.with_data(data).for_model(parse("a1")).data is None  # another model: not its data


def test_the_report_puts_perplexity_beside_top1_for_next_token_logits():
    import dataclasses

    from deploytui.core.record_parts import TaskScore
    from deploytui.views.report.tables import _task_section

    base = TaskScore(
        "top1", "output", 4096, 0.5, 0.52, 0.02, 0.0, 0.04, 0.48, 0.52, 0.95, 0.9, 16, 4, 0, "t", "ab"
    )
    row = {"form": "onnxruntime-int8", "precision": "int8", "ship_bytes": 1000, "start_median_s": 0.5}
    plain = "\n".join(_task_section([{**row, "task": dataclasses.asdict(base)}]))
    assert "perplexity" not in plain
    lm = dataclasses.replace(base, perplexity=5.25, eager_perplexity=5.0)
    text = "\n".join(_task_section([{**row, "task": dataclasses.asdict(lm)}]))
    assert "| perplexity | eager perplexity |" in text and "| 5.25 | 5 |" in text
