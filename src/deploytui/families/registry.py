"""The registered runtime families, and what the core reads of them.

Adding a family is one folder (deploytui/families/<name>/: family.py declaring a `Family`, its
plan, runner, inspectors) and one line below. The core (build, bench, ship, sweep, report,
choose, the app) iterates over `FAMILIES` and `FORMS` and never names a form or a family.
"""

from __future__ import annotations

from dataclasses import replace

from deploytui.families.burn.family import FAMILY as burn
from deploytui.families.burn_onnx.family import FAMILY as burn_onnx
from deploytui.families.executorch.family import FAMILY as executorch
from deploytui.families.libtorch.family import FAMILY as libtorch
from deploytui.families.onnxruntime.family import FAMILY as onnxruntime
from deploytui.families.openvino.family import FAMILY as openvino
from deploytui.families.pytorch.family import FAMILY as pytorch
from deploytui.families.tract.family import FAMILY as tract
from deploytui.spec.a1_page import SAYS, TOPICS, Advice, Claim, Figure
from deploytui.spec.forms import INSPECT_KINDS, NO_RUNTIME, Family, Form

FAMILIES: tuple[Family, ...] = (pytorch, libtorch, burn, burn_onnx, onnxruntime, tract, executorch, openvino)


def check(families: tuple[Family, ...]) -> None:
    """Refuse what the core could not handle: two forms with one key, an inspector kind that
    neither the core (forms.INSPECT_KINDS) nor a registered family (`Family.kinds`) builds."""
    kinds = {*INSPECT_KINDS, *(k for family in families for k in family.kinds)}
    keys: set[str] = set()
    for family in families:
        for form in family.forms:
            if form.key in keys:
                raise ValueError(f"form {form.key}: declared twice")
            keys.add(form.key)
            for i in form.inspect:
                if i.kind not in kinds:
                    known = ", ".join(sorted(kinds))
                    raise ValueError(f"form {form.key}: unknown inspector kind {i.kind!r}; known: {known}")


check(FAMILIES)

FORMS: tuple[Form, ...] = tuple(f for family in FAMILIES for f in family.forms)
BY_KEY: dict[str, Form] = {f.key: f for f in FORMS}
GROUPS: tuple[str, ...] = tuple(dict.fromkeys(f.family for f in FORMS))  # Form.family, as shown

_RUNTIMES = [r for family in FAMILIES for r in family.runtimes]
RUNTIME_TITLES: dict[str, str] = {
    **{r.key: r.title for r in _RUNTIMES},
    NO_RUNTIME: "none (system libraries only)",
}
# the installed distributions a Python runtime starts from (its size is their dependency closure)
RUNTIME_DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    r.key: r.distributions for r in _RUNTIMES if r.distributions
}
# the wheel whose shared libraries a compiled runtime loads (its RECORD changes with them)
RUNTIME_WHEEL: dict[str, str] = {r.key: r.wheel for r in _RUNTIMES if r.wheel}
# the modules whose `steps(ctx)` make the build plan (builder.plan)
PLANS: tuple[str, ...] = tuple(family.plan for family in FAMILIES if family.plan)
# what each Python runner ships as (deploytui.scenarios.isolated.shipping)
RUNNER_SCRIPTS: dict[str, str] = {k: v for family in FAMILIES for k, v in family.ship_scripts.items()}
# forms that bench/measure_vs_hyperfine.py cross-checks by default (quick to run many times)
CROSS_CHECK: tuple[str, ...] = tuple(k for family in FAMILIES for k in family.cross_check)
# forms whose per-forward p50 bench/serve_fidelity.py checks against an anchor, in this order
FIDELITY: tuple[tuple[str, str], ...] = tuple(p for family in FAMILIES for p in family.fidelity)

# `bench --batch` runs a form on its model files' dynamic-batch exports where the exporter makes
# one (built on demand, `Export.on_demand`): fixed file -> (dynamic file, its step, the fixed
# export step it stands in for). The fixed-shape exports stay what every other figure (a1's
# page among them) is measured on. TorchScript and eager run as they are; burn-onnx's code is
# generated from the fixed .onnx.
DYNAMIC: dict[str, tuple[str, str, str]] = {k: v for family in FAMILIES for k, v in family.dynamic.items()}

# the reference page's figures (in its topics' order), claims and advice on the registered forms
FIGURES: tuple[Figure, ...] = tuple(
    sorted((f for family in FAMILIES for f in family.page_figures), key=lambda f: TOPICS.index(f.topic))
)
CLAIMS: tuple[Claim, ...] = tuple(c for family in FAMILIES for c in family.page_claims)
ADVICE: tuple[Advice, ...] = tuple(
    replace(a, forms=tuple(k for family in FAMILIES for s, k in family.page_advice if s == a.situation))
    for a in SAYS
)


def get(key: str) -> Form:
    try:
        return BY_KEY[key]
    except KeyError:
        raise KeyError(f"unknown form {key!r}; known: {', '.join(BY_KEY)}") from None


def for_batch(form: Form) -> Form:
    """The form as `bench --batch` runs it: on the dynamic-batch exports of its model files where
    there are some (its steps then name their export steps), else the form itself."""
    swap = {
        fixed: dyn
        for fixed, (dyn, _, _) in DYNAMIC.items()
        if fixed in (*form.model_files, *form.optional_files)
    }
    if not swap:
        return form
    steps = {fixed_step: step for fixed, (_, step, fixed_step) in DYNAMIC.items() if fixed in swap}

    def sub(text: str) -> str:
        for fixed, dyn in swap.items():
            text = text.replace(fixed, dyn)
        return text

    return replace(
        form,
        model_files=tuple(sub(f) for f in form.model_files),
        optional_files=tuple(sub(f) for f in form.optional_files),
        argv=tuple(sub(a) for a in form.argv),
        steps=tuple(steps.get(s, s) for s in form.steps),
    )
