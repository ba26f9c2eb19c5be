"""Models nobody here wrote, as users hold them (tests/real_models.py: torchvision resnet18 and
mobilenet_v3_small, timm test_vit, a saved tiny BERT folder, GPT-2 with tied weights, T5, an LSTM
tagger), on real builds.

The corpus is written once per session (`corpus`) into the cache, so its models keep their
names, folders and artifacts from one session to the next; each test builds only the steps of
the forms it runs (`builder.steps_for`, incremental: a no-op when up to date), next to a1, whose
build brings the shared programs. The whole matrix (every form of every model) is
bench/real_models.py's, in docs/results/real-models.md.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from deploytui.core import paths
from deploytui.families import registry
from deploytui.scenarios.startup import bench
from deploytui.spec import manifest
from real_models import models, write_hf
from workspaces import A1, built

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
# what users try first: the eager form, a TorchScript and a torch.export form, ONNX in and out of Python
FIRST = ("torch-eager", "torchscript-trace", "torch-export", "onnxruntime", "onnxruntime-native")
# (model, form) -> (stage, the tool's own words) where the runtime or exporter refuses the model
# (measured: docs/results/real-models.md)
STOPS: dict[tuple[str, str], tuple[str, str]] = {
    ("t5", "onnxruntime"): ("export", "Cannot view a tensor"),  # torch.onnx's ConversionError
    ("t5", "onnxruntime-native"): ("export", "Cannot view a tensor"),
}


@pytest.fixture(scope="session")
def corpus() -> dict[str, str]:
    folder = paths.cache_dir() / "real-models"
    folder.mkdir(parents=True, exist_ok=True)
    write_hf(folder)
    return models(folder)


@pytest.fixture(scope="session")
def built_real(built_artifacts, corpus):
    """(name, form keys) -> that model's manifest, the forms' steps built once per session."""
    from deploytui.builder import run_build, steps_for
    from deploytui.spec.context import BuildContext

    done: dict[tuple[str, tuple[str, ...]], dict] = {}

    def build(name: str, keys: tuple[str, ...]) -> dict:
        if (name, keys) not in done:
            ws = built(corpus[name])
            ctx = BuildContext.of(ws)
            run_build(ctx, only=steps_for(ctx, [registry.get(k) for k in keys]))
            done[(name, keys)] = manifest.load(ws)
        return done[(name, keys)]

    return build


def _records(built_real, corpus, name: str, keys: tuple[str, ...]) -> dict:
    ws = built(corpus[name])
    m = built_real(name, keys)
    return {
        k: bench.bench_form(registry.get(k), n=1, warmup=0, repeat=1, timeout_s=600, manifest=m, ws=ws)
        for k in keys
    }


def _passes_or_stops_in_the_tools_words(name: str, key: str, rec) -> None:
    where = (name, key, rec.status, rec.stage, rec.error)
    if (name, key) in STOPS:
        stage, words = STOPS[(name, key)]
        assert rec.status == "failed" and rec.stage == stage and words in rec.error, where
        log = A1.artifacts / rec.log if rec.log else None
        assert log is None or words in log.read_text(), where
    else:
        assert rec.status == "ok" and rec.within_tol is True, where
        assert rec.stage is None and set(rec.stage_status.values()) == {"ok"}, where


@pytest.mark.spread
@pytest.mark.parametrize(
    "name", ["resnet18", "mobilenet_v3_small", "timm_test_vit", "bert", "gpt2", "t5", "lstm"]
)
def test_real_models_run_the_forms_users_try_first(built_real, corpus, name):
    records = _records(built_real, corpus, name, FIRST)
    for key, rec in records.items():
        _passes_or_stops_in_the_tools_words(name, key, rec)
    info = manifest.model_info(built(corpus[name]).model_dir)
    assert info is not None and info["unique_param_bytes"] > 0
    for key, rec in records.items():  # every form names the outputs as eager does
        if rec.outputs:
            assert [o.name for o in rec.outputs] == [o["name"] for o in info["outputs"]], (name, key)


def test_hugging_face_outputs_and_inputs_keep_their_names(built_real, corpus):
    """BERT: keyword inputs (input_ids, attention_mask) reach every form by name or in the
    exported order, and its ModelOutput comes back as last_hidden_state and pooler_output."""
    built_real("bert", FIRST)
    info = manifest.model_info(built(corpus["bert"]).model_dir) or {}
    assert [(i["name"], i["kind"]) for i in info["inputs"]] == [
        ("input_ids", "keyword"),
        ("attention_mask", "keyword"),
    ]
    assert [o["name"] for o in info["outputs"]] == ["last_hidden_state", "pooler_output"]


def test_gpt2s_tied_weights_stay_tied(built_real, corpus):
    """The eager form's safetensors holds the tied matrix once (its other name in the metadata)
    and load_model ties it again: eager and the ONNX forms match eager's logits."""
    from safetensors import safe_open

    ws = built(corpus["gpt2"])
    records = _records(
        built_real, corpus, "gpt2", ("torch-eager", "onnxruntime", "onnxruntime-native", "tract")
    )
    for key, rec in records.items():
        assert rec.status == "ok" and rec.within_tol, (key, rec.error)
        assert [o.name for o in rec.outputs] == ["logits"], key
    with safe_open(str(ws.model_dir / f"{ws.slug}.safetensors"), framework="pt") as f:
        names, meta = set(f.keys()), f.metadata() or {}
    tied = {"lm_head.weight", "transformer.wte.weight"}
    assert len(tied & names) == 1 and meta.get(next(iter(tied - names))) in tied, (names & tied, meta)


