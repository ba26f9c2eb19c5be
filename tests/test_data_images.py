"""`--data` beyond flat tensors: a folder of images in class sub-folders (the model's own
transform: torchvision's weights' transforms, timm's data config, a Hugging Face image processor;
else a named one), samples in a nested call shape (two_tower's dict), and the progress line of a
long set. Quick: images written here, models built in this process, no build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deploytui.core import dataref

HERE = Path(__file__).resolve().parent
MODELS = HERE / "models"


def _load(text: str):
    from deploytui.core.modelref import parse
    from deploytui.models.load import load

    return load(parse(text))


def _export(m, tmp_path: Path, data: dataref.DataRef, **kw):
    from deploytui.families.common.samples import export_samples

    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    return out, export_samples(m, out, "m", data, **kw)


def _digit_pngs(folder: Path, count: int) -> None:
    """The first `count` held-out digits as 8x8 grey PNGs in class sub-folders 0..9."""
    import importlib.util

    from PIL import Image

    spec = importlib.util.spec_from_file_location("digits_for_images", MODELS / "digits.py")
    assert spec is not None and spec.loader is not None
    digits = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(digits)
    _, _, x, y = digits.split()
    for k in range(count):
        d = folder / str(int(y[k]))
        d.mkdir(parents=True, exist_ok=True)
        pixels = (x[k, 0] * 255).round().to(dtype=__import__("torch").uint8).numpy()
        Image.fromarray(pixels, mode="L").save(d / f"{k:04}.png")


TRANSFORM = """import numpy as np
import torch


def to_tensor(img):
    return torch.from_numpy(np.asarray(img, dtype=np.float32) / 255.0).unsqueeze(0)
