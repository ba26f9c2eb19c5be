"""choose: every constraint, ranks and ties, missing data, the Pareto front, the page's
situations and claims, on FormFacts made here (no runs, no files)."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from dataclasses import replace

import pytest

from deploytui.core import units
from deploytui.core.modelref import parse
from deploytui.core.workspace import Workspace
from deploytui.decisions import choose
from deploytui.decisions.choose import BROKEN, MET, UNKNOWN, FormFacts
from deploytui.families import registry
from deploytui.spec import manifest

MIB = 1 << 20


def fact(key: str, order: int, **kw) -> FormFacts:
    """A built form measured here: start-up, RSS and ship given in ms / MiB."""
    base = {
        "title": key,
        "runtime": "none",
        "python": False,
        "files": 1,
        "built": choose.BUILT,
        "ran": "ok",
        "runs": 5,
        "within_tol": True,
        "max_abs_diff": 0.0,
        "tolerance": "atol 1e-05, rtol 1e-05",
        "files_bytes": 3 * MIB,
        "runtime_bytes": 0,
        "serving_built": choose.BUILT,
    }
    for name, scale in (("startup_ms", 1e-3), ("rss_mib", MIB), ("files_mib", MIB), ("runtime_mib", MIB)):
        if name in kw:
            value = kw.pop(name)
            field = {"startup_ms": "startup_s", "rss_mib": "peak_rss_bytes"}.get(name)
            field = field or name.replace("_mib", "_bytes")
            base[field] = None if value is None else (value * scale if "ms" in name else int(value * scale))
    base.update(kw)
    return FormFacts(key=key, order=order, **base)


EAGER = fact(
    "torch-eager",
    0,
    runtime="python-torch",
    python=True,
    startup_ms=1200,
    rss_mib=300,
    files_mib=0.001,
    runtime_mib=1800,
)
EXPORT = fact(
    "torch-export",
    1,
    runtime="python-torch",
    python=True,
    startup_ms=2500,
    rss_mib=380,
    files_mib=0.01,
    runtime_mib=1800,
)
CPP = fact(
    "cpp-torchscript", 2, runtime="libtorch", startup_ms=130, rss_mib=100, files_mib=0.1, runtime_mib=438
)
BURN = fact("burn-embed", 3, startup_ms=3, rss_mib=3, files_mib=3, isolated=True, bundle_bytes=MIB)
TRACT = fact("tract", 4, startup_ms=9, rss_mib=8, files_mib=4, files=2)
FACTS = [EAGER, EXPORT, CPP, BURN, TRACT]


def answer(*given: tuple[str, str], facts=FACTS, rank_by: str = "") -> choose.Answer:
    return choose.choose(facts, choose.request(given, rank_by), "m")


def others(a: choose.Answer) -> dict[str, str]:
    return {v.form.key: v.why for v in a.others}


def keys(a: choose.Answer) -> list[str]:
    return [v.form.key for v in a.chosen]


def test_no_constraint_ranks_every_measured_form_by_start_up():
    a = answer()
    assert keys(a) == ["burn-embed", "tract", "cpp-torchscript", "torch-eager", "torch-export"]
    assert [v.rank for v in a.chosen] == [1, 2, 3, 4, 5] and a.ranked_by is choose.STARTUP
    assert a.others == ()


def test_no_python():
    a = answer(("no-python", ""))
    assert keys(a) == ["burn-embed", "tract", "cpp-torchscript"]
    assert others(a) == {"torch-eager": "needs Python", "torch-export": "needs Python"}


def test_runtimes_allowed():
    a = answer(("runtime", "libtorch,none"))
    assert keys(a) == ["burn-embed", "tract", "cpp-torchscript"]
    assert others(a)["torch-eager"] == "runtime python-torch not allowed"
    assert a.request.says() == "runtime libtorch or none"
    most = choose.request([("runtime", ",".join(r for r in registry.RUNTIME_TITLES if r != "python-torch"))])
    assert most.says() == "runtime not python-torch"
    with pytest.raises(ValueError, match="unknown runtime torchlib; known: python-torch"):
        choose.request([("runtime", "torchlib")])


def test_max_ship_is_model_program_and_runtime_and_ranks_by_ship():
    a = answer(("no-python", ""), ("max-ship", "50MiB"))
    assert others(a)["cpp-torchscript"] == "ship 438.1 MiB > 50.0 MiB"
    assert a.ranked_by is choose.SHIP  # the first figure the user constrained
    assert keys(a) == ["burn-embed", "tract"]  # 3 MiB, then 4 MiB
    assert choose.figure_text(choose.SHIP, CPP) == "438.1 MiB (files 102.4 KiB + runtime 438.0 MiB)"


def test_max_startup_and_max_rss():
    a = answer(("max-startup", "50ms"), ("max-rss", "5MiB"))
    assert others(a)["cpp-torchscript"] == "start-up 130.0 ms > 50.0 ms"
    assert others(a)["tract"] == "peak RSS 8.0 MiB > 5.0 MiB"
    assert keys(a) == ["burn-embed"]


def test_the_first_constraint_broken_in_the_users_order():
    assert others(answer(("max-rss", "5MiB"), ("max-startup", "50ms")))["cpp-torchscript"] == (
        "peak RSS 100.0 MiB > 5.0 MiB"
    )
    assert others(answer(("max-startup", "50ms"), ("max-rss", "5MiB")))["cpp-torchscript"] == (
        "start-up 130.0 ms > 50.0 ms"
    )


def test_p99_throughput_and_accuracy_budget_are_not_measured_yet():
    a = answer(("max-p99", "20ms@8"))
    assert not a.chosen
    why = others(a)["burn-embed"]
    assert why == "not measured yet: p99 latency at batch 8 (run deploytui bench burn-embed --batch 8)"
    assert (
        answer(("min-throughput", "500/s"))
        .others[0]
        .why.startswith("not measured yet: throughput at batch 1")
    )
    drop = answer(("max-accuracy-drop", "1%"))
    # an fp32 form within the tolerance gives up no accuracy: every form here qualifies
    assert keys(drop) and not others(drop)
    # an accuracy budget stands in for the model's tolerance
    assert [c.rule.key for c in drop.request.checks()] == ["max-accuracy-drop", "runs"]
    # a break of another constraint comes first, whatever the order
    assert others(answer(("max-p99", "20ms@8"), ("no-python", "")))["torch-eager"] == "needs Python"


def test_p99_and_throughput_come_from_the_stored_serving_cells():
    fast = replace(TRACT, serving={1: (0.0002, 9000.0), 8: (0.0005, 5000.0)})
    slow = replace(
        BURN, serving={1: (0.004, 400.0)}, serving_refused={8: "run: exit 1: error: panic: Reshape"}
    )
    a = answer(("max-p99", "1ms@8"), facts=[fast, slow, CPP])
    assert keys(a) == ["tract"]
    assert others(a)["burn-embed"] == "batch 8 refused: run: exit 1: error: panic: Reshape"
    assert others(a)["cpp-torchscript"].startswith("not measured yet: p99 latency at batch 8")
    assert (
        others(answer(("max-p99", "1ms"), facts=[fast, slow]))["burn-embed"]
        == "p99 at batch 1 4.00 ms > 1.00 ms"
    )
    by_tput = answer(("min-throughput", "300/s"), facts=[slow, fast])
    assert keys(by_tput) == ["tract", "burn-embed"]  # more is better: ranked by it
    assert [f.label for f in answer(rank_by="p99", facts=[fast, slow]).front_axes] == [
        "start-up",
        "ship",
        "p99",
    ]


def test_a_form_built_for_serving_alone_is_judged_by_its_cells():
    """Only its dynamic-batch exports exist: its serving constraint reads the cells, and the
    cells say it runs here within the tolerance; once what they ran on is gone, it is not built."""
    dyn_only = fact(
        "onnxruntime",
        5,
        built=choose.NOT_BUILT,
        built_why="not built (step export-onnx never ran): run `deploytui build`",
        ran="",
        within_tol=None,
        startup_s=None,
        serving={8: (0.0004, 20000.0)},
    )
    a = answer(("max-p99", "1ms@8"), facts=[dyn_only, TRACT])
    assert keys(a) == ["onnxruntime"]
    assert others(a)["tract"].startswith("not measured yet: p99 latency at batch 8")
    gone = replace(
        dyn_only, serving_built=choose.NOT_BUILT, serving_built_why="missing artifact(s): a1_dyn.onnx"
    )
    assert others(answer(("max-p99", "1ms@8"), facts=[gone]))["onnxruntime"].startswith("missing artifact")
    failed = replace(gone, serving={}, serving_built=choose.BUILD_FAILED, serving_built_why="failed: step x")
    assert others(answer(("max-p99", "1ms@8"), facts=[failed]))["onnxruntime"] == "failed: step x"
    # it runs here by its cells; ranked by start-up, which only a bench run as built measures
    assert keys(answer(facts=[dyn_only, TRACT])) == ["tract", "onnxruntime"]


def test_int8_variants_are_judged_by_their_budget_and_their_top1_drop():
    """A variant is judged by its budget where the tolerance judges fp32 forms; its accuracy drop
    is its measured top-1 disagreement with eager."""
    within = fact("onnxruntime-int8", 90, precision="int8", within_tol=False, within_budget=True, top1=0.875)
    outside = fact("tract-int8", 91, precision="int8", within_tol=False, within_budget=False, top1=1.0)
    hidden = fact("hidden-int8", 92, precision="int8", within_tol=False, within_budget=True, cosine=0.999)
    facts = [*FACTS, within, outside, hidden]
    plain = answer(facts=facts)
    assert "onnxruntime-int8" in keys(plain)
    assert others(plain)["tract-int8"].startswith("outside its int8 accuracy budget")
    why = others(answer(("max-accuracy-drop", "10%"), facts=facts))
    assert why["onnxruntime-int8"].startswith("accuracy drop 12")
    assert "tract-int8" not in why  # the user's accuracy budget replaces the budget check
    assert "no class-score output" in why["hidden-int8"]


def test_batched_limits_parse():
    req = choose.request([("max-p99", "20ms@8"), ("min-throughput", "1000/s")])
    assert [c.limit for c in req.constraints] == [choose.Batched(0.02, 8), choose.Batched(1000.0, 1)]
    assert [c.says() for c in req.constraints] == [
        "p99 at batch 8 ≤ 20.0 ms",
        "throughput at batch 1 ≥ 1,000/s",
    ]
    for bad in ("20ms@0", "20ms@x", "fast@8"):
        with pytest.raises(ValueError, match="--max-p99"):
            choose.request([("max-p99", bad)])
    with pytest.raises(ValueError, match="throughput 'many' not understood"):
        choose.request([("min-throughput", "many")])


def test_isolated_met_broken_and_not_checked():
    failing = replace(TRACT, isolated=False, isolated_reason="exit 101: relocation panic")
    a = answer(("isolated", ""), facts=[BURN, failing, CPP])
    assert keys(a) == ["burn-embed"]
    assert others(a) == {
        "tract": "✗ isolated: relocation panic",
        "cpp-torchscript": "not checked yet: run deploytui ship cpp-torchscript --check",
    }
    assert choose.figure_text(choose.ISOLATED, BURN) == "✓ 1.0 MiB .tar.gz"


def test_accuracy_default_tolerance_and_max_diff():
    off = replace(TRACT, within_tol=False, max_abs_diff=3e-3)
    a = answer(facts=[BURN, off])
    assert (
        others(a)["tract"] == "outputs beyond the model's tolerance: max|diff| 0.003 (atol 1e-05, rtol 1e-05)"
    )
    loose = answer(("max-diff", "1e-2"), facts=[BURN, off])  # the user's budget replaces the tolerance
    assert keys(loose) == ["burn-embed", "tract"] and loose.ranked_by is choose.DIFF
    assert others(answer(("max-diff", "1e-4"), facts=[BURN, off]))["tract"] == "max|diff| 0.003 > 0.0001"


def test_missing_data_is_named_never_guessed(tmp_path):
    never_run = replace(
        TRACT, ran="", startup_s=None, peak_rss_bytes=None, within_tol=None, max_abs_diff=None
    )
    not_built = replace(
        CPP,
        built=choose.NOT_BUILT,
        built_why="not built (step cpp-build never ran)",
        ran="",
        files_bytes=None,
    )
    failed_build = replace(
        EXPORT,
        built=choose.BUILD_FAILED,
        built_why="failed: step export-torch-export: boom",
        files_bytes=None,
    )
    failed_run = replace(EAGER, ran="failed", run_error="exit 1: ImportError", startup_s=None)
    no_probe = replace(BURN, runtime_bytes=None, runtime_missing="not probed yet: run `deploytui build`")
    not_applicable = replace(
        BURN, key="burn-st", built=choose.NOT_APPLICABLE, built_why="not applicable: Mlp only"
    )
    facts = [never_run, not_built, failed_build, failed_run, no_probe, not_applicable]
    a = answer(("max-ship", "1GiB"), facts=facts)
    assert others(a) == {
        "tract": "not measured yet: run deploytui bench tract",
        "cpp-torchscript": "not built (step cpp-build never ran)",
        # the ship is known (the build's sizes), the run is not: broken, not unknown
        "torch-export": "failed: step export-torch-export: boom",
        "torch-eager": "ship 1.8 GiB > 1.0 GiB",
        "burn-embed": "not probed yet: run `deploytui build`",
        "burn-st": "not applicable: Mlp only",
    }
    outcome = {v.form.key: v.first.outcome for v in a.others if v.first}
    assert outcome["tract"] == outcome["burn-embed"] == outcome["cpp-torchscript"] == UNKNOWN
    assert outcome["torch-export"] == outcome["burn-st"] == outcome["torch-eager"] == BROKEN
    assert others(answer(facts=[failed_run]))["torch-eager"] == "its last run failed: exit 1: ImportError"
    assert choose.figure_text(choose.STARTUP, never_run) == "–"
    # on a target, the command that measures it there
    there = others(answer(facts=[replace(never_run, target="box")]))
    assert there["tract"] == "not measured yet: run deploytui bench --target box tract"
    # for another model than the default, the command names it (it would measure a1 otherwise)
    ws = Workspace.at(parse("torchvision:shufflenet_v2_x0_5,input_shape=1x3x64x64"), tmp_path)
    other = others(answer(facts=[replace(never_run, model=ws.hint_options(), target="box")]))
    assert other["tract"] == (
        "not measured yet: run deploytui bench --model torchvision:shufflenet_v2_x0_5,input_shape=1x3x64x64"
        " --target box tract"
    )
    assert ws.command("ship", "tract", "--check") == (
        "deploytui ship --model torchvision:shufflenet_v2_x0_5,input_shape=1x3x64x64 tract --check"
    )
    assert Workspace.at(None, tmp_path).command("build") == "deploytui build"
    assert "run `deploytui build --model" in manifest.availability(registry.get("tract"), ws)


def test_hints_repeat_the_folders_the_command_line_gave(tmp_path, monkeypatch, capsys):
    """`--artifacts DIR` on the command line: every hint the command prints names DIR (the command
    it names would look in the default folder otherwise), and parses as the command it says;
    the folder from DEPLOYTUI_ARTIFACTS is left to the environment, as the next command reads it."""
    import shlex

    from deploytui.views.cli.main import build_parser, main

    art = tmp_path / "my art"
    assert main(["inspect", "onnxruntime", "--artifacts", str(art)]) == 1  # nothing built: a1.onnx missing
    out = capsys.readouterr().out
    flag = f"--artifacts {shlex.quote(str(art))}"
    hints = re.findall(r"`(deploytui [^`]+)`", out)
    assert f"not probed yet: run `deploytui build {flag}`" in out
    assert f"`deploytui ship {flag} onnxruntime --check`" in out
    assert hints and all(flag in h for h in hints), hints
    for h in hints:
        args = build_parser().parse_args(shlex.split(h)[1:])
        assert args.artifacts == art, h
    ws = Workspace.from_env(parse("tinylm"), art, environ={})
    assert ws.command("bench", "tract") == f"deploytui bench --model tinylm {flag} tract"
    assert ws.for_model(parse("convnet")).hint_options() == f"--model convnet {flag}"
    assert ws == Workspace.at(parse("tinylm"), art)  # the same folders, however they were named
    monkeypatch.setenv("DEPLOYTUI_ARTIFACTS", str(art))
    assert main(["inspect", "onnxruntime"]) == 1
    assert "not probed yet: run `deploytui build`" in capsys.readouterr().out


def test_a_qualifying_forms_missing_figures_are_listed_apart():
    unchecked = choose.choose([TRACT], choose.request([]), "m")
    assert unchecked.chosen[0].form.key == "tract"
    from deploytui.decisions import text as choose_text

    text = choose_text.render(unchecked)
    assert "Not measured yet (– above):\n  tract: not checked yet: run deploytui ship tract --check" in text


def test_ties_share_a_rank_and_fall_back_on_start_up_then_the_registry():
    twin = replace(TRACT, key="twin", order=5, files_bytes=BURN.files_bytes, startup_s=BURN.startup_s)
    late = replace(BURN, key="late", order=6)  # equal on every figure: the registry's order decides
    # twin ties on ship and start-up, its larger peak RSS puts it after both
    a = answer(("max-ship", "1GiB"), facts=[TRACT, twin, late, BURN])
    assert [(v.form.key, v.rank) for v in a.chosen] == [
        ("burn-embed", 1),
        ("late", 1),
        ("twin", 1),
        ("tract", 4),
    ]
    by_start = answer(facts=[TRACT, twin, late, BURN])
    assert [v.rank for v in by_start.chosen] == [1, 1, 1, 4]


def test_rank_by_explicitly_and_missing_rank_figures_go_last():
    assert keys(answer(rank_by="rss", facts=[CPP, TRACT, BURN])) == ["burn-embed", "tract", "cpp-torchscript"]
    by_p99 = answer(rank_by="p99", facts=[CPP, TRACT, BURN])  # none has one: start-up decides
    assert keys(by_p99) == ["burn-embed", "tract", "cpp-torchscript"] and by_p99.ranked_by is choose.P99
    # the first constraint on a figure that ranks: not the accuracy drop, the ship size
    assert choose.request([("max-accuracy-drop", "1%"), ("max-ship", "1GiB")]).ranking() is choose.SHIP
    assert choose.request([("no-python", "")]).ranking() is choose.STARTUP
    with pytest.raises(ValueError, match="cannot rank by 'speed'"):
        choose.request([], "speed")


def test_pareto_front():
    assert choose.pareto({"a": (1, 5), "b": (2, 2), "c": (3, 3), "d": (5, 1), "e": (2, 2)}) == {
        "a",
        "b",
        "d",
        "e",
    }
    a = answer()
    # burn-embed is fastest but tract ships... more; torch-eager ships less than cpp? no: start-up decides
    assert a.front() == ["burn-embed"] and [f.label for f in a.front_axes] == ["start-up", "ship"]
    small = replace(EAGER, key="tiny", runtime_bytes=0, files_bytes=1000, startup_s=0.5)
    b = answer(facts=[BURN, TRACT, small])
    assert b.front() == ["burn-embed", "tiny"]
    points = {p[0]: p for p in b.points()}
    assert points["tiny"][1:] == (0.5, 1000.0, True, True) and points["tract"][4] is False


def test_json_answer():
    a = answer(("no-python", ""), ("max-ship", "50MiB"))
    data = json.loads(json.dumps(a.to_json()))
    assert [c["rule"] for c in data["constraints"]] == ["no-python", "max-ship", "runs", "within-tol"]
    assert data["constraints"][1] == {
        "rule": "max-ship",
        "limit": 50 * MIB,
        "says": "ship ≤ 50.0 MiB",
        "given": True,
    }
    assert data["ranked_by"] == "ship" and data["pareto"]["front"] == ["burn-embed"]
    first = data["chosen"][0]
    assert first["form"] == "burn-embed" and first["rank"] == 1 and first["figures"]["isolated"] is True
    assert first["figures"]["ship_bytes"] == 3 * MIB and first["figures"]["p99_s"] is None
    assert first["figures_missing"]["p99_s"].startswith("not measured yet: p99 latency")
    cpp = next(o for o in data["others"] if o["form"] == "cpp-torchscript")
    assert cpp["breaks"] == "max-ship" and cpp["why"] == "ship 438.1 MiB > 50.0 MiB"
    assert [c["outcome"] for c in cpp["checks"]] == [MET, BROKEN, MET, MET]


def test_units_parse():
    assert units.parse_size("50MiB") == units.parse_size("50m") == 50 * MIB
    assert units.parse_size("20MB") == 20_000_000 and units.parse_size("4096") == 4096
    assert units.parse_seconds("50ms") == pytest.approx(0.05) and units.parse_seconds("1.5s") == 1.5
    assert units.parse_seconds("800us") == pytest.approx(8e-4)
    with pytest.raises(ValueError, match="size '50 parsecs' not understood"):
        units.parse_size("50 parsecs")
    with pytest.raises(ValueError, match="--max-startup: duration 'soon' not understood"):
        choose.request([("max-startup", "soon")])


def test_the_three_situations():
    answers = {s.key: choose.choose(FACTS, s.request(), "m") for s in choose.SITUATIONS}
    assert keys(answers["python"]) == ["torch-eager", "torch-export"]
    assert keys(answers["no-python"]) == ["cpp-torchscript"]
    assert keys(answers["no-runtime"]) == ["burn-embed"]  # tract is not checked isolated
    lines = choose.situation_lines(answers["python"])
    assert lines[0].endswith(", max|diff| 0, ships as one file")
    assert lines[0].startswith(
        "torch-eager (torch-eager): start-up 1200.0 ms, peak RSS 300.0 MiB, ship 1.8 GiB"
    )
    assert lines[1] == "then torch-export: start-up 2500.0 ms (2.08× torch-eager's), peak RSS +80.0 MiB"
    none = choose.choose([TRACT], choose.SITUATIONS[2].request(), "m")
    assert choose.situation_lines(none) == [
        "No form qualifies on what is stored.",
        "tract: not checked yet: run deploytui ship tract --check",
    ]


def test_the_pages_claims_against_ours():
    facts = choose.by_key(FACTS)
    judged = {c.text: choose.judge(c, facts) for c in registry.CLAIMS}
    twice = judged["starts twice as fast as torch.export"]
    assert (twice.ours, twice.verdict) == ("2.08×", choose.AGREES)
    assert judged["about 80 MiB less than torch.export"].verdict == choose.AGREES
    assert judged["C++ TorchScript starts in about 120 ms"].verdict == choose.AGREES  # 130 ms
    assert judged["bit-identical to torch.export's outputs"].verdict == choose.AGREES
    aoti = judged["starts twice as fast as AOTInductor"]
    assert aoti.verdict == choose.NOT_MEASURED and aoti.ours == "no such form in the registry"
    facts["aoti-python"] = replace(EXPORT, key="aoti-python", ran="")
    assert choose.judge(registry.CLAIMS[1], facts).ours == "not measured yet: run deploytui bench aoti-python"
    facts["torch-export"] = replace(EXPORT, startup_s=1.3)
    assert choose.judge(registry.CLAIMS[0], facts) == choose.Judged(
        "starts twice as fast as torch.export", "2× (1264.5 ÷ 659.3 ms)", "1.08×", "differs: ours is lower"
    )
    assert choose.agrees("at-least", 500 * MIB, 404 * MIB) and not choose.agrees("about", 0.2, 0.12)
    assert math.isclose(choose.ABOUT, 0.3)


def test_every_claim_and_advice_names_real_forms_and_situations():
    situations = {s.key for s in choose.SITUATIONS}
    for c in registry.CLAIMS:
        assert (
            c.situation in situations
            and c.measure in choose.MEASURES
            and set(c.forms) <= set(registry.BY_KEY)
        )
        assert c.agree in ("about", "at-least", "equal")
    for adv in registry.ADVICE:
        assert adv.situation in situations and set(adv.forms) <= set(registry.BY_KEY)
    assert [a.situation for a in registry.ADVICE] == [s.key for s in choose.SITUATIONS]


# ---- from the stores: choose_facts and `deploytui choose` -----------------------------------------


def _stored(tmp_path, monkeypatch):
    """a1's fixed artifacts (tui_support): stored runs, two probed runtimes, two ship checks."""
    from deploytui.ship import store as ship_store
    from deploytui.ship.store import ShipCheck
    from deploytui.spec import manifest
    from deploytui.spec.manifest import StepRecord, StepStatus
    from tui_support import FIXED_RESULTS, a1_at, make_artifacts

    art = make_artifacts(tmp_path, results=FIXED_RESULTS)
    monkeypatch.setenv("DEPLOYTUI_ARTIFACTS", str(art))  # for the deploytui processes a test starts
    m = manifest.load(a1_at(art))
    for step, size in (("probe-burn-embed", 0), ("probe-cpp-aoti", 438 * MIB)):
        m.steps[step] = StepRecord(StepStatus.OK, facts={"runtime_bytes": size, "libraries": [], "files": {}})
    manifest.write(a1_at(art), m)
    ship = art / "a1" / "ship.json"
    ship_store.put(ship, "burn-embed", ShipCheck(passed=True, compressed_bytes=2 * MIB))
    ship_store.put(ship, "cpp-aoti", ShipCheck(passed=False, reason="exit 127: libtorch.so: cannot open"))
    return art


