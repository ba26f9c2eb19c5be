"""`python -m deploytui.models.describe REF ...`: one marked JSON line per model (imports torch).

Each line is `MARK` then the model's description (name, class, parameter count, input names,
dtypes and shapes) or `{"model": REF, "error": "..."}`. A model's own code may print anything
(a config dump, a line that starts with `{`): it goes to stderr, the marked lines alone to
stdout. The light side runs it through `deploytui.models.check`, which reads only marked lines.
"""

from __future__ import annotations

import json
import sys

from deploytui.core.modelref import ModelRefError, parse
from deploytui.models.check import MARK


def main(argv: list[str]) -> int:
    from deploytui.runners.protocol import own_stdout

    own = own_stdout()
    from deploytui.models.load import ModelError, load

    worst = 0
    for text in argv:
        try:
            line = load(parse(text)).describe()
        except (ModelRefError, ModelError) as e:
            line, worst = {"model": text, "error": str(e)}, 1
        print(MARK + json.dumps(line), file=own, flush=True)
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
