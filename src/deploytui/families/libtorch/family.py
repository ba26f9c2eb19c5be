"""C++ on libtorch: cpp-torchscript and cpp-aoti (cpp/), loading the torch family's TorchScript and
AOTInductor exports (the lean package without libtorch.so, and torchao's int8) with no Python."""

from __future__ import annotations

from deploytui.families.pytorch.family import AOTI_INT8_NOTE, aoti, aoti_int8, zip_script
from deploytui.spec.a1_page import MIB, Claim, Figure
from deploytui.spec.forms import Family, Form, Runtime, binary, int8

LIBTORCH = "libtorch"
GROUP = "C++ libtorch"
CPP_TORCHSCRIPT = "shared/bin/cpp-torchscript"
CPP_AOTI = "shared/bin/cpp-aoti"

FORMS: tuple[Form, ...] = (
    binary(
        "cpp-torchscript",
        GROUP,
        "C++ libtorch + TorchScript",
        CPP_TORCHSCRIPT,
        ("{m}/{m}_script.pt",),
        LIBTORCH,
        ("export-script", "cpp-build"),
        zip_script("{m}/{m}_script.pt"),
    ),
    binary(
        "cpp-aoti",
        GROUP,
        "C++ libtorch + AOTInductor",
        CPP_AOTI,
        ("{m}/{m}_aoti.pt2",),
        LIBTORCH,
        ("export-aoti", "cpp-build"),
        aoti("{m}/{m}_aoti.pt2"),
        "the package's .so needs libtorch.so, which loads libtorch_cuda and the CUDA stack",
    ),
    binary(
        "cpp-aoti-lean",
        GROUP,
        "C++ libtorch + AOTInductor (no libtorch.so)",
        CPP_AOTI,
        ("{m}/{m}_aoti_lean.pt2",),
        LIBTORCH,
        ("export-aoti-lean", "cpp-build"),
        aoti("{m}/{m}_aoti_lean.pt2"),
        "exported with aot_inductor.link_libtorch=False: libtorch.so and the CUDA stack stay out",
    ),
    int8(
        binary(
            "cpp-aoti-int8",
            GROUP,
            "C++ libtorch + AOTInductor, torchao int8",
            CPP_AOTI,
            ("{m}/{m}_aoti_int8.pt2",),
            LIBTORCH,
            ("export-samples", "export-aoti-int8", "cpp-build"),
            aoti_int8("{m}/{m}_aoti_int8.pt2"),
            AOTI_INT8_NOTE,
        ),
        "cpp-aoti",
    ),
)


# the reference page's figures and claims on this family's forms (deploytui.spec.a1_page)
PAGE_FIGURES = (
    Figure("start-up", "cpp-torchscript", "start-up median (min)", "145.7 ms (138.4 ms)", "start"),
    Figure("start-up", "cpp-aoti", "start-up median (min)", "129.5 ms (117.8 ms)", "start"),
    Figure("peak RSS", "cpp-torchscript", "peak RSS", "101.1 MiB", "rss"),
    Figure("peak RSS", "cpp-aoti", "peak RSS", "94.1 MiB", "rss"),
    Figure("sizes", "cpp-torchscript", "the C++ executable", "68 KiB", "file:shared/bin/cpp-torchscript"),
    Figure("sizes", "cpp-aoti", "the C++ executable", "47 KiB", "file:shared/bin/cpp-aoti"),
    Figure(
        "sizes",
        "cpp-torchscript",
        "runtime: the libtorch libraries",
        "404.2 MiB (macOS, CPU only)",
        "runtime",
    ),
    Figure("diffs", "cpp-torchscript", "max abs diff", "2.72e-10 (printed to 9 digits)", "diff"),
    Figure("diffs", "cpp-aoti", "max abs diff", "2.72e-10 (printed to 9 digits)", "diff"),
    Figure("AOTInductor's .so", "cpp-aoti", "wrapper.so in the package", "301 424 B", "aoti:bytes"),
    Figure("AOTInductor's .so", "cpp-aoti", "undefined aoti_torch_* symbols", "23", "aoti:aoti_symbols"),
)
PAGE_CLAIMS = (
    Claim(
        "no-python",
        "libtorch runtime at least ~404 MiB",
        ("cpp-torchscript",),
        "runtime",
        404 * MIB,
        "≥ ~404 MiB",
        "at-least",
    ),
    Claim(
        "no-python",
        "C++ TorchScript starts in about 120 ms",
        ("cpp-torchscript",),
        "startup",
        0.12,
        "~120 ms (145.7 ms)",
    ),
    Claim(
        "no-python",
        "C++ AOTInductor starts in about 120 ms",
        ("cpp-aoti",),
        "startup",
        0.12,
        "~120 ms (129.5 ms)",
    ),
)
PAGE_ADVICE = (
    ("no-python", "cpp-torchscript"),
    ("no-python", "cpp-aoti"),
    ("no-python", "cpp-aoti-lean"),
)  # (situation, form) the page's advice names


FAMILY = Family(
    name="libtorch",
    forms=FORMS,
    runtimes=(Runtime(LIBTORCH, "libtorch shared libraries", wheel="torch"),),
    plan="deploytui.families.libtorch.plan",
    page_figures=PAGE_FIGURES,
    page_claims=PAGE_CLAIMS,
    page_advice=PAGE_ADVICE,
)
