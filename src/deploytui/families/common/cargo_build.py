"""What a family's cargo steps (its cargo_steps module, run by cargo_cmd) are made of: `Cargo.build`
(cargo build of binaries of the rust/ workspace, with their group's packages), copying a result
into the artifacts, running a built tool, and a model-independent program built into shared/bin/.
A step fails with StepError, whose message is the step's error line.
"""

from __future__ import annotations

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

from deploytui.core import procs

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
        # does not rerun build scripts: the workspace's build scripts read the model's .bpk and .onnx
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


# A step's recipe: (cargo, the step's --out folder, --tools SHARED_BIN or None) -> its facts
Recipe = Callable[[Cargo, Path, Path | None], dict[str, Any]]


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
    # "path+file:///.../<package>#0.1.0" or "registry+...#<crate>@0.22.1"
    tail = package_id.rsplit("/", 1)[-1]
    name = tail.split("#", 1)[0]
    if "#" in tail and "@" in tail.split("#", 1)[1]:
        name = tail.split("#", 1)[1].split("@", 1)[0]
    return name


def copy(src: Path, dst: Path) -> int:
    """`src` copied to `dst` (written aside, then moved into place); returns its size."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".tmp")
    shutil.copy2(src, tmp)
    os.replace(tmp, dst)
    return dst.stat().st_size


def run(argv: list[str]) -> str:
    """A built tool run to the end (its stderr passed through); its stdout, or StepError."""
    print("$ " + " ".join(argv), file=sys.stderr, flush=True)
    child = procs.run(argv, own_group=False)
    for line in child.stderr:
        print(line, file=sys.stderr)
    if not child.ok:
        raise StepError(f"{Path(argv[0]).name} failed ({child.why}): {chr(10).join(child.stderr).strip()}")
    return child.text


def shared_program(cargo: Cargo, package: str, out: Path) -> dict[str, Any]:
    """One model-independent program into shared/bin/."""
    found = cargo.build(package)
    return {"sizes": {f"bin/{package}": copy(found["bins"][package], out / "bin" / package)}}
