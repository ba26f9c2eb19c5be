"""The cargo groups of rust/Cargo.toml (`[workspace.metadata.deploytui]`), as make needs them.

    python3 tools/cargo_groups.py select   # one line per group: -p A -p B ...
    python3 tools/cargo_groups.py early    # the same, with every program that needs no model's
                                           # file (all but the `generated` packages' ones)
    python3 tools/cargo_groups.py generated  # the groups with a `generated` package, with its
                                           # programs: their build script stops without a
                                           # model's file, once their build dependencies compiled

Standard library only: `make rust-deps` runs it before the venv exists. The build steps read the
same table through deploytui.families.common.cargo_build.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

RUST = Path(__file__).resolve().parents[1] / "rust"


def programs(package: str) -> list[str]:
    """Its `[[bin]]`s, or the package's own name for a src/main.rs; none for a library."""
    data = tomllib.loads((RUST / package / "Cargo.toml").read_text())
    named = [b["name"] for b in data.get("bin", [])]
    return named or ([package] if (RUST / package / "src" / "main.rs").is_file() else [])


def main(argv: list[str]) -> int:
    meta = tomllib.loads((RUST / "Cargo.toml").read_text())["workspace"]["metadata"]["deploytui"]
    if argv not in (["select"], ["early"], ["generated"]):
        print(__doc__, file=sys.stderr)
        return 2
    for group in meta["groups"]:
        words = [w for package in group for w in ("-p", package)]
        generated = [p for p in group if p in meta["generated"]]
        if argv == ["early"]:
            bins = [b for p in group if p not in generated for b in programs(p)]
            words += [w for b in bins for w in ("--bin", b)]
        elif argv == ["generated"]:
            if not generated:
                continue
            words += [w for p in generated for b in programs(p) for w in ("--bin", b)]
        print(" ".join(words))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
