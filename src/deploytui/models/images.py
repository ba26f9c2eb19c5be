"""A folder of images in class sub-folders as `--data` (models/data.py hands it here): the
ImageFolder convention (the sorted sub-folder names are the classes 0..K-1, every image file
under one is of that class), each image preprocessed by the model's own transform where its
library provides one, else by the one the user names (`transform=file.py:fn`), and grouped into
batches of the example input's batch size (the exports have a fixed shape).

The model's own transform: a torchvision model's default weights' transforms (at the example's
size: a square crop of its height, the resize scaled by the same ratio), timm's data config for
the model at the example's size, a Hugging Face image processor saved in the `hf:` folder. Read
one image at a time (file names listed, images never all in memory), in an order shuffled with
the data's seed so that batches mix the classes; unreadable files are skipped and counted, the
images of a last partial batch left out and counted (`Skipped.dropped`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch

from deploytui.core.dataref import TENSOR_SUFFIXES, DataRef
from deploytui.models.data_types import DataError, Sample, Skipped, first_line, shown
from deploytui.models.load import LoadedModel, user_module

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp", ".tif", ".tiff", ".ppm", ".pgm")
Transform = Callable[[Any], Any]  # a PIL image -> the model's input for that one image


def is_image_folder(folder: Path) -> bool:
    """Sub-folders and no tensor files beside them: images in class sub-folders."""
    entries = list(folder.iterdir())
    return any(p.is_dir() and not p.name.startswith(".") for p in entries) and not any(
        p.is_file() and p.suffix in TENSOR_SUFFIXES for p in entries
    )


def listing(folder: Path, seed: int) -> tuple[list[str], list[tuple[Path, int]]]:
    """(the classes, every image file with its class index), the files shuffled with `seed`."""
    classes = sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    files = [
        (p, k)
        for k, c in enumerate(classes)
        for p in sorted((folder / c).rglob("*"))
        if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES
    ]
    random.Random(seed).shuffle(files)
    return classes, files


def image_input(m: LoadedModel) -> tuple[str, torch.Tensor]:
    """The model's one input, a float [batch, channels, height, width] tensor; else why not."""
    if len(m.inputs) != 1:
        raise DataError(
            f"a folder of images feeds a model with one image input; {m.ref.text} takes "
            f"{', '.join(m.inputs)}: give its samples with a factory (file.py:samples)"
        )
    name, t = next(iter(m.inputs.items()))
    if t.dim() != 4 or not t.dtype.is_floating_point:
        raise DataError(
            f"a folder of images feeds an input [batch, channels, height, width]; {m.ref.text}'s "
            f"{name} is {shown(t)}: give its samples with a factory (file.py:samples)"
        )
    return name, t


def _torchvision(name: str, shape: list[int]) -> Transform:
    from torchvision.models import get_model_weights
    from torchvision.transforms._presets import ImageClassification

    t = get_model_weights(name).DEFAULT.transforms()
    if not isinstance(t, ImageClassification):
        raise DataError(
            f"torchvision:{name}'s weights' transforms are {type(t).__name__}, not an image "
            "classifier's: name one, transform=prep.py:fn"
        )
    h, w = shape[-2:]
    if h != w:
        raise DataError(
            f"torchvision:{name}'s weights' transforms crop a square, the example input is {h}x{w}: "
            "name a transform, transform=prep.py:fn"
        )
    crop, resize = t.crop_size[0], t.resize_size[0]
    at_size = ImageClassification(
        crop_size=h,
        resize_size=round(resize * h / crop),
        mean=t.mean,
        std=t.std,
        interpolation=t.interpolation,
        antialias=t.antialias,
    )
    return lambda img: at_size(img.convert("RGB"))


def _timm(module: Any, shape: list[int]) -> Transform:
    import timm.data

    config = timm.data.resolve_data_config({"input_size": tuple(shape[1:])}, model=module)
    transform = timm.data.create_transform(**config)
    return lambda img: transform(img.convert("RGB"))


