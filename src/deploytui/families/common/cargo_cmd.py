"""Runs one Rust build step (burn, tract): cargo build, copy the results into artifacts, run a tool.

Usage: python -m deploytui.families.common.cargo_cmd STEP --out DIR --rust RUST_DIR --target CARGO_TARGET
       [--stem SLUG --tools SHARED_BIN]
STEP is one of the build step names in deploytui.families.common.cargo. burn-tools builds the
model-independent programs into DIR/bin (artifacts/shared); the other steps work on one model:
DIR is its folder, SLUG the stem of its files (DIR/SLUG.safetensors, DIR/SLUG.onnx, ...), and
SHARED_BIN holds the `burn-convert` that burn-tools built.
cargo's progress and diagnostics go to stderr as they come; the last stdout line is one JSON
object of facts (binary sizes, tool versions, warnings).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deploytui.core import jsonio, procs
from deploytui.core.procs import tool_version

WARNING_RE = re.compile(r"^warning: (?!`[^`]+` \(.*\) generated \d+ warnings?)(.*)$")


class StepError(Exception):
    pass


@dataclass
class Cargo:
    rust: Path
    target: Path
    out: Path
    stem: str | None = None
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def build(
        self,
        *bins: str,
        features: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """cargo build --release --locked of the named binaries, selecting the packages of their
        group (rust/Cargo.toml, `[workspace.metadata.deploytui] groups`) as clippy and the tests
        do, so every build of a group unifies the same features and its dependencies compile
        once; returns {"bins": {name: path}, "out_dirs": {pkg: dir}}."""
        argv = ["cargo", "build", "--release", "--locked", "--message-format=json-render-diagnostics"]
        for package in group_of(self.rust, bins[0]):
            argv += ["-p", package]
        for b in bins:
            argv += ["--bin", b]
        if features:
            argv += ["--features", ",".join(features)]
        # the same build-script inputs for every build of one model, so that switching steps
        # does not rerun build scripts: burn-mlp embeds <m>.bpk, burn-onnx-gen generates from <m>.onnx
        full_env = {**os.environ, "CARGO_TARGET_DIR": str(self.target), **(env or {})}
        full_env.pop("DEPLOYTUI_BPK", None)
        full_env.pop("DEPLOYTUI_ONNX", None)
        if self.stem is not None:
            full_env["DEPLOYTUI_BPK"] = str(self.out / f"{self.stem}.bpk")
            full_env["DEPLOYTUI_ONNX"] = str(self.onnx)
        print("$ " + " ".join(argv), file=sys.stderr, flush=True)
        found: dict[str, Any] = {"bins": {}, "out_dirs": {}}

        # stderr: cargo's progress and the rendered diagnostics, streamed through as they come;
        # stdout: cargo's JSON messages (what it built, where build scripts wrote)
        def line(stream: str, text: str) -> None:
            if stream == "stderr":
                print(text, file=sys.stderr, flush=True)
                m = WARNING_RE.match(text)
                if m and m.group(1) not in self.warnings:
                    self.warnings.append(m.group(1))
                return
            try:
                msg = json.loads(text)
            except json.JSONDecodeError:
                print(text, file=sys.stderr, flush=True)
                return
            reason = msg.get("reason")
            if reason == "compiler-artifact" and msg.get("executable"):
                found["bins"][msg["target"]["name"]] = Path(msg["executable"])
            elif reason == "build-script-executed":
                found["out_dirs"][_package_name(msg.get("package_id", ""))] = Path(msg["out_dir"])

        # in this step's process group: the build kills the group whole
        child = procs.run(argv, cwd=self.rust, env=full_env, on_line=line, own_group=False)
        self.seconds += child.wall_s
        if not child.ok:
            raise StepError(f"cargo build of {', '.join(bins)} failed ({child.why})")
        for b in bins:
            if b not in found["bins"]:
                raise StepError(f"cargo did not report binary {b}")
        return found

    @property
    def onnx(self) -> Path:
        return self.out / f"{self.stem}.onnx"


def groups(rust: Path) -> list[list[str]]:
    """The cargo packages built together (rust/Cargo.toml's workspace metadata)."""
    data = tomllib.loads((rust / "Cargo.toml").read_text())
    found: list[list[str]] = data["workspace"]["metadata"]["deploytui"]["groups"]
    return found


def group_of(rust: Path, program: str) -> list[str]:
    """The group of the package whose binary `program` is (a `[[bin]]` name, or the package's
    own name for its src/main.rs)."""
    for manifest in sorted(rust.glob("*/Cargo.toml")):
        data = tomllib.loads(manifest.read_text())
        package = data["package"]["name"]
        if program == package or program in {b["name"] for b in data.get("bin", [])}:
            return next(g for g in groups(rust) if package in g)
    raise StepError(f"no package in {rust} has a program named {program}")


def _package_name(package_id: str) -> str:
    # "path+file:///.../burn-onnx-gen#0.1.0" or "registry+...#burn-core@0.22.1"
    tail = package_id.rsplit("/", 1)[-1]
    name = tail.split("#", 1)[0]
    if "#" in tail and "@" in tail.split("#", 1)[1]:
        name = tail.split("#", 1)[1].split("@", 1)[0]
    return name


def _copy(src: Path, dst: Path) -> int:
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".tmp")
    shutil.copy2(src, tmp)
    os.replace(tmp, dst)
    return dst.stat().st_size


