"""The docs against the tree: every file, crate, program, form, build step, command and option a
README or a doc names exists; the README fits; docs/results/ is written by the tools.

What counts as a name: a backticked span or a relative link target. A span with a slash or a
source file's extension is a path (it must exist, relative to the doc, the project, src/deploytui,
rust/ or cpp/, unless it is an artifact, absolute, or a pattern); a kebab-case span is one of
ours (form, step, crate, program, feature, make target, command or option) or a name of the
tools we use (Cargo.lock's crates, pyproject's distributions, EXTERNAL); `deploytui CMD --opt`
and `make TARGET` must be real.
"""

from __future__ import annotations

import argparse
import re
import tomllib
from functools import cache
from pathlib import Path

import pytest

from deploytui.core import paths
from deploytui.families import registry
from deploytui.views.cli import main as cli
from deploytui.views.cli.common import CommandParser

ROOT = paths.ROOT
README_LIMIT = 12_500  # bytes: "at most ~12 KB"
RESULTS = ROOT / "docs" / "results"
GENERATED = "<!-- written by"

# Names of other projects' things the docs quote (flags, features, APIs): not ours to check.
EXTERNAL = {
    "load-dynamic", "default-features", "enable-new-dtags", "disable-new-dtags", "no-as-needed",
    "as-needed", "all-targets", "message-format", "new-dtags", "json-render-diagnostics",
    "find-links", "no-index", "build-override", "include-bytes", "cuda-toolkit", "x86-64",
    "ld-linux-x86-64", "e-mail", "read-only", "fault-around", "f-strings", "log-log", "up-to-date",
    "not-applicable", "run-all", "time-to-ready", "keypress-to-repaint", "torch-2", "fast-path",
    "textual-plotext", "antlr4-python3-runtime",
}  # fmt: skip
# Spans that are patterns or placeholders, not names.
PLACEHOLDER = re.compile(r"[<>{}*…=]|\bM[._]|\b(FORM|DIR|KEY|STEP|REF|NAME|RUNTIME|PROGRAM)\b")
SOURCE_EXT = {
    ".py",
    ".rs",
    ".cpp",
    ".h",
    ".c",
    ".toml",
    ".tcss",
    ".md",
    ".json",
    ".txt",
    ".lock",
    ".png",
    ".svg",
}
KEBAB = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)+$")
SPAN = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def docs() -> list[Path]:
    found = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    found += [ROOT / d / "README.md" for d in ("cpp", "rust", "artifacts", "tests/models")]
    return [p for p in found if p.is_file()]


@cache
def universe() -> frozenset[str]:
    """Every kebab-case name the project defines, and those of the tools it builds on."""
    from deploytui.builder import plan
    from deploytui.core.modelref import parse
    from deploytui.core.workspace import Workspace
    from deploytui.spec.context import BuildContext

    names = {f.key for f in registry.FORMS} | set(registry.RUNTIME_TITLES)
    steps = [s for m in ("a1", "convnet") for s in plan(BuildContext.of(Workspace.at(parse(m))))]
    names |= {s.name for s in steps}
    names |= {o.name for s in steps if s.scope == "shared" for o in s.outputs}  # the shared programs
    for manifest in (ROOT / "rust").glob("*/Cargo.toml"):
        data = tomllib.loads(manifest.read_text())
        names.add(data["package"]["name"])
        names |= {b["name"] for b in data.get("bin", [])}
        names |= set(data.get("features", {}))
    lock = tomllib.loads((ROOT / "rust" / "Cargo.lock").read_text())
    names |= {p["name"] for p in lock["package"]}
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for req in [
        *project["dependencies"],
        *(r for rs in project["optional-dependencies"].values() for r in rs),
    ]:
        names.add(re.split(r"[\[=<>!~; ]", req, maxsplit=1)[0].lower().replace("_", "-"))
    names |= make_targets() | set(commands()) | {o for opts in commands().values() for o in opts}
    names |= {p.stem for p in (ROOT / "docs").glob("*.md")}  # docs name each other
    return frozenset(names | EXTERNAL)


@cache
def make_targets() -> frozenset[str]:
    text = (ROOT / "Makefile").read_text()
    return frozenset(re.findall(r"^([a-z][\w-]*):", text, re.M))


@cache
def commands() -> dict[str, frozenset[str]]:
    """deploytui's subcommands -> their long options (without --), those of their own
    subcommands too (`target add --accept-new`); "" holds the top level's."""
    parser = cli.build_parser()

    def options(p: argparse.ArgumentParser) -> frozenset[str]:
        if isinstance(p, CommandParser):
            p.complete()  # the options it adds when used (choose's rules)
        own = {o[2:] for a in p._actions for o in a.option_strings if o.startswith("--")}
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    own |= options(sub)
        return frozenset(own)

    found = {"": frozenset(o[2:] for a in parser._actions for o in a.option_strings if o.startswith("--"))}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found[name] = options(sub)
    return found


