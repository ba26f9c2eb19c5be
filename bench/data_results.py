"""Issue 31's table from a real run: a model that learned something benched with `--data` of its
held-out data, every form (or those named) scored on the evaluation part with eager's beside it,
the drop and its interval; then its page of docs/results written from the stored results (the
report's "Task metric on your data" table: form, top-1, eager, drop, CI, rows, ship, start-up).
`--set digits` (the default): the digits CNN (tests/models/digits_cnn.py, trained at load time on
scikit-learn's digits) on its held-out digits; `--set char_lm`: the character LM
(tests/models/char_lm.py, trained on standard-library text) on its held-out text, perplexity
beside top-1.

usage: .venv/bin/python bench/data_results.py [--set digits|char_lm] [--quick] [-n N] [--out DIR] [FORM ...]

It runs `deploytui bench --model ... --data ... --json` (building what the forms need), prints
each form's top-1, eager's and the drop's interval (and perplexities), writes DIR/<slug>.md
(default docs/results) and prints a JSON object last: per form its `task` (the record's).
`--quick`: one counted run per form. Exits 1 when the bench does.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from deploytui.core import paths
from deploytui.core.dataref import parse as parse_data
from deploytui.core.modelref import parse
from deploytui.core.workspace import Workspace
from deploytui.scenarios.startup import results
from deploytui.views.report.results import model_page

ROOT = Path(__file__).resolve().parents[1]
SETS = {  # --set: (the model's file, the data's file), each with its factory
    "digits": (ROOT / "tests" / "models" / "digits_cnn.py", ROOT / "tests" / "models" / "digits.py"),
    "char_lm": (ROOT / "tests" / "models" / "char_lm.py", ROOT / "tests" / "models" / "text.py"),
}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("forms", nargs="*", help="form keys (default: every form)")
    ap.add_argument("-n", type=int, default=5, help="counted start-up runs per form (default 5)")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "results")
    ap.add_argument("--quick", action="store_true", help="one counted run per form (-n 1)")
    ap.add_argument("--set", choices=sorted(SETS), default="digits", help="the model and its data")
    args = ap.parse_args(argv)
    if args.quick:
        args.n = 1
    model_file, data_file = SETS[args.set]
    model, data = f"{model_file}:make", f"{data_file}:samples"
    cmd = [paths.python(), "-m", "deploytui", "bench", *args.forms, "--model", model, "--data", data]
    done = subprocess.run([*cmd, "-n", str(args.n), "--json"], stdout=subprocess.PIPE, text=True, check=False)
    if not done.stdout.strip():
        return done.returncode or 1
    forms = json.loads(done.stdout)["forms"]
    for f in forms:
        t = f.get("task")
        if t is None:
            print(f"{f['form']:<26} no score: {f.get('error')}")
            continue
        ppl = (
            f"  perplexity {t['perplexity']:.3f} (eager {t['eager_perplexity']:.3f})"
            if t.get("perplexity")
            else ""
        )
        print(
            f"{f['form']:<26} top-1 {t['value']:.2%}  eager {t['eager']:.2%}  drop {t['drop'] * 100:+.2f} pt "
            f"[{t['drop_low'] * 100:+.2f}, {t['drop_high'] * 100:+.2f}]  on {t['rows']} rows{ppl}"
        )
    ws = Workspace.from_env(parse(model)).with_data(parse_data(data))
    args.out.mkdir(parents=True, exist_ok=True)
    page = args.out / f"{ws.slug}.md"
    page.write_text(model_page(ws, results.load(ws.results_path)))
    print(f"wrote {page}")
    print(json.dumps({"model": model, "data": data, "forms": {f["form"]: f.get("task") for f in forms}}))
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