"""


@pytest.fixture(scope="module")
def digits_cnn():
    return _load(f"{MODELS / 'digits_cnn.py'}:make")


def test_digits_as_png_folders_with_a_named_transform(digits_cnn, tmp_path):
    from safetensors.torch import load_file

    folder = tmp_path / "digits"
    _digit_pngs(folder, 200)
    (folder / "3" / "broken.png").write_bytes(b"not a png")
    (folder / "3" / "notes.txt").write_text("not an image: left alone")
    prep = tmp_path / "prep.py"
    prep.write_text(TRANSFORM)
    data = dataref.parse(f"{folder},calibration=2,transform={prep}:to_tensor")
    out, facts = _export(digits_cnn, tmp_path, data)
    batches = 200 // 32  # the example is a batch of 32: 6 full batches, 8 images left out
    assert facts["calibration_samples"] + facts["evaluation_samples"] == batches
    assert (facts["dropped"], facts["skipped"]) == (200 - batches * 32, 1)
    assert facts["skipped_first"].startswith("3/broken.png") and facts["labels"]
    right = rows = 0
    for k in range(facts["evaluation_samples"]):  # the classes are the sorted folder names
        scores = load_file(str(out / "accuracy" / f"reference_{k}.safetensors"))["output"]
        labels = load_file(str(out / "accuracy" / f"labels_{k}.safetensors"))["labels"]
        right += int((scores.argmax(-1) == labels).sum())
        rows += len(labels)
    assert right / rows > 0.9  # the digits CNN reads its own digits back from PNG
    assert data.sources() == (folder, prep)
    again = _export(digits_cnn, tmp_path, data)[1]
    assert again["fingerprint"] == facts["fingerprint"]  # the same seed: the same batches


@pytest.mark.parametrize(
    ("transform", "says"),
    [
        (None, "comes with no image preprocessing deploytui knows"),
        ("def to_tensor(img):\n    return torch.zeros(1, 9, 9)\n", "gives F32[1, 9, 9], one image"),
        ("def to_tensor(img):\n    raise OSError('no')\n", "raised OSError: no"),
        ("def to_tensor(img):\n    return 3\n", "returned a int, not a tensor"),
    ],
)
def test_an_image_folder_refuses_in_one_line(digits_cnn, tmp_path, transform, says):
    from deploytui.models.data_types import DataError

    folder = tmp_path / "digits"
    _digit_pngs(folder, 40)
    spec = str(folder)
    if transform is not None:
        (tmp_path / "prep.py").write_text("import torch\n\n\n" + transform)
        spec += f",transform={tmp_path / 'prep.py'}:to_tensor"
    with pytest.raises(DataError) as e:
        _export(digits_cnn, tmp_path, dataref.parse(spec))
    assert says in str(e.value) and "\n" not in str(e.value)


def _colour_pngs(folder: Path, per_class: int, size: int = 40) -> None:
    from PIL import Image

    for k, colour in enumerate(["red", "green"]):
        (folder / f"{k}_{colour}").mkdir(parents=True)
        for i in range(per_class):
            Image.new("RGB", (size + i, size), colour).save(folder / f"{k}_{colour}" / f"{i}.jpg")


@pytest.mark.parametrize(
    "model",
    ["torchvision:mobilenet_v3_small,input_shape=1x3x64x64", "timm:resnet18,input_shape=2x3x48x48"],
)
def test_a_library_model_brings_its_own_transform(tmp_path, model):
    pytest.importorskip(model.partition(":")[0])
    folder = tmp_path / "imgs"
    _colour_pngs(folder, 3)
    m = _load(model)
    _, facts = _export(m, tmp_path, dataref.parse(f"{folder},calibration=1"))
    batch = next(iter(m.inputs.values())).shape[0]
    assert facts["calibration_samples"] + facts["evaluation_samples"] == 6 // batch
    assert facts["labels"] and facts["dropped"] == 6 % batch


def test_torchvision_transforms_at_the_example_size():
    pytest.importorskip("torchvision")
    from PIL import Image

    from deploytui.models.images import _torchvision

    t = _torchvision("resnet18", [1, 3, 112, 112])  # 224 crop of a 256 resize, halved
    assert list(t(Image.new("RGB", (300, 200))).shape) == [3, 112, 112]
    from deploytui.models.data_types import DataError

    with pytest.raises(DataError, match="crop a square, the example input is 64x96"):
        _torchvision("resnet18", [1, 3, 64, 96])


def test_a_hugging_face_folder_brings_its_image_processor(tmp_path):
    transformers = pytest.importorskip("transformers")
    folder = tmp_path / "vit"
    config = transformers.ViTConfig(
        image_size=32,
        patch_size=8,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        num_labels=2,
        architectures=["ViTForImageClassification"],
    )
    transformers.ViTForImageClassification(config).save_pretrained(folder)
    m = _load(f"hf:{folder}")
    imgs = tmp_path / "imgs"
    _colour_pngs(imgs, 2)
    from deploytui.models.data_types import DataError

    with pytest.raises(DataError, match="holds no image processor"):
        _export(m, tmp_path, dataref.parse(str(imgs)))
    transformers.ViTImageProcessor(size={"height": 32, "width": 32}).save_pretrained(folder)
    _, facts = _export(m, tmp_path, dataref.parse(f"{imgs},calibration=1"))
    assert facts["calibration_samples"] + facts["evaluation_samples"] == 4 and facts["labels"]


def test_transform_on_a_tensor_folder_is_refused(tmp_path, digits_cnn):
    import torch
    from safetensors.torch import save_file

    from deploytui.models.data_types import DataError

    (tmp_path / "set").mkdir()
    save_file({"x": torch.zeros(32, 1, 8, 8)}, str(tmp_path / "set" / "a.safetensors"))
    with pytest.raises(DataError, match="transform= is for a folder of images"):
        _export(digits_cnn, tmp_path, dataref.parse(f"{tmp_path / 'set'},transform=p.py:f"))


# nested inputs: samples in the model's own call shape


NESTED = """import torch