def _is_path(span: str) -> bool:
    return " " not in span and ("/" in span or Path(span).suffix in SOURCE_EXT) and "://" not in span


def _path_problem(span: str, doc: Path) -> str:
    """ "" when the path exists, or is not one the tree holds (an artifact, a bundle's or a wheel's
    own folder, a pattern, an absolute path), else why not."""
    span = span.rstrip(".,:;)").split("#")[0].split(":")[0].removeprefix("./")
    if not span or PLACEHOLDER.search(span) or span.startswith(("/", "~", "$", ".venv", "-")):
        return ""
    if "/" not in span:  # a bare file name: one of our source files
        if Path(span).suffix not in {".py", ".cpp", ".h", ".tcss"}:
            return ""
        return "" if span in {p.name for p in tree_files()} else f"no file named {span} in the tree"
    bases = (doc.parent, ROOT, ROOT / "src" / "deploytui", ROOT / "rust", ROOT / "cpp", ROOT / "src")
    first = span.split("/")[0]
    if first in {"..", "."}:
        first = span.split("/")[1] if span.count("/") > 1 else first
    if first in {"artifacts", "bundles", "reports"} and not span.endswith("README.md"):
        return ""  # made by the build, git-ignored
    if not any((b / first).exists() for b in bases) and first not in {
        "src",
        "tests",
        "docs",
        "bench",
        "tools",
    }:
        return ""  # not rooted in the tree: inside an artifact, a bundle, a wheel
    if any((b / span).exists() for b in bases):
        return ""
    return f"{span} does not exist"


@cache
def tree_files() -> tuple[Path, ...]:
    skip = {".git", ".venv", "artifacts", "target", "__pycache__", ".hypothesis", ".pytest_cache"}
    out = []
    for p in ROOT.rglob("*"):
        if p.is_file() and not skip & set(p.relative_to(ROOT).parts):
            out.append(p)
    return tuple(out)


def problems(doc: Path) -> list[str]:
    text = doc.read_text()
    found: list[str] = []
    spans = SPAN.findall(text)
    for block in FENCE.findall(text):  # commands in code blocks are claims too
        spans += [ln.strip() for ln in block.splitlines()[1:-1] if ln.strip()]
    for span in spans:
        span = span.strip()
        for cmd, opts in re.findall(r"^(?:\$ )?deploytui ([a-z]+)((?: [^`#|]*)?)", span):
            if cmd not in commands() and cmd not in {"build", "bench"}:
                if cmd in commands()[""] or not cmd.isalpha():
                    continue
                found.append(f"`deploytui {cmd}`: no such command")
                continue
            known = commands().get(cmd, frozenset()) | commands()[""]
            found += [
                f"`deploytui {cmd} --{o}`: no such option"
                for o in re.findall(r"--([a-z][\w-]*)", opts)
                if o not in known
            ]
        for target in re.findall(r"^(?:\$ )?make ([a-z][\w-]*)", span):
            if target not in make_targets():
                found.append(f"`make {target}`: no such target")
        if _is_path(span) and doc.parent.name != "artifacts":  # that one describes what the build makes
            why = _path_problem(span, doc)
            if why:
                found.append(why)
        elif KEBAB.match(span) and span not in universe():
            found.append(f"`{span}`: not a form, step, crate, program, command or tool name we know")
    for target in LINK.findall(FENCE.sub("", text)):
        if "://" in target or target.startswith("#"):
            continue
        if not (doc.parent / target.split("#")[0]).exists():
            found.append(f"link {target} does not exist")
    return found


