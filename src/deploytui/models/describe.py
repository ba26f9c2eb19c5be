"""`python -m deploytui.models.describe REF ...`: one JSON line per model (imports torch).

Each line is the model's description (name, class, parameter count, input dtypes and shapes)
or `{"model": REF, "error": "..."}`. The light side runs it through `deploytui.models.check`.
"""

from __future__ import annotations

import json
import sys

from deploytui.models import ModelRefError, parse


def main(argv: list[str]) -> int:
    from deploytui.models.load import ModelError, load

    worst = 0
    for text in argv:
        try:
            line = load(parse(text)).describe()
        except (ModelRefError, ModelError) as e:
            line, worst = {"model": text, "error": str(e)}, 1
        print(json.dumps(line), flush=True)
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