def test_a_runtimes_own_limit_is_a_staged_failure_in_its_words(built_real, corpus):
    """TorchScript's script cannot read transformers' source: the form stops at export with
    TorchScript's words, the full log one key away; nothing of deploytui's own in the line."""
    rec = _records(built_real, corpus, "bert", ("torchscript-script",))["torchscript-script"]
    assert rec.status == "failed" and rec.stage == "export", rec.error
    assert "could not get source code" in rec.error and "ModelError" not in rec.error
    assert rec.stage_status["export"] == "failed" and rec.stage_status["run"] == "skipped"
    assert "could not get source code" in (A1.artifacts / rec.log).read_text()


def _cli(*args: str, art: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, **({"DEPLOYTUI_ARTIFACTS": str(art)} if art else {})}
    return subprocess.run(
        [sys.executable, "-m", "deploytui", *args],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
        cwd=paths.ROOT,
        check=False,
    )


def test_bench_builds_what_it_needs_and_a_talking_model_works(tmp_path):
    """A model never built: `bench` builds its forms' steps first, with build's progress, then
    prints every record; the model prints JSON-looking lines, writes stderr, warns and is slow,
    and none of it reaches deploytui's own lines. --no-build keeps today's behaviour."""
    talky = f"{HERE / 'models' / 'talky.py'}:make"
    run = ("bench", "--model", talky, "torch-eager", "onnxruntime", "-n", "1", "--warmup", "0")
    res = _cli(*run, art=tmp_path / "a")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "] export-model:" in res.stdout and "] export-onnx:" in res.stdout  # the build's progress
    assert "Traceback" not in res.stderr
    doc = _cli(*run, "--json", art=tmp_path / "a")
    records = json.loads(doc.stdout)["forms"]
    assert [r["status"] for r in records] == ["ok", "ok"], doc.stderr
    assert [o["name"] for o in records[0]["outputs"]] == ["logits", "aux.0"]
    res = _cli("bench", "--model", talky, "torch-eager", "-n", "1", "--no-build", art=tmp_path / "b")
    assert res.returncode == 1 and "unavailable: not built" in res.stdout and "[1/" not in res.stdout


def test_a_hugging_face_folder_from_the_cli(built_artifacts, corpus):
    """`deploytui bench --model hf:FOLDER --seq-len 8` (the README's way in): the records name
    BERT's outputs; a Hub id instead of a folder is one line, before anything runs."""
    folder = corpus["bert"].removeprefix("hf:").split(",")[0]
    res = _cli(
        "bench",
        "--model",
        f"hf:{folder}",
        "--seq-len",
        "8",
        "torch-eager",
        "onnxruntime",
        "-n",
        "1",
        "--json",
    )
    assert res.returncode == 0, res.stderr[-2000:]
    doc = json.loads(res.stdout)
    assert [[o["name"] for o in r["outputs"]] for r in doc["forms"]] == [
        ["last_hidden_state", "pooler_output"]
    ] * 2
    res = _cli("bench", "--model", "hf:google-bert/bert-base-uncased")
    assert res.returncode == 2 and res.stdout == ""
    (line,) = res.stderr.strip().splitlines()
    assert "needs the network" in line and "downloads nothing" in line