@pytest.mark.parametrize("doc", docs(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_name_a_doc_gives_exists(doc):
    assert not problems(doc)


def test_the_checker_catches_a_renamed_crate_program_file_and_option(tmp_path):
    doc = tmp_path / "x.md"
    doc.write_text(
        "The crate `store-deploy` builds `infer-file`; see `src/deploytui/nothing.py` and\n"
        "[this](nowhere.md); run `deploytui bench --fast` or `make everything`.\n"
        "Fine: `burn-mlp`, `burn-file`, `burn-tools`, `src/deploytui/spec/forms.py`, `make check`,\n"
        "`deploytui bench --model convnet`, `artifacts/a1/a1.bpk`, `M.bpk`.\n"
    )
    found = problems(doc)
    assert len(found) == 6, found
    assert {f.split(":")[0] for f in found} >= {"`store-deploy`", "`infer-file`", "`deploytui bench --fast`"}


def test_every_command_that_takes_a_model_takes_its_shape_and_places_too():
    """A model given after the command (`choose --model torchvision:X --input-shape ...`) takes the
    same options as before it: `choose` once refused --input-shape there."""
    with_model = {name for name, opts in commands().items() if name and "model" in opts}
    assert {"build", "bench", "choose", "ship", "report", "inspect"} <= with_model
    for name in with_model:
        assert {"input-shape", "seq-len", "artifacts", "bundles"} <= commands()[name], name
    args = cli.build_parser().parse_args(
        ["choose", "--model", "torchvision:resnet18", "--input-shape", "1x3x64x64", "--max-startup", "1s"]
    )
    assert (args.model, args.input_shape) == ("torchvision:resnet18", "1x3x64x64")


def test_the_readme_fits():
    assert len((ROOT / "README.md").read_bytes()) <= README_LIMIT


def test_results_are_written_by_the_tools_not_typed():
    for doc in sorted(RESULTS.glob("*.md")):
        assert doc.read_text().startswith(GENERATED), f"{doc.name} was not written by a tool"


def _fresh_setup():
    import importlib.util

    spec = importlib.util.spec_from_file_location("fresh_setup", ROOT / "bench" / "fresh_setup.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fresh_setup_runs_make_tests_own_lines_and_renders_its_page(tmp_path):
    """bench/fresh_setup.py in its quick mode: a phases log (with its build and pytest logs)
    becomes JSON, and the JSON the page; its phases are the lines of `make test`'s recipe."""
    import json
    import subprocess
    import sys

    bench = _fresh_setup()
    groups = bench.test_groups()
    assert [g for g, _ in groups][-1] == "test-python" and all(args for _, args in groups)
    assert {t for _, args in groups for t in args if not t.startswith("-")} <= make_targets()
    (tmp_path / "x.phases").write_text("setup rc=0 130s\nbuild rc=0 1400s\ntest-python rc=0 1500s\ndone\n")
    (tmp_path / "x.build.log").write_text(
        "[1/2] export-aoti: AOTI\n    ok (68.2 s)\n[2/2] burn-tools: b\n    ok (10.0 s)\n"
    )
    (tmp_path / "x.test-python.log").write_text(
        "12.50s call     tests/test_zoo.py::test_x[convnet]\n= 3 passed in 1490.00s =\n"
    )
    out = tmp_path / "before.json"
    cmd = [
        sys.executable,
        str(ROOT / "bench" / "fresh_setup.py"),
        "--import-phases",
        str(tmp_path / "x.phases"),
    ]
    subprocess.run([*cmd, "--label", "baseline", "--json", str(out)], check=True, capture_output=True)
    before = json.loads(out.read_text())
    assert [p["phase"] for p in before["phases"]] == ["setup", "build", "test-python"]
    assert before["phases"][1]["inside"] == {"build: torch exports": 68.2, "build: Rust steps": 10.0}
    assert before["phases"][2]["slowest"][0]["test"] == "tests/test_zoo.py::test_x[convnet]"
    page = bench.render({"phases": [{"phase": "test-python", "seconds": 600.0, "rc": 0}]}, before)
    assert page.startswith(GENERATED) and "| test-python | 25 min 00 s | 10 min 00 s | – | – |" in page
    assert "| **make test, the phases above** | 50 min 30 s | 10 min 00 s | 0 min 00 s | | |" in page


def test_the_setup_time_page_is_rendered_from_its_json():
    import json

    page, after = RESULTS / "setup-time.md", RESULTS / "setup-time.json"
    if not page.exists():
        pytest.skip("not measured yet: bench/fresh_setup.py --write")
    before = RESULTS / "setup-time-before.json"
    want = _fresh_setup().render(
        json.loads(after.read_text()), json.loads(before.read_text()) if before.exists() else None
    )
    assert page.read_text() == want


def test_no_module_is_named_after_a_standard_library_one():
    """`import profile` or `from . import types` should never be ambiguous to a reader (or to
    Python, for a script run from its folder)."""
    import sys

    clash = []
    for top in ("src", "tests", "bench", "tools"):
        for path in (ROOT / top).rglob("*.py"):
            parts = [*path.relative_to(ROOT / top).parent.parts, path.stem]
            clash += [str(path.relative_to(ROOT)) for name in parts if name in sys.stdlib_module_names]
    assert not clash


def test_report_writes_each_models_results_and_their_matrix(tmp_path, monkeypatch):
    """`deploytui report --results DIR` on stored results: one page per model, the matrix, every
    page marked as written; nothing else in DIR is touched."""
    from deploytui.views.report import write_results
    from tui_support import FIXED_RESULTS, a1_at, make_artifacts

    art = make_artifacts(tmp_path, results=FIXED_RESULTS)
    monkeypatch.setenv("DEPLOYTUI_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "results"
    out.mkdir()
    (out / "theirs.md").write_text("someone else's")
    written = write_results(out, a1_at(art))
    assert sorted(p.name for p in written) == ["a1.md", "matrix.md"]
    assert (out / "theirs.md").read_text() == "someone else's"
    assert all(p.read_text().startswith(GENERATED) for p in written)
    rows = {
        ln.split("|")[1].strip(): ln.split("|")[2].strip()
        for ln in (out / "matrix.md").read_text().splitlines()
        if ln.startswith("| ") and "---" not in ln
    }
    assert rows["torch-export"] == "✓" and rows["burn-file"] == "–"
    assert rows["cpp-torchscript"].startswith("✗ run: ")  # the failed run's stage and words