def batch(seed):
    g = torch.Generator().manual_seed(seed)
    return {
        "user_ids": torch.randint(0, 100, (4,), generator=g),
        "item_ids": torch.randint(0, 200, (4,), generator=g),
        "user_features": torch.randn(4, 4, generator=g),
    }


def samples():
    yield FIRST
    yield ((batch(1),), {"temperature": torch.full((1,), 3.0)})  # (args, kwargs)
    for k in range(2, 6):
        yield {"args": (batch(k),), "kwargs": {"temperature": torch.ones(1)}}
"""


def test_two_tower_samples_in_its_own_call_shape(tmp_path):
    from safetensors import safe_open

    m = _load(f"{MODELS / 'two_tower.py'}:with_kwargs")
    p = tmp_path / "recs.py"
    first = "((batch(0),), {'temperature': torch.ones(1)})"  # (args, kwargs)
    p.write_text(NESTED.replace("FIRST", first))
    out, facts = _export(m, tmp_path, dataref.parse(f"{p}:samples,calibration=1"))
    assert facts["calibration_samples"] + facts["evaluation_samples"] == 6
    with safe_open(str(out / "accuracy" / "inputs_0.safetensors"), framework="pt") as f:
        assert list(f.keys()) == sorted(m.inputs) and f.metadata()["inputs"] == ",".join(m.inputs)
        assert json.loads(f.metadata()["call"])  # the call's structure travels with the inputs


def test_two_tower_sample_missing_a_key_or_a_keyword_is_one_line(tmp_path):
    from deploytui.models.data_types import DataError

    m = _load(f"{MODELS / 'two_tower.py'}:with_kwargs")
    p = tmp_path / "recs.py"
    p.write_text(NESTED.replace("FIRST", "(batch(0),)"))  # args alone: no temperature
    with pytest.raises(DataError, match=r"sample 0: has no temperature \(the model takes batch\.user_ids"):
        _export(m, tmp_path, dataref.parse(f"{p}:samples"))
    plain = _load(f"{MODELS / 'two_tower.py'}:make")
    p.write_text(NESTED.replace("FIRST", "(batch(0),)").replace('"item_ids"', '"items"'))
    with pytest.raises(DataError, match=r"sample 0: has no batch\.item_ids"):
        _export(plain, tmp_path, dataref.parse(f"{p}:samples"))


def test_a_pair_of_positional_arguments_is_not_taken_for_args_and_kwargs():
    import torch

    from deploytui.core.modelref import parse
    from deploytui.models.data import from_item
    from deploytui.models.load import LoadedModel

    class TwoArgs(torch.nn.Module):
        def forward(self, x, extra):
            return x + extra["b"]

    m = LoadedModel(parse("a1"), TwoArgs(), (torch.zeros(2), {"b": torch.zeros(2)}), {})
    s = from_item(m, "sample 0", (torch.ones(2), {"b": torch.ones(2)}))  # forward(x, extra)
    assert list(s.inputs) == ["input_0", "extra.b"]


# the progress line of a long set


def test_a_long_set_shows_progress_lines(tmp_path, capsys):
    import torch

    from deploytui.core.modelref import parse
    from deploytui.families.common.samples import Progress
    from deploytui.models.load import LoadedModel

    m = LoadedModel(parse("a1"), torch.nn.Linear(4, 3).eval(), (torch.zeros(2, 4),), {})
    p = tmp_path / "data.py"
    p.write_text("import torch\n\n\ndef samples():\n    for _ in range(9):\n        yield torch.ones(2, 4)\n")
    clock = iter(range(100))  # one second a tick: the first line after 2 s, then every 3
    _export(m, tmp_path, dataref.parse(f"{p}:samples"), progress=Progress(2, 3, lambda: next(clock)))
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("samples: 2 read (") and len(lines) >= 3
    assert lines[-1].startswith("samples: 9 read, done (")
    capsys.readouterr()
    _export(m, tmp_path, dataref.parse(f"{p}:samples"))  # a short set: no line at all
    assert "samples:" not in capsys.readouterr().err
