"""`deploytui ship FORM`: a self-contained bundle of a form; `--check` runs it isolated (bwrap)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from deploytui.spec.forms import Form


def cmd_ship(args: argparse.Namespace) -> int:
    from deploytui.core.units import human, ms
    from deploytui.families import registry
    from deploytui.scenarios.isolated import shipping
    from deploytui.ship.bundler import ShipError

    form = registry.get(args.form)
    ws = args.ws
    ref = ws.model
    if args.arch:
        return _ship_arch(args, form)
    out = args.output.resolve() if args.output else shipping.default_dir(form, ws)
    if not args.check:
        try:
            b = shipping.make(form, out, tar=args.tar, ws=ws)
        except (ShipError, OSError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        print(_bundle_line(form.key, b.manifest, b.root, b.tarball))
        return 0
    if not args.json:
        print(
            f"{form.key} ({ref.text}): bundling into {out} and running it isolated "
            "(bwrap: the bundle, /usr, no network, no home)"
        )
    fact = shipping.check(
        form,
        out,
        ws=ws,
        tar=args.tar,
        n=args.n,
        warmup=args.warmup,
        timeout_s=args.timeout,
        on_step=None if args.json else (lambda msg: print(f"  {msg}", flush=True)),
    )
    if args.json:
        import json

        print(json.dumps({"form": form.key, "model": ref.text, "isolated": fact.to_json()}, indent=1))
    else:
        size = (
            f"bundle {human(fact.unpacked_bytes or 0)} unpacked, {human(fact.compressed_bytes)} .tar.gz"
            if fact.compressed_bytes is not None
            else "no bundle"
        )
        if fact.passed:
            print(
                f"{fact.glyph} {form.key} runs isolated — {size}; start-up median "
                f"{ms(fact.startup_median_s)}, peak RSS {human(fact.peak_rss_median_bytes or 0)}, "
                f"max|diff| vs eager {fact.max_abs_diff or 0:.3g}"
            )
            if fact.sandbox_floor_s:
                print(f"  (the sandbox itself: /usr/bin/true in it takes {ms(fact.sandbox_floor_s)})")
        else:
            print(f"{fact.glyph} {form.key} does not run isolated — {size}\n  reason: {fact.reason}")
        if fact.libraries:
            print(f"  lib/: {', '.join(fact.libraries)}")
        if fact.venv_bytes:
            print(f"  its venv, made on the target from requirements.txt: {human(fact.venv_bytes)}")
        if fact.cuda_bytes:
            print(
                f"  of which CUDA's: {human(fact.cuda_bytes)} unpacked, "
                f"{human(fact.cuda_compressed_bytes or 0)} compressed (a CPU-only libtorch needs none of it)"
            )
    return 0 if fact.passed else 1


def _bundle_line(key: str, manifest: dict[str, object], root: Path, tarball: Path | None) -> str:
    from deploytui.core.units import human

    files = manifest["files"]
    assert isinstance(files, dict)
    line = (
        f"{key}: {root} — {len(files)} files, {human(float(str(manifest['unpacked_bytes'])))} unpacked, "
        f"{human(float(str(manifest['compressed_bytes'])))} as .tar.gz"
    )
    libs = manifest.get("libraries") or []
    if libs:
        assert isinstance(libs, list)
        line += f"\n  lib/: {', '.join(map(str, libs))}"
    if tarball:
        line += f"\n  wrote {tarball}"
    return line


def _ship_arch(args: argparse.Namespace, form: Form) -> int:
    """`ship FORM --arch aarch64 [--check]`: the form's bundle for that architecture; --check runs
    it in the emulated root (the emulated target) and judges it against eager."""
    from deploytui.core.units import human, ms
    from deploytui.scenarios.isolated import cross
    from deploytui.scenarios.remote import emulated
    from deploytui.ship.bundler import ShipError

    try:
        arch = cross.arch_of(args.arch)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    ws = args.ws
    out = args.output.resolve() if args.output else cross.default_dir(form, arch, ws)
    if not args.check:
        try:
            b = cross.make(form, arch, out, ws=ws, tar=args.tar)
        except (ShipError, OSError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        print(_bundle_line(f"{form.key} ({arch})", b.manifest, b.root, b.tarball))
        left = b.manifest.get("left_out") or {}
        if isinstance(left, dict) and left:
            print(f"  left out (no {arch} wheel; needed on x86-64 only): {', '.join(left)}")
        return 0
    say = None if args.json else (lambda msg: print(f"  {msg}", flush=True))
    fact = emulated.check(form, arch, ws, n=args.n, warmup=args.warmup, timeout_s=args.timeout, say=say)
    if args.json:
        import json

        print(
            json.dumps(
                {"form": form.key, "model": ws.model.text, "arch": arch, "emulated": fact.to_json()}, indent=1
            )
        )
        return 0 if fact.passed else 1
    size = f"bundle {human(fact.unpacked_bytes or 0)} unpacked, {human(fact.compressed_bytes or 0)} .tar.gz"
    if fact.passed:
        print(
            f"{fact.glyph} {form.key} ({arch}) runs in the emulated {arch} root — {size}; start-up median "
            f"{ms(fact.startup_median_s)} (emulated), peak RSS {human(fact.peak_rss_median_bytes or 0)} "
            f"(emulated), max|diff| vs eager {fact.max_abs_diff or 0:.3g}"
        )
    else:
        print(
            f"{fact.glyph} {form.key} ({arch}) does not run in the emulated root — {size}\n"
            f"  reason: {fact.reason}"
        )
    return 0 if fact.passed else 1
