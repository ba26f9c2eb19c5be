"""The reference page's own figures for A1, as the page gives them (shared/reference, "部署形态").

These are the page's numbers, taken on ANOTHER machine with its own methods: an M2 Max under
macOS 27, PyTorch 2.15.0 (CPU build), burn 0.22.1 on its Flex device, rustc 1.99.0; start-up is
the wall time of 20 runs after one warm-up, while the machine had other work (1-minute load
5 to 15); peak RSS is `/usr/bin/time -l`'s; sizes are of release, stripped binaries. Nothing here
is measured by deploytui: the report's A1 section sets ours (from the store and the manifest)
beside each of them. Each figure names what of ours it compares with (`ours`):

    start           start-up median and min of the form's stored runs
    rss             the median peak RSS of its stored runs
    file:KEY        the size the build recorded for the artifact KEY (relative to artifacts/)
    diff            its largest absolute difference from eager in its stored run
    stage:NAME      the median of its runner's stage NAME (import, load, first_forward)
    modules         how many modules its load imported; modules:PKG / torch:PKG one package
    runtime         the runtime size the build probed for it
    aoti:FIELD      its AOTInductor shared object as the build probed it (bytes, aoti_symbols)
    relocation      what its stored run says without its build-dir .bpk (else the path it reads)
"""

from __future__ import annotations

from dataclasses import dataclass

MACHINE = "M2 Max, macOS 27, PyTorch 2.15.0 (CPU), burn 0.22.1, rustc 1.99.0"


@dataclass(frozen=True)
class Figure:
    topic: str  # the report's sub-table
    form: str  # our form key it compares with
    what: str  # what the figure is
    page: str  # the page's value, as written there
    ours: str  # which of our stored facts (see the module's doc)


