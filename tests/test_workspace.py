"""The Workspace: where a model's files are, made once at an entry point and passed on; its
defaults (the checkout's folders, else the user's data folder) and the CLI's --artifacts."""

from __future__ import annotations

import json
import re
from pathlib import Path

from deploytui.core import workspace
from deploytui.core.modelref import parse
from deploytui.core.workspace import Workspace
from tui_support import FIXED_RESULTS, make_artifacts

SRC = Path(workspace.__file__).resolve().parent


def test_paths_of_a_model_in_its_folder(tmp_path):
    ws = Workspace.at(parse("convnet"), tmp_path / "art", tmp_path / "b")
    assert ws.model_dir == tmp_path / "art" / "convnet" and ws.slug == "convnet"
    assert ws.shared_dir == tmp_path / "art" / "shared" and ws.bin_dir == ws.shared_dir / "bin"
    assert ws.results_path.name == "results.json" and ws.ship_path.name == "ship.json"
    assert ws.outputs_path("tract") == ws.model_dir / "outputs" / "tract.safetensors"
    assert ws.bundles_dir == tmp_path / "b" / "convnet" and ws.sweep_path == tmp_path / "art" / "sweep.json"
    other = ws.for_model(parse("a1"))
    assert other.artifacts == ws.artifacts and other.model_dir == tmp_path / "art" / "a1"
    assert ws.model.text == "convnet"  # for_model made a new value: frozen, nothing shared changes


def test_the_folders_come_from_the_arguments_then_the_environment_then_the_default(tmp_path, monkeypatch):
    env = {"DEPLOYTUI_ARTIFACTS": str(tmp_path / "env-art"), "DEPLOYTUI_BUNDLES": str(tmp_path / "env-b")}
    assert Workspace.from_env(environ=env).artifacts == tmp_path / "env-art"
    assert Workspace.from_env(environ=env).bundles == tmp_path / "env-b"
    assert Workspace.from_env(artifacts=tmp_path / "arg", environ=env).artifacts == tmp_path / "arg"
    assert Workspace.from_env(environ={}).artifacts == workspace.CHECKOUT / "artifacts"  # run from here
    assert Workspace.from_env(environ={}).model.text == "a1"
    monkeypatch.setattr(workspace, "in_checkout", lambda: False)  # an installed package
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    ws = Workspace.from_env(environ={})
    assert ws.artifacts == tmp_path / "data" / "deploytui" / "artifacts"
    assert ws.bundles == tmp_path / "data" / "deploytui" / "bundles"


def test_no_module_keeps_or_sets_a_current_model():
    """One value passed along: no module global for the model, no environment variable written
    for this process to read back (DEPLOYTUI_ARTIFACTS is read by Workspace.from_env only)."""
    offenders = []
    for f in SRC.rglob("*.py"):
        text = f.read_text()
        for n, line in enumerate(text.splitlines(), 1):
            if re.search(r"set_model|paths\.model\(|_current\b|os\.environ\[\"DEPLOYTUI_", line):
                offenders.append(f"{f.relative_to(SRC)}:{n}: {line.strip()}")
            if "ARTIFACTS_ENV" in line and f.name != "workspace.py":
                offenders.append(f"{f.relative_to(SRC)}:{n}: {line.strip()}")
    assert not offenders, offenders


def test_the_cli_reads_the_folder_given_with_artifacts(tmp_path, monkeypatch, capsys):
    from deploytui.views.cli import main as cli

    art = make_artifacts(tmp_path, results=FIXED_RESULTS)
    monkeypatch.setenv("DEPLOYTUI_ARTIFACTS", str(tmp_path / "nothing-here"))  # the flag wins
    out = tmp_path / "r.json"
    assert cli.main(["report", "--artifacts", str(art), "--format", "json", "-o", str(out)]) == 0
    assert {f["form"] for f in json.loads(out.read_text())["forms"]} == set(FIXED_RESULTS)
    assert cli.main(["--artifacts", str(art), "report", "--format", "json", "-o", str(out)]) == 0
    capsys.readouterr()
    assert cli.main(["report", "--format", "json", "-o", str(out)]) == 1  # the variable's: empty
    assert "no results yet" in capsys.readouterr().err
    assert not (tmp_path / "nothing-here").exists()


def test_a_folder_that_cannot_be_made_is_one_line_not_a_traceback(tmp_path, capsys):
    from deploytui.views.cli import main as cli

    art = make_artifacts(tmp_path, results=FIXED_RESULTS)
    blocker = tmp_path / "a-file"  # a file where the report's folder would be
    blocker.write_text("")
    assert cli.main(["report", "--artifacts", str(art), "-o", str(blocker / "r.md")]) == 1
    assert cli.main(["report", "--artifacts", str(art), "--results", str(blocker / "results")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(e.startswith("deploytui report: error: ") for e in err), err
    assert cli.main(["--artifacts", str(blocker / "artifacts"), "report"]) == 1  # its lock's folder
    assert cli.main(["--artifacts", str(blocker), "bench", "torch-eager", "-n", "1"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(e.startswith("deploytui ") and "error: " in e for e in err), err
    assert blocker.read_text() == ""
