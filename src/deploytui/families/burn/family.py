"""burn: the hand-written burn Mlp (rust/burn-mlp), a twin of a1 and the mlp family only: the
weights read from a .bpk or PyTorch's safetensors at run time, or compiled in."""

from __future__ import annotations

from deploytui.spec.a1_page import Claim, Figure
from deploytui.spec.forms import MODEL_SOURCE, NO_RUNTIME, SAFETENSORS_HEADER, Family, Form, Inspect, binary

BURN_GRAPHIR = "burn-graphir"  # Graph: burn's GraphIr captured on Device::capture
GROUP = "burn"
BURN_FILE = "shared/bin/burn-file"
BURN_ST = "shared/bin/burn-st"
BURN_EMBED = "{m}/bin/burn-embed"
INSPECT = (Inspect(MODEL_SOURCE, "rust/burn-mlp/src/lib.rs"), Inspect(BURN_GRAPHIR, "{m}/capture.json"))

FORMS: tuple[Form, ...] = (
    binary(
        "burn-file",
        GROUP,
        "burn Mlp, .bpk read at run time",
        BURN_FILE,
        ("{m}/{m}.bpk",),
        NO_RUNTIME,
        ("burn-convert", "burn-tools"),
        INSPECT,
        mlp_only=True,
    ),
    binary(
        "burn-embed",
        GROUP,
        "burn Mlp, weights compiled in",
        BURN_EMBED,
        (),
        NO_RUNTIME,
        ("burn-embed",),
        INSPECT,
        "weights compiled in with include_bytes!: ships as one file",
        mlp_only=True,
    ),
    binary(
        "burn-st",
        GROUP,
        "burn Mlp, PyTorch safetensors read",
        BURN_ST,
        ("{m}/{m}.safetensors",),
        NO_RUNTIME,
        ("export-model", "burn-tools"),
        (Inspect(SAFETENSORS_HEADER, "{m}/{m}.safetensors"), *INSPECT),
        mlp_only=True,
    ),
)


# the reference page's figures and claims on this family's forms (deploytui.spec.a1_page)
PAGE_FIGURES = (
    Figure("start-up", "burn-file", "start-up median (min)", "3.5 ms (3.0 ms)", "start"),
    Figure("start-up", "burn-embed", "start-up median (min)", "3.1 ms (2.7 ms)", "start"),
    Figure("start-up", "burn-st", "start-up median (min)", "3.1 ms (2.8 ms)", "start"),
    Figure("peak RSS", "burn-file", "peak RSS", "2.8 MiB", "rss"),
    Figure("peak RSS", "burn-embed", "peak RSS", "2.8 MiB", "rss"),
    Figure("peak RSS", "burn-st", "peak RSS", "3.0 MiB", "rss"),
    Figure("sizes", "burn-file", "a1.bpk", "1 292 B", "file:a1/a1.bpk"),
    Figure("sizes", "burn-file", "infer-file", "2.76 MiB", "file:shared/bin/burn-file"),
    Figure("sizes", "burn-embed", "infer-embed", "2.74 MiB", "file:a1/bin/burn-embed"),
    Figure("sizes", "burn-st", "infer-st", "2.97 MiB", "file:shared/bin/burn-st"),
    Figure("diffs", "burn-file", "max abs diff", "1.49e-8", "diff"),
    Figure("diffs", "burn-embed", "max abs diff", "1.49e-8", "diff"),
    Figure("diffs", "burn-st", "max abs diff", "1.49e-8", "diff"),
)
PAGE_CLAIMS = (
    Claim("no-runtime", "burn starts in about 3 ms", ("burn-embed",), "startup", 0.0031, "3.1 ms"),
)
PAGE_ADVICE = (
    ("no-runtime", "burn-embed"),
    ("no-runtime", "burn-file"),
    ("no-runtime", "burn-st"),
)  # (situation, form) the page's advice names


FAMILY = Family(
    name="burn",
    forms=FORMS,
    plan="deploytui.families.burn.plan",
    cross_check=("burn-embed",),
    kinds=(BURN_GRAPHIR,),
    sections="deploytui.families.burn.sections",
    page_figures=PAGE_FIGURES,
    page_claims=PAGE_CLAIMS,
    page_advice=PAGE_ADVICE,
)
