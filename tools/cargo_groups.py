"""The cargo groups of rust/Cargo.toml (`[workspace.metadata.deploytui]`), as make needs them.

    python3 tools/cargo_groups.py select     # one line per group: its target dir, -p A -p B ...
    python3 tools/cargo_groups.py early      # the same, with every program that needs no model's
                                             # file (all but the `generated` packages' ones)
    python3 tools/cargo_groups.py generated  # the groups with a `generated` package, with its
                                             # programs: their build script stops without a
                                             # model's file, once their build dependencies compiled
    python3 tools/cargo_groups.py compile LOG_DIR FLAGS...  # `make rust-deps`: cargo build
                                             # FLAGS of the early lines, then the generated ones,
                                             # each target dir's in order, the target dirs at once

A target dir is a folder under CARGO_TARGET_DIR. Standard library only: `make rust-deps` runs it
before the venv exists. The build steps read the same table through
deploytui.families.common.cargo_build.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import tomllib
from pathlib import Path

RUST = Path(__file__).resolve().parents[1] / "rust"


def programs(package: str) -> list[str]:
    """Its `[[bin]]`s, or the package's own name for a src/main.rs; none for a library."""
    data = tomllib.loads((RUST / package / "Cargo.toml").read_text())
    named = [b["name"] for b in data.get("bin", [])]
    return named or ([package] if (RUST / package / "src" / "main.rs").is_file() else [])


def lines(kind: str) -> list[tuple[str, list[str]]]:
    """(target dir, cargo's selection words) per group, for `select`, `early` or `generated`."""
    meta = tomllib.loads((RUST / "Cargo.toml").read_text())["workspace"]["metadata"]["deploytui"]
    found = []
    for group, target in zip(meta["groups"], meta["target-dirs"], strict=True):
        words = [w for package in group for w in ("-p", package)]
        generated = [p for p in group if p in meta["generated"]]
        if kind == "early":
            bins = [b for p in group if p not in generated for b in programs(p)]
            words += [w for b in bins for w in ("--bin", b)]
        elif kind == "generated":
            if not generated:
                continue
            words += [w for p in generated for b in programs(p) for w in ("--bin", b)]
        found.append((target, words))
    return found


def compile_deps(log_dir: Path, flags: list[str]) -> int:
    """Every early line's cargo build, then every generated line's (expected to stop at its build
    script, for want of a model's file), one after the other within a target dir, the target dirs
    at once; each dir's output in LOG_DIR/rust-deps-DIR.log. Prints one line per dir and the
    whole; 1 when an early build failed."""
    base = Path(os.environ["CARGO_TARGET_DIR"])
    todo: dict[str, list[tuple[list[str], bool]]] = {}
    for kind in ("early", "generated"):
        for target, words in lines(kind):
            todo.setdefault(target, []).append((words, kind == "early"))
    results: dict[str, tuple[float, str]] = {}

    def lane(target: str) -> None:
        t0, why = time.monotonic(), ""
        # cargo runs its own jobs, not make's
        env = {**os.environ, "MAKEFLAGS": "", "CARGO_TARGET_DIR": str(base / target)}
        with (log_dir / f"rust-deps-{target}.log").open("w") as log:
            for words, must in todo[target]:
                argv = ["cargo", "build", *flags, *words]
                log.write("$ " + " ".join(argv) + "\n")
                log.flush()
                code = subprocess.run(argv, check=False, cwd=RUST, env=env, stdout=log, stderr=log).returncode
                if code and must:
                    why = f"cargo build {' '.join(words)} failed (exit {code})"
                    break
                if code:
                    log.write("(expected: no ONNX file yet)\n")
        results[target] = (time.monotonic() - t0, why)

    t0 = time.monotonic()
    threads = [threading.Thread(target=lane, args=(t,)) for t in todo]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    logs = [log_dir / f"rust-deps-{t}.log" for t in todo]
    crates = sum(log.read_text(errors="replace").count("Compiling") for log in logs)
    for target, (seconds, why) in results.items():
        print(f"cargo: {target} in {_mmss(seconds)}" + (f": {why}" if why else ""))
    failed = [t for t, (_, why) in results.items() if why]
    verdict = f"the early build failed in {', '.join(failed)}" if failed else f"{crates} crates compiled"
    took = _mmss(time.monotonic() - t0)
    print(f"cargo: dependencies done in {took}, {verdict} (logs: {log_dir}/rust-deps-*.log)")
    return 1 if failed else 0


def _mmss(seconds: float) -> str:
    return f"{int(seconds) // 60}:{int(seconds) % 60:02d}"


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "compile":
        return compile_deps(Path(argv[1]), argv[2:])
    if argv not in (["select"], ["early"], ["generated"]):
        print(__doc__, file=sys.stderr)
        return 2
    for target, words in lines(argv[0]):
        print(target, " ".join(words))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