def test_facts_come_from_the_stores_only(tmp_path, monkeypatch):
    from deploytui.decisions import facts as choose_facts
    from test_probe import _forbid_running
    from tui_support import a1_at

    art = _stored(tmp_path, monkeypatch)
    _forbid_running(monkeypatch)
    facts, dropped = choose_facts.read(a1_at(art))
    got = choose.by_key(facts)
    assert dropped == [] and [f.order for f in facts] == list(range(len(facts)))
    burn = got["burn-embed"]
    assert burn.startup_s == pytest.approx(3.1e-3) and burn.peak_rss_bytes == int(2.8 * MIB)
    assert (burn.files_bytes, burn.runtime_bytes, burn.isolated, burn.bundle_bytes) == (100, 0, True, 2 * MIB)
    assert got["cpp-aoti"].isolated is False and got["cpp-aoti"].runtime_bytes == 438 * MIB
    assert got["cpp-torchscript"].ran == "failed" and got["cpp-torchscript"].startup_s is None
    assert got["torch-eager"].ran == "" and got["torch-eager"].python and got["torch-eager"].isolated is None
    assert got["onnxruntime"].runtime_missing.startswith("not probed yet")
    assert got["onnxruntime"].within_tol is False  # its stored run is 3e-5 off


def test_choose_reads_the_cells_of_a_model_built_for_serving_alone(tmp_path, monkeypatch, capsys):
    """onnxruntime's fixed export was never built, its dynamic-batch export was and served a
    cell: the facts say so and `choose --max-p99 …@8` picks it by that cell."""
    from deploytui.decisions import facts as choose_facts
    from deploytui.scenarios.serving import store as serve_store
    from deploytui.spec import manifest
    from deploytui.views.cli import main as cli
    from test_serve import _cell
    from tui_support import a1_at, make_artifacts

    art = make_artifacts(tmp_path, built=("onnxruntime-native",))
    monkeypatch.setenv("DEPLOYTUI_ARTIFACTS", str(art))  # for the CLI below, as a user sets it
    ws = a1_at(art)
    m = manifest.load(ws)
    del m.steps["export-onnx"]
    m.steps["export-dyn-onnx"] = manifest.StepRecord(manifest.StepStatus.OK)
    manifest.write(ws, m)
    (art / "a1" / "a1.onnx").unlink()
    (art / "a1" / "a1_dyn.onnx").write_bytes(b"x")
    serve_store.load(ws).put("onnxruntime@b8@t1", _cell("onnxruntime", 8, 0.5))
    facts = choose.by_key(choose_facts.read(ws)[0])
    ort = facts["onnxruntime"]
    assert (ort.built, ort.serving_built) == (choose.NOT_BUILT, choose.BUILT) and 8 in ort.serving
    assert facts["tract"].serving_built == choose.NOT_BUILT  # no dynamic export: its fixed .onnx
    assert cli.main(["choose", "--model", "a1", "--max-p99", "5ms@8", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["form"] for c in data["chosen"]] == ["onnxruntime"]


def test_cli_choose(tmp_path, monkeypatch, capsys):
    from deploytui.views.cli import main as cli

    _stored(tmp_path, monkeypatch)
    assert cli.main(["choose", "--model", "a1", "--no-python", "--max-ship", "400MiB", "--chart"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        f"a1: 1 of {len(registry.FORMS)} forms meet every constraint (no Python, ship ≤ 400.0 MiB); "
        "ranked by ship\n"
    )
    assert "  1  burn-embed  3.10 ms   2.8 MiB   100 B (files 100 B + runtime 0 B)  ✓ 2.0 MiB .tar.gz" in out
    lines = dict(
        line.strip().split(None, 1)
        for line in out.splitlines()
        if line.startswith("  ") and "  " in line.strip()
    )
    assert lines["torch-export"] == "needs Python"
    assert lines["cpp-torchscript"].startswith("its last run failed: exit 101")
    assert lines["tract"].startswith("not probed yet")  # its ship size needs the runtime probe
    assert "◆ Pareto front (start-up × ship) of the qualifying forms: burn-embed" in out
    assert "a burn-embed ◆  b cpp-aoti ✗" in out  # the chart's legend

    assert cli.main(["choose", "--model", "a1", "--max-startup", "1ms", "--json"]) == 1  # none qualifies
    data = json.loads(capsys.readouterr().out)
    assert data["chosen"] == [] and data["model"] == "a1"
    why = {o["form"]: o["why"] for o in data["others"]}
    assert why["burn-embed"] == "start-up 3.10 ms > 1.00 ms"

    assert cli.main(["choose", "--model", "a1", "--max-ship", "lots"]) == 2
    assert "error: --max-ship: size 'lots' not understood" in capsys.readouterr().err


def test_only_choose_imports_its_rules(capsys):
    """choose's options (one per rule) are added when choose is used: no other command, nor the
    app through the console script, imports decisions.choose to build its parser."""
    code = (
        "import sys\n"
        "from deploytui.views.cli.main import build_parser\n"
        "p = build_parser()\n"
        "p.parse_args(['measure', '--', 'true'])\n"
        "print('OTHER', 'deploytui.decisions.choose' in sys.modules)\n"
        "a = p.parse_args(['choose', '--max-startup', '10ms', '--rank-by', 'rss'])\n"
        "print('CHOOSE', 'deploytui.decisions.choose' in sys.modules, a.given, a.rank_by)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert "OTHER False" in out.stdout, out.stdout + out.stderr[-2000:]
    assert "CHOOSE True [('max-startup', '10ms')] rss" in out.stdout, out.stdout
    from deploytui.views.cli import main as cli

    with pytest.raises(SystemExit):
        cli.main(["choose", "--help"])
    assert "--max-startup TIME" in capsys.readouterr().out  # its help lists the rules


def test_a_damaged_store_is_said_and_read_as_far_as_it_goes(tmp_path, monkeypatch, capsys):
    from deploytui.views.cli import main as cli

    art = _stored(tmp_path, monkeypatch)
    (art / "a1" / "ship.json").write_text("{not json")
    data = json.loads((art / "a1" / "results.json").read_text())
    data["forms"]["onnxruntime"]["wall_s"] = "fast"
    (art / "a1" / "results.json").write_text(json.dumps(data))
    assert cli.main(["choose", "--model", "a1", "--isolated"]) == 1
    captured = capsys.readouterr()
    assert "warning: result for 'onnxruntime' dropped" in captured.err
    assert re.search(r"\bburn-embed +not checked yet: run deploytui ship burn-embed --check", captured.out)


def test_the_pages_pick_against_ours():
    python = choose.SITUATIONS[0].request()
    agree = choose.choose(FACTS, python, "m")
    assert choose.pick_verdict(("torch-eager",), agree).verdict == choose.AGREES
    slow = replace(EAGER, startup_s=3.0)
    differs = choose.pick_verdict(("torch-eager",), choose.choose([slow, EXPORT], python, "m"))
    assert (differs.ours, differs.verdict) == ("torch-export (torch-eager ranks 2)", choose.DIFFERS)
    unrun = replace(EAGER, ran="", startup_s=None)
    unknown = choose.pick_verdict(("torch-eager",), choose.choose([unrun, EXPORT], python, "m"))
    assert unknown.verdict == choose.NOT_MEASURED
    assert unknown.ours == "torch-eager: not measured yet: run deploytui bench torch-eager"
    broken = replace(EAGER, ran="failed", run_error="exit 1", startup_s=None)
    gone = choose.pick_verdict(("torch-eager",), choose.choose([broken, EXPORT], python, "m"))
    assert gone.ours == "torch-export (torch-eager: its last run failed: exit 1)"


def test_the_reports_how_to_choose(tmp_path, monkeypatch):
    from deploytui.scenarios.startup import results
    from deploytui.spec import manifest
    from deploytui.views import report
    from test_probe import _forbid_running
    from tui_support import a1_at

    ws = a1_at(_stored(tmp_path, monkeypatch))
    _forbid_running(monkeypatch)
    text = report.markdown(ws, results.load(ws.results_path), manifest.load(ws))
    section = text[text.index("## How to choose") :]
    for s in choose.SITUATIONS:
        assert f"### {s.title}\n\n`deploytui choose --model a1 {s.flags()}`" in section
    assert (
        "`deploytui choose --model a1 --runtime none --isolated`\n\n"
        "- burn-embed (burn Mlp, weights compiled in): " in section
    )
    # a1: the page's recommendation and claims beside ours
    assert (
        "| recommended form | burn-embed, burn-file, burn-st, burn-onnx-embed, burn-onnx-bpk "
        "| burn-embed | agrees |" in section
    )
    assert "| burn starts in about 3 ms | 3.1 ms | 3.10 ms | agrees |" in section
    assert (
        "| C++ AOTInductor starts in about 120 ms | ~120 ms (129.5 ms) | 385.0 ms | differs: ours is higher |"
        in section
    )
    assert (
        "| libtorch runtime at least ~404 MiB | ≥ ~404 MiB | not probed yet: run `deploytui build` "
        "| not measured yet |" in section
    )
    data = json.loads(report.as_json(ws, results.load(ws.results_path), manifest.load(ws)))
    assert data["how_to_choose"]["no-runtime"]["chosen"][0]["form"] == "burn-embed"
    m = manifest.load(ws)
    m.model = "convnet"  # another model: the situations, not the page
    other = report.markdown(ws, results.load(ws.results_path), m)
    assert "### One file, no runtime" in other and "| recommended form |" not in other