F = Figure
FIGURES: tuple[Figure, ...] = (
    # 启动要多久: 20 runs, spawn to exit
    F("start-up", "torch-eager", "start-up median (min)", "659.3 ms (649.4 ms)", "start"),
    F("start-up", "torchscript-script", "start-up median (min)", "682.4 ms (666.1 ms)", "start"),
    F("start-up", "torch-export", "start-up median (min)", "1264.5 ms (1244.9 ms)", "start"),
    F("start-up", "aoti-python", "start-up median (min)", "1313.5 ms (1280.6 ms)", "start"),
    F("start-up", "burn-file", "start-up median (min)", "3.5 ms (3.0 ms)", "start"),
    F("start-up", "burn-embed", "start-up median (min)", "3.1 ms (2.7 ms)", "start"),
    F("start-up", "burn-st", "start-up median (min)", "3.1 ms (2.8 ms)", "start"),
    F("start-up", "cpp-torchscript", "start-up median (min)", "145.7 ms (138.4 ms)", "start"),
    F("start-up", "cpp-aoti", "start-up median (min)", "129.5 ms (117.8 ms)", "start"),
    F("start-up", "burn-onnx-embed", "start-up min of 20", "2.9 ms", "start"),
    # 占多少内存: /usr/bin/time -l
    F("peak RSS", "torch-eager", "peak RSS", "208.7 MiB", "rss"),
    F("peak RSS", "torchscript-script", "peak RSS", "213.0 MiB", "rss"),
    F("peak RSS", "torch-export", "peak RSS", "291.4 MiB", "rss"),
    F("peak RSS", "aoti-python", "peak RSS", "290.5 MiB", "rss"),
    F("peak RSS", "cpp-torchscript", "peak RSS", "101.1 MiB", "rss"),
    F("peak RSS", "cpp-aoti", "peak RSS", "94.1 MiB", "rss"),
    F("peak RSS", "burn-file", "peak RSS", "2.8 MiB", "rss"),
    F("peak RSS", "burn-embed", "peak RSS", "2.8 MiB", "rss"),
    F("peak RSS", "burn-st", "peak RSS", "3.0 MiB", "rss"),
    F("peak RSS", "burn-onnx-embed", "peak RSS", "3.0 MiB", "rss"),
    # 交付什么: what ships, and the runtimes
    F("sizes", "torch-eager", "a1.safetensors", "540 B", "file:a1/a1.safetensors"),
    F("sizes", "torchscript-script", "a1_script.pt", "5 507 B", "file:a1/a1_script.pt"),
    F("sizes", "torchscript-trace", "a1_trace.pt", "6 666 B", "file:a1/a1_trace.pt"),
    F("sizes", "torch-export", "a1_export.pt2", "11 403 B", "file:a1/a1_export.pt2"),
    F("sizes", "aoti-python", "a1_aoti.pt2", "356 163 B", "file:a1/a1_aoti.pt2"),
    F("sizes", "cpp-torchscript", "the C++ executable", "68 KiB", "file:shared/bin/cpp-torchscript"),
    F("sizes", "cpp-aoti", "the C++ executable", "47 KiB", "file:shared/bin/cpp-aoti"),
    F("sizes", "burn-file", "a1.bpk", "1 292 B", "file:a1/a1.bpk"),
    F("sizes", "burn-file", "infer-file", "2.76 MiB", "file:shared/bin/burn-file"),
    F("sizes", "burn-embed", "infer-embed", "2.74 MiB", "file:a1/bin/burn-embed"),
    F("sizes", "burn-st", "infer-st", "2.97 MiB", "file:shared/bin/burn-st"),
    F("sizes", "burn-onnx-file", "generated binary, File", "3 078 352 B", "file:a1/bin/burn-onnx-file"),
    F(
        "sizes",
        "burn-onnx-embed",
        "generated binary, Embedded",
        "3 078 768 B",
        "file:a1/bin/burn-onnx-embed",
    ),
    F("sizes", "burn-onnx-file", "the generated a1.rs (File)", "2 198 B", "file:a1/onnx/a1.rs"),
    F("sizes", "burn-onnx-file", "burn-onnx's a1.bpk", "1 292 B", "file:a1/onnx/a1.bpk"),
    F("sizes", "onnxruntime", "a1.onnx", "4.1 KiB", "file:a1/a1.onnx"),
    F("sizes", "torch-eager", "runtime: Python + torch", "728.5 MiB", "runtime"),
    F(
        "sizes",
        "cpp-torchscript",
        "runtime: the libtorch libraries",
        "404.2 MiB (macOS, CPU only)",
        "runtime",
    ),
    # the diffs against eager
    F("diffs", "torch-eager", "max abs diff", "0", "diff"),
    F("diffs", "torchscript-script", "max abs diff", "0", "diff"),
    F("diffs", "torch-export", "max abs diff", "0", "diff"),
    F("diffs", "aoti-python", "max abs diff", "0", "diff"),
    F("diffs", "cpp-torchscript", "max abs diff", "2.72e-10 (printed to 9 digits)", "diff"),
    F("diffs", "cpp-aoti", "max abs diff", "2.72e-10 (printed to 9 digits)", "diff"),
    F("diffs", "burn-file", "max abs diff", "1.49e-8", "diff"),
    F("diffs", "burn-embed", "max abs diff", "1.49e-8", "diff"),
    F("diffs", "burn-st", "max abs diff", "1.49e-8", "diff"),
    F("diffs", "burn-onnx-file", "max abs diff", "1.49e-8", "diff"),
    F("diffs", "burn-onnx-embed", "max abs diff", "1.49e-8", "diff"),
    # Python 进程里分段计时, and the modules a load adds
    F("stages", "torch-eager", "import torch", "525.5 ms", "stage:import"),
    F("stages", "torch-eager", "load", "2.2 ms", "stage:load"),
    F("stages", "torch-eager", "first forward", "0.08 ms", "stage:first_forward"),
    F("stages", "torchscript-script", "import torch", "525.2 ms", "stage:import"),
    F("stages", "torchscript-script", "load", "5.9 ms", "stage:load"),
    F("stages", "torchscript-script", "first forward", "14.37 ms", "stage:first_forward"),
    F("stages", "torch-export", "import torch", "511.0 ms", "stage:import"),
    F("stages", "torch-export", "load", "475.4 ms", "stage:load"),
    F("stages", "torch-export", "first forward", "0.27 ms", "stage:first_forward"),
    F("stages", "aoti-python", "import torch", "512.1 ms", "stage:import"),
    F("stages", "aoti-python", "load", "482.2 ms", "stage:load"),
    F("stages", "aoti-python", "first forward", "0.61 ms", "stage:first_forward"),
    F("modules added by load", "torch-export", "modules added", "868", "modules"),
    F("modules added by load", "torch-export", "of them sympy", "420", "modules:sympy"),
    F("modules added by load", "torch-export", "of them torch.distributed", "115", "torch:torch.distributed"),
    F("modules added by load", "torch-export", "of them torch._dynamo", "97", "torch:torch._dynamo"),
    F("modules added by load", "aoti-python", "modules added", "896", "modules"),
    # AOTInductor's shared object, and the relocation lesson of burn-onnx's File strategy
    F("AOTInductor's .so", "cpp-aoti", "wrapper.so in the package", "301 424 B", "aoti:bytes"),
    F("AOTInductor's .so", "cpp-aoti", "undefined aoti_torch_* symbols", "23", "aoti:aoti_symbols"),
    F(
        "relocation",
        "burn-onnx-file",
        "Model::default() without its build-dir .bpk",
        "panic, exit 101: Failed to load burnpack file /.../out/model/a1.bpk: … No such file or directory",
        "relocation",
    ),
)