def _hf(folder: str) -> Transform:
    from deploytui.models.library import offline

    offline()
    from transformers import AutoImageProcessor

    try:
        processor = AutoImageProcessor.from_pretrained(folder, local_files_only=True)
    except (OSError, ValueError) as e:
        raise DataError(
            f"hf:{folder} holds no image processor ({first_line(e)}): save one there with "
            "processor.save_pretrained(FOLDER), or name a transform, transform=prep.py:fn"
        ) from None
    return lambda img: processor(images=img.convert("RGB"), return_tensors="pt")["pixel_values"][0]


def transform_for(ref: DataRef, m: LoadedModel, shape: list[int]) -> tuple[Transform, str]:
    """The transform that makes one image the model's input for it, and how to name it."""
    named = ref.transform_ref()
    if named is not None:
        kind, target, fn_name = named
        stem = Path(target).stem if kind == "file" else target.replace(".", "_")
        module = user_module(kind, target, f"deploytui_user_transform_{stem}", DataError)
        fn = getattr(module, fn_name, None)
        if not callable(fn):
            raise DataError(f"{target} has no callable {fn_name!r}")
        return fn, f"transform {Path(target).name if kind == 'file' else target}:{fn_name}"
    kind = m.ref.kind
    if kind == "torchvision":
        return _torchvision(m.ref.target, shape), f"torchvision:{m.ref.target}'s weights' transforms"
    if kind == "timm":
        return _timm(m.module, shape), f"timm:{m.ref.target}'s data config"
    if kind == "hf":
        return _hf(m.ref.target), f"hf:{m.ref.target}'s image processor"
    raise DataError(
        f"{m.ref.text} comes with no image preprocessing deploytui knows (torchvision:, timm: and "
        "hf: models do): name one, --data FOLDER,transform=prep.py:fn (a PIL image -> its input "
        "tensor [channels, height, width])"
    )


def _open(path: Path) -> Any:
    from PIL import Image

    img = Image.open(path)
    img.load()  # decode now: a damaged file fails here, and is skipped
    return img


def _one(fn: Transform, what: str, img: Any, rel: str, name: str, want: torch.Tensor) -> torch.Tensor:
    try:
        with img:
            t = fn(img)
    except Exception as e:  # the transform's own refusal: one line naming the image
        raise DataError(f"{rel}: {what} raised {type(e).__name__}: {first_line(e)}") from None
    if not isinstance(t, torch.Tensor):
        raise DataError(f"{rel}: {what} returned a {type(t).__name__}, not a tensor")
    one = want[0]
    if t.shape != one.shape or t.dtype != one.dtype:
        raise DataError(
            f"{rel}: {what} gives {shown(t)}, one image of the model's {name} is {shown(one)} "
            f"(the input is {shown(want)})"
        )
    return t


def samples(ref: DataRef, m: LoadedModel, skipped: Skipped) -> Iterator[Sample]:
    """The folder's images, a batch of the example's batch size at a time, each labelled with
    the class indices of its images."""
    try:
        import PIL  # noqa: F401
    except ImportError:
        raise DataError("a folder of images needs Pillow: pip install pillow") from None
    name, want = image_input(m)
    fn, what = transform_for(ref, m, list(want.shape))
    folder = Path(ref.target)
    _, files = listing(folder, ref.seed)
    batch: list[torch.Tensor] = []
    labels: list[int] = []
    first, k = "", 0
    for path, label in files:
        rel = path.relative_to(folder).as_posix()
        try:
            img = _open(path)
        except Exception as e:  # unreadable (damaged, not an image): skipped, counted
            skipped.add(rel, e)
            continue
        batch.append(_one(fn, what, img, rel, name, want))
        labels.append(label)
        first = first or rel
        if len(batch) == want.shape[0]:
            yield Sample(f"image batch {k} (from {first})", {name: torch.stack(batch)}, torch.tensor(labels))
            batch, labels, first, k = [], [], "", k + 1
    skipped.dropped = len(batch)