def _run(argv: list[str]) -> str:
    print("$ " + " ".join(argv), file=sys.stderr, flush=True)
    child = procs.run(argv, own_group=False)
    for line in child.stderr:
        print(line, file=sys.stderr)
    if not child.ok:
        raise StepError(f"{Path(argv[0]).name} failed ({child.why}): {chr(10).join(child.stderr).strip()}")
    return child.text


def _locked_versions(rust: Path) -> dict[str, str]:
    """Versions of the burn crates that Cargo.lock pins (burn's inner crates use caret requirements)."""
    try:
        lock = tomllib.loads((rust / "Cargo.lock").read_text())
    except (OSError, ValueError):
        return {}
    wanted = {"burn", "burn-core", "burn-flex", "burn-store", "burn-capture", "burn-onnx", "onnx-ir"}
    wanted |= {"tract-onnx", "tract-core", "ort", "ort-sys"}
    return {p["name"]: p["version"] for p in lock.get("package", []) if p["name"] in wanted}


def burn_tools(cargo: Cargo, out: Path, tools: Path | None) -> dict[str, Any]:
    """burn-convert, burn-file and burn-st: an Mlp of any layout, shared by every model."""
    names = ("burn-convert", "burn-file", "burn-st")
    found = cargo.build(*names)
    return {"sizes": {f"bin/{b}": _copy(found["bins"][b], out / "bin" / b) for b in names}}


def burn_convert(cargo: Cargo, out: Path, tools: Path | None) -> dict[str, Any]:
    stem = cargo.stem
    if tools is None:
        raise StepError("--tools SHARED_BIN is needed (the burn-convert that burn-tools built)")
    bpk, tmp = out / f"{stem}.bpk", out / f"{stem}.bpk.tmp.bpk"
    _run([str(tools / "burn-convert"), str(out / f"{stem}.safetensors"), str(tmp)])
    # written aside, then moved: never half-written. burn-convert numbers the parameters
    # (burnpack stores their ids), so the bytes are reproducible; an identical .bpk is left
    # untouched, as burn-embed's build script watches its mtime.
    if bpk.is_file() and bpk.read_bytes() == tmp.read_bytes():
        tmp.unlink()
    else:
        os.replace(tmp, bpk)
    return {"sizes": {f"{stem}.bpk": bpk.stat().st_size}}


def burn_embed(cargo: Cargo, out: Path, tools: Path | None) -> dict[str, Any]:
    bpk = out / f"{cargo.stem}.bpk"
    if not bpk.is_file():
        raise StepError(f"{bpk} is missing: run burn-convert first")
    found = cargo.build("burn-embed")
    return {"sizes": {"bin/burn-embed": _copy(found["bins"]["burn-embed"], out / "bin" / "burn-embed")}}


def _onnx_build(cargo: Cargo, bin_name: str, embed: bool) -> tuple[Path, Path]:
    """cargo build of one burn-onnx-gen binary; returns (binary, OUT_DIR/model)."""
    if not cargo.onnx.is_file():
        raise StepError(f"{cargo.onnx} is missing: run export-onnx first")
    found = cargo.build(bin_name, features=("burn-onnx-gen/embed",) if embed else ())
    out_dir = found["out_dirs"].get("burn-onnx-gen")
    if out_dir is None:
        raise StepError("cargo did not report burn-onnx-gen's build-script OUT_DIR")
    return found["bins"][bin_name], out_dir / "model"


def burn_onnx(cargo: Cargo, art: Path, embed: bool) -> dict[str, Any]:
    """burn-onnx-default (Model::default()) copied as burn-onnx-file (LoadStrategy::File) or,
    built with feature `embed`, as burn-onnx-embed (LoadStrategy::Embedded)."""
    stem = cargo.onnx.stem
    exe, model = _onnx_build(cargo, "burn-onnx-default", embed)
    name = "burn-onnx-embed" if embed else "burn-onnx-file"
    sizes = {f"bin/{name}": _copy(exe, art / "bin" / name)}
    rs_name = f"{stem}_embed.rs" if embed else f"{stem}.rs"
    sizes[f"onnx/{rs_name}"] = _copy(model / f"{stem}.rs", art / "onnx" / rs_name)
    facts: dict[str, Any] = {"sizes": sizes, "out_dir": str(model.parent), "onnx": str(cargo.onnx)}
    if not embed:
        sizes[f"onnx/{stem}.bpk"] = _copy(model / f"{stem}.bpk", art / "onnx" / f"{stem}.bpk")
        facts["baked_bpk_path"] = str(model / f"{stem}.bpk")
    return facts


