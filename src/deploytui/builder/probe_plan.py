"""Probe steps, after the artifacts: each records a form's runtime facts in the manifest.

`probe-RUNTIME` for each Python runtime (the installed size of its distributions; stale when
one of their .dist-info folders changes) and `probe-KEY` for each compiled form (the libraries
one real run loads; stale when a file it ships, or the wheel its libraries come from, changes).
The report, `deploytui inspect` and the app's Artifact tab read these facts and run nothing.
"""

from __future__ import annotations

from pathlib import Path

from deploytui.families import registry
from deploytui.inspectors import InspectError, python_runtime
from deploytui.spec.context import BuildContext
from deploytui.spec.steps import Step

PKG = Path(__file__).resolve().parents[1]
CODE = (PKG / "builder" / "probe_cmd.py",)


def steps(ctx: BuildContext) -> list[Step]:
    argv = (ctx.python, "-m", "deploytui.builder.probe_cmd")
    found: dict[tuple[str, ...], tuple[Path, ...]] = {}

    def _installed(roots: tuple[str, ...]) -> tuple[Path, ...]:
        if roots not in found:
            try:
                found[roots] = tuple(python_runtime.metadata_dirs(roots))
            except InspectError:  # not installed: the probe says so when it runs
                found[roots] = ()
        return found[roots]

    out = [
        Step(
            name=f"probe-{runtime}",
            title=f"probe: installed size of {registry.RUNTIME_TITLES[runtime]}",
            argv=(*argv, "runtime", runtime),
            inputs=(*CODE, PKG / "inspectors" / "python_runtime.py", *_installed(roots)),
            outputs=(),
            timeout_s=300.0,
            scope="shared",
        )
        for runtime, roots in registry.RUNTIME_DISTRIBUTIONS.items()
    ]
    for form in registry.FORMS:
        if not form.compiled or form.probe_step in {s.name for s in out} or form.applies(ctx.model):
            continue
        wheel = registry.RUNTIME_WHEEL.get(form.runtime)
        out.append(
            Step(
                name=form.probe_step,
                title=f"probe: the libraries {form.key} loads (one run under LD_DEBUG)",
                argv=(*argv, "form", form.key, str(ctx.art), ctx.model.text),
                inputs=(
                    *CODE,
                    PKG / "inspectors" / "elf.py",
                    *(ctx.art / f for f in form.all_files(ctx.ws)),
                    *(_installed((wheel,)) if wheel else ()),
                ),
                outputs=(),
                after=form.steps,
                timeout_s=300.0,
            )
        )
    return out
