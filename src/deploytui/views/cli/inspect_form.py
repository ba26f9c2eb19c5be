"""`deploytui inspect FORM`: what a form ships and what is inside its artifacts, as text."""

from __future__ import annotations

import argparse
import sys


def cmd_inspect(args: argparse.Namespace) -> int:
    from deploytui.families import registry
    from deploytui.spec.manifest import load as load_manifest
    from deploytui.views import form_view

    try:
        form = registry.get(args.form)
    except KeyError as e:
        print(f"error: {e.args[0]}", file=sys.stderr)
        return 2
    manifest = load_manifest(args.ws)
    print(f"{form.key}: {form.title} ({form.family})")
    if form.note:
        print(f"  {form.note}")
    errors = 0
    for sec in form_view.sections(form, manifest, args.ws):
        print(f"\n== {sec.tab}: {sec.title}")
        if sec.error:
            errors += 1
            print(f"  ! {sec.error}")
        elif sec.kind in ("table", "tree"):
            widths = [
                max([len(c)] + [len(r[i]) for r in sec.rows if i < len(r)]) for i, c in enumerate(sec.columns)
            ]
            widths[-1] = 0
            print("  " + "  ".join(c.ljust(w) for c, w in zip(sec.columns, widths, strict=False)))
            for r in sec.rows:
                print("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)))
        else:
            text = (
                sec.text if args.full or len(sec.text) < 6000 else sec.text[:6000] + "\n… (--full shows all)"
            )
            print("\n".join("  " + ln for ln in text.splitlines()))
    return 1 if errors else 0