def burn_onnx_bpk(cargo: Cargo, art: Path) -> dict[str, Any]:
    """burn-onnx-bpk (LoadStrategy::File code, loaded with Model::from_file(MODEL_FILE)) and the
    generated .bpk copied next to it: the pair runs from anywhere."""
    stem = cargo.onnx.stem
    exe, model = _onnx_build(cargo, "burn-onnx-bpk", embed=False)
    bpk = f"bin/{stem}_onnx.bpk"
    sizes = {
        "bin/burn-onnx-bpk": _copy(exe, art / "bin" / "burn-onnx-bpk"),
        bpk: _copy(model / f"{stem}.bpk", art / bpk),
    }
    return {"sizes": sizes, "out_dir": str(model.parent), "onnx": str(cargo.onnx), "bpk": bpk}


def burn_capture(cargo: Cargo, art: Path) -> dict[str, Any]:
    found = cargo.build("burn-mlp-capture")
    exe = art / "bin" / "burn-mlp-capture"
    size = _copy(found["bins"]["burn-mlp-capture"], exe)
    out = _run([str(exe), str(art / f"{cargo.stem}.bpk"), str(art / "capture.json")])
    summary = jsonio.last_object(out)
    if summary is None and out.strip():
        last = out.strip().splitlines()[-1][:120]
        raise StepError(f"burn-mlp-capture printed no JSON summary (last line: {last!r})")
    return {"sizes": {"bin/burn-mlp-capture": size}, "capture": summary or {}}


def shared_program(cargo: Cargo, package: str, out: Path) -> dict[str, Any]:
    """One model-independent program (tract-run, ort-run) into shared/bin/."""
    found = cargo.build(package)
    return {"sizes": {f"bin/{package}": _copy(found["bins"][package], out / "bin" / package)}}


def ort_build(cargo: Cargo, out: Path) -> dict[str, Any]:
    """ort-run, with the onnxruntime wheel's library path (DEPLOYTUI_ORT_DYLIB) compiled in."""
    lib = Path(os.environ.get("DEPLOYTUI_ORT_DYLIB", ""))
    if not lib.is_file():
        raise StepError(f"no ONNX Runtime library at {lib} (is the onnxruntime wheel installed?)")
    facts = shared_program(cargo, "ort-run", out)
    return {**facts, "dylib": str(lib), "dylib_bytes": lib.stat().st_size}


def tract_optimise(cargo: Cargo, art: Path, tools: Path | None) -> dict[str, Any]:
    """tract loads, types (from the example inputs) and optimises the model's .onnx: its node
    list goes to tract_nodes.txt, and an operator tract lacks fails here with tract's own line."""
    if tools is None:
        raise StepError("--tools SHARED_BIN is needed (the tract-run that tract-build built)")
    argv = [str(tools / "tract-run"), "--nodes", str(cargo.onnx), "--inputs", str(art / "inputs.safetensors")]
    nodes = _run(argv)
    out = art / "tract_nodes.txt"
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(nodes)
    os.replace(tmp, out)
    ops = [line.split("\t")[1] for line in nodes.splitlines() if line.count("\t") >= 2]
    return {"nodes": len(ops), "ops": sorted(set(ops))}


STEPS: dict[str, Callable[[Cargo, Path, Path | None], dict[str, Any]]] = {
    "burn-tools": burn_tools,
    "burn-convert": burn_convert,
    "burn-embed": burn_embed,
    "burn-onnx-file": lambda c, a, t: burn_onnx(c, a, embed=False),
    "burn-onnx-embed": lambda c, a, t: burn_onnx(c, a, embed=True),
    "burn-onnx-bpk": lambda c, a, t: burn_onnx_bpk(c, a),
    "burn-capture": lambda c, a, t: burn_capture(c, a),
    "tract-build": lambda c, a, t: shared_program(c, "tract-run", a),
    "tract-optimise": tract_optimise,
    "ort-build": lambda c, a, t: ort_build(c, a),
}
MODEL_STEPS = set(STEPS) - {"burn-tools", "tract-build", "ort-build"}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="deploytui.families.common.cargo_cmd")
    p.add_argument("step", choices=sorted(STEPS))
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--rust", type=Path, required=True)
    p.add_argument("--target", type=Path, required=True)
    p.add_argument("--stem", default=None, help="the model's slug (every step but burn-tools)")
    p.add_argument("--tools", type=Path, default=None, help="shared/bin (burn-convert, tract-run)")
    args = p.parse_args(argv)
    out = args.out.resolve()
    if args.step in MODEL_STEPS and not args.stem:
        print(f"error: {args.step} needs --stem SLUG", file=sys.stderr)
        return 2
    cargo = Cargo(rust=args.rust, target=args.target, out=out, stem=args.stem)
    try:
        facts = STEPS[args.step](cargo, out, args.tools)
    except StepError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    facts.update(
        {
            "cargo": tool_version("cargo"),
            "rustc": tool_version("rustc"),
            "cargo_seconds": round(cargo.seconds, 1),
            "crates": _locked_versions(args.rust),
            "warnings": cargo.warnings,
        }
    )
    print(json.dumps(facts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
