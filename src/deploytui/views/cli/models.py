"""`deploytui models`: the zoo and the models built under artifacts/."""

from __future__ import annotations

import argparse
import sys


def cmd_models(args: argparse.Namespace) -> int:
    """The zoo and every model already built under artifacts/, with parameter count and inputs
    (described by `deploytui.models.describe` in a subprocess: this process never imports torch)."""
    import json

    from deploytui.core.modelref import ZOO, inputs_text
    from deploytui.models.check import describe
    from deploytui.spec import manifest

    built = manifest.built_models(args.ws.artifacts)
    lines, err = describe([*ZOO, *(m for m in built if m not in ZOO)])
    if err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps([{**d, "built": d.get("model") in built} for d in lines], indent=1))
        return 0
    for d in lines:
        name = d.get("model", "?")
        mark = f"built (artifacts/{built[name]})" if name in built else ""
        if "error" in d:
            print(f"{name:<24} error: {d['error']}")
            continue
        ins = inputs_text(d.get("inputs"))
        print(f"{name:<24} {d.get('params', 0):>10,} params  inputs {ins:<28} {mark}".rstrip())
        if name in ZOO:
            print(f"{'':<24} {ZOO[name]}")
    print(
        "\nAny model also: path/to/file.py:factory, package.module:factory, torchvision:NAME, timm:NAME,\n"
        "hf:FOLDER (a saved Hugging Face model), hf-config:CONFIG.json (random weights); the library\n"
        "models need deploytui's models extra (pip install -e '.[models]'); nothing is downloaded."
    )
    # a stored model whose file has gone since (a model in /tmp) is listed with its error; only a
    # zoo model that does not load fails the command
    return 1 if any("error" in d and d.get("model") in ZOO for d in lines) else 0