# ---- 怎么选 (how to choose): the page's three recommendations, and the claims behind them -------


@dataclass(frozen=True)
class Claim:
    """One claim of the page's "how to choose", checkable on our figures (`choose.judge`).

    `measure` (choose.MEASURES) is read from `forms`: startup, diff, runtime, isolated of the
    first form; startup-ratio (first ÷ second) and rss-delta (first − second) of two. `agree`
    says how ours is held against `page`: about (within ±30 %), at-least, equal."""

    situation: str  # a key of choose.SITUATIONS
    text: str
    forms: tuple[str, ...]
    measure: str
    page: float | bool
    page_text: str  # as the page gives it
    agree: str = "about"


@dataclass(frozen=True)
class Advice:
    """The page's recommendation for one situation: its words and the forms it names."""

    situation: str  # a key of choose.SITUATIONS
    says: str  # the page's sentence, in English (the original follows)
    original: str
    forms: tuple[str, ...]


MIB = 1 << 20
ADVICE: tuple[Advice, ...] = (
    Advice(
        "python",
        "Serving in Python with the model's code at hand: the source plus safetensors. In 2.15.0 it "
        "starts twice as fast as torch.export and AOTInductor, takes about 80 MiB less, bit-identical.",
        "要在 Python 里服务、模型代码就在手边：直接用源码加 safetensors。",
        ("torch-eager",),
    ),
    Advice(
        "no-python",
        "Leaving Python: TorchScript or AOTInductor with C++ libtorch (TorchScript is deprecated in "
        "2.15.0); the runtime carries at least ~404 MiB of libtorch and starts in about 120 ms.",
        "要脱离 Python：TorchScript 或 AOTInductor 加 C++ libtorch。",
        ("cpp-torchscript", "cpp-aoti", "cpp-aoti-lean"),
    ),
    Advice(
        "no-runtime",
        "One file that needs no runtime: burn (the model rewritten in Rust, or generated by "
        "burn-onnx); generated code ships Embedded, or with its .bpk through from_file, never "
        "relying on the build path Model::default() recorded.",
        "要一个不依赖任何运行时的文件：burn。",
        ("burn-embed", "burn-file", "burn-st", "burn-onnx-embed", "burn-onnx-bpk"),
    ),
)

C = Claim
CLAIMS: tuple[Claim, ...] = (
    C(
        "python",
        "starts twice as fast as torch.export",
        ("torch-export", "torch-eager"),
        "startup-ratio",
        2.0,
        "2× (1264.5 ÷ 659.3 ms)",
    ),
    C(
        "python",
        "starts twice as fast as AOTInductor",
        ("aoti-python", "torch-eager"),
        "startup-ratio",
        2.0,
        "2× (1313.5 ÷ 659.3 ms)",
    ),
    C(
        "python",
        "about 80 MiB less than torch.export",
        ("torch-export", "torch-eager"),
        "rss-delta",
        80 * MIB,
        "~80 MiB (291.4 − 208.7 MiB)",
    ),
    C(
        "python",
        "about 80 MiB less than AOTInductor",
        ("aoti-python", "torch-eager"),
        "rss-delta",
        80 * MIB,
        "~80 MiB (290.5 − 208.7 MiB)",
    ),
    C("python", "bit-identical to torch.export's outputs", ("torch-export",), "diff", 0.0, "0", "equal"),
    C("python", "bit-identical to AOTInductor's outputs", ("aoti-python",), "diff", 0.0, "0", "equal"),
    C(
        "no-python",
        "libtorch runtime at least ~404 MiB",
        ("cpp-torchscript",),
        "runtime",
        404 * MIB,
        "≥ ~404 MiB",
        "at-least",
    ),
    C(
        "no-python",
        "C++ TorchScript starts in about 120 ms",
        ("cpp-torchscript",),
        "startup",
        0.120,
        "~120 ms (145.7 ms)",
    ),
    C(
        "no-python",
        "C++ AOTInductor starts in about 120 ms",
        ("cpp-aoti",),
        "startup",
        0.120,
        "~120 ms (129.5 ms)",
    ),
    C("no-runtime", "burn starts in about 3 ms", ("burn-embed",), "startup", 0.0031, "3.1 ms"),
    C(
        "no-runtime",
        "burn-onnx Embedded runs moved (isolated)",
        ("burn-onnx-embed",),
        "isolated",
        True,
        "ships",
        "equal",
    ),
    C(
        "no-runtime",
        "from_file + its .bpk runs moved (isolated)",
        ("burn-onnx-bpk",),
        "isolated",
        True,
        "ships",
        "equal",
    ),
    C(
        "no-runtime",
        "Model::default()'s build path breaks when moved",
        ("burn-onnx-file",),
        "isolated",
        False,
        "panics",
        "equal",
    ),
)
