"""One PyTorch export of one model, in its own process.

usage: python -m deploytui.families.common.export_cmd MODULE:FUNCTION OUT_DIR [--model REF] [--data SPEC]

FUNCTION is an export of a family's `exports` module (the step's `Export.function`, e.g.
`deploytui.families.onnxruntime.exports:export_onnx`): it takes the loaded model, the output
folder and the model's slug, writes its files named after the slug (`a1.onnx`,
`convnet_aoti.pt2`) and returns its facts. Every export passes the model's args and kwargs the
way its exporter takes them. Prints one JSON object on stdout (the model's own prints go to
stderr): the export's facts, its wall time, the Python warnings it raised (the TorchScript
deprecations, for instance) and tool versions. An exporter that refuses the model prints its
traceback (the step's full log) and then one line
`error: <Type>: <the exporter's own first line>`, and exits 1.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

from deploytui.core.dataref import DataRefError
from deploytui.core.dataref import parse as parse_data
from deploytui.core.modelref import DEFAULT, ModelRefError, parse
from deploytui.runners.protocol import own_stdout

FAMILIES_PACKAGE = "deploytui.families."


def exporter(path: str) -> Any:
    """The export function `MODULE:FUNCTION` names, if it is one of a family's."""
    module, _, name = path.partition(":")
    if not module.startswith(FAMILIES_PACKAGE) or not name.startswith("export_"):
        raise ValueError(f"{path!r} is not a family's export (deploytui.families.<family>.exports:export_…)")
    fn = getattr(importlib.import_module(module), name, None)
    if not callable(fn):
        raise ValueError(f"{module} has no export {name!r}")
    return fn


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _first_line(e: BaseException) -> str:
    text = ANSI.sub("", str(e))
    return f"{type(e).__name__}: " + next((ln.strip() for ln in text.splitlines() if ln.strip()), "")


def _cause(e: BaseException) -> BaseException | None:
    return e.__cause__ or (None if e.__suppress_context__ else e.__context__)


def decisive(e: BaseException) -> str:
    """The exporter's own words: the root cause's type and first line (torch.onnx wraps
    torch.export's error, for instance), after the outer type when that differs. The chain is
    followed as Python's traceback shows it: an error raised `from None` (an export that explains
    the exporter's refusal in its own message) is the root."""
    root, seen = e, {id(e)}
    while (nxt := _cause(root)) is not None and id(nxt) not in seen:
        root = nxt
        seen.add(id(root))
    line = _first_line(root)
    if root is not e and type(root) is not type(e):
        line = f"{type(e).__name__}: {line}"
    return line[:400]


def fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr, flush=True)
    return 1


def main(argv: list[str]) -> int:
    args = list(argv)
    ref_text, data_text = DEFAULT, None
    for flag in ("--model", "--data"):
        if flag in args:
            i = args.index(flag)
            value = args[i + 1] if i + 1 < len(args) else ""
            ref_text, data_text = (value, data_text) if flag == "--model" else (ref_text, value)
            del args[i : i + 2]
    if len(args) != 2:
        return fail("usage: export_cmd MODULE:FUNCTION OUT_DIR [--model REF] [--data SPEC]")
    try:
        export = exporter(args[0])
    except (ImportError, ValueError) as e:
        return fail(str(e))
    out = Path(args[1])
    out.mkdir(parents=True, exist_ok=True)
    own = own_stdout()  # the model's code may print: our one line stays alone on stdout
    t0 = time.perf_counter()
    import torch

    from deploytui.models.data_types import DataError
    from deploytui.models.load import ModelError, load

    t_import = time.perf_counter() - t0
    try:
        ref = parse(ref_text)
        data = {"data": parse_data(data_text)} if data_text is not None else {}
        m = load(ref)
    except (ModelRefError, ModelError, DataRefError) as e:
        return fail(str(e))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        t1 = time.perf_counter()
        try:
            facts = export(m, out, ref.slug, **data)
        except DataError as e:  # the user's data, refused in one line naming the sample
            return fail(f"DataError: {e}")
        except Exception as e:  # the exporter refused the model: its traceback is the log
            traceback.print_exc(file=sys.stderr)
            return fail(decisive(e))
        export_s = time.perf_counter() - t1
    seen: list[str] = []
    for w in caught:
        line = f"{w.category.__name__}: {w.message}"
        if line not in seen:
            seen.append(line)
        print(f"warning: {line}", file=sys.stderr)
    facts.update(
        torch=torch.__version__, import_s=round(t_import, 3), export_s=round(export_s, 3), warnings=seen
    )
    print(json.dumps(facts), file=own, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
