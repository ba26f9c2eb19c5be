"""What is stored of one form for one model (`FormFacts`), the states its build can be in and a
check's outcomes."""

from __future__ import annotations

from dataclasses import dataclass, field

MET, BROKEN, UNKNOWN = "met", "broken", "unknown"
# a form's build state, as FormFacts.built holds it
BUILT, NOT_APPLICABLE, BUILD_FAILED, NOT_BUILT = "built", "not-applicable", "failed", "not-built"


@dataclass(frozen=True)
class FormFacts:
    """What is stored of one form for one model on this machine (None: nothing stored)."""

    key: str
    title: str
    runtime: str  # a runtime key of the registry (registry.RUNTIME_TITLES)
    python: bool  # its runtime is a Python interpreter with packages
    files: int  # how many files ship (model files + program)
    order: int  # its place in the registry: the last tie-break
    target: str = ""  # where its runs were measured: a target's name, "" for this machine
    model: str = ""  # `--model REF` etc. for a hint's command ("" for the default: Workspace.hint_options)
    built: str = NOT_BUILT  # BUILT, NOT_APPLICABLE, BUILD_FAILED or NOT_BUILT
    built_why: str = ""  # why it is not built (availability's words)
    ran: str = ""  # the stored run: "ok", "failed", or "" when none is stored
    run_error: str = ""
    runs: int = 0  # counted runs of the stored run
    measured_at: str | None = None
    startup_s: float | None = None  # median wall time, spawn to exit
    peak_rss_bytes: float | None = None  # median peak RSS
    max_abs_diff: float | None = None  # against eager
    within_tol: bool | None = None
    tolerance: str = ""  # "atol 1e-05, rtol 1e-05"
    files_bytes: int | None = None  # model files + program, as the build recorded them
    runtime_bytes: int | None = None  # the runtime as the build probed it
    runtime_missing: str = ""  # why there is no runtime size
    isolated: bool | None = None  # the last `deploytui ship KEY --check` passed
    isolated_reason: str = ""
    bundle_bytes: int | None = None  # the bundle's .tar.gz
    # the precision axis: a variant (int8) is judged by its accuracy budget, not the tolerance
    precision: str = "fp32"
    within_budget: bool | None = None  # a variant's stored run: within its accuracy budget
    top1: float | None = None  # a variant's least top-1 agreement with eager (class-score outputs)
    cosine: float | None = None  # a variant's least cosine similarity with eager
    # the task's metric on the user's labelled data (`--data`): eager's top-1 minus this form's
    task_drop: float | None = None
    task_drop_ci: tuple[float, float] | None = None  # its confidence interval
    task_data: str = ""  # the data it was measured on (or asked for, when task_missing)
    task_missing: bool = False  # `--data` was asked for and its stored run has no score on it
    # `bench --batch` cells: per batch size (p99 s, items/s), the best over the thread counts run
    serving: dict[int, tuple[float, float]] = field(default_factory=dict)
    serving_refused: dict[int, str] = field(default_factory=dict)  # batch -> why no cell ran there
    # the build state of what the cells run on (its dynamic-batch exports where it has them,
    # forms.for_batch), judged like `built`: a form built only for serving is measured by its cells
    serving_built: str = NOT_BUILT
    serving_built_why: str = ""
