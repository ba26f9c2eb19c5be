"""Record a form's runtime facts at build time, so that no reader has to run anything:
`python -m deploytui.builder.probe_cmd runtime RUNTIME` (a Python runtime: its installed
distributions and their size) or `... form KEY ART` (a compiled form: run once under
LD_DEBUG=libs, the shared libraries it loads and their size, and for an AOTInductor package its
shared object's size and undefined aoti_torch_* symbols; `... form KEY ART MODEL` runs it on
that model's inputs).

Prints one JSON object as its last stdout line; the build keeps it as the probe step's `facts`
in the manifest (`manifest.runtime_facts` reads it back). A compiled form's facts name the
files probed (size, mtime, sha256), so a reader can tell when they no longer describe them.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any


def probe_runtime(runtime: str) -> dict[str, Any]:
    from deploytui.families import registry
    from deploytui.inspectors import python_runtime

    dists = python_runtime.closure(registry.RUNTIME_DISTRIBUTIONS[runtime])
    return {
        "probe": "distributions",
        "runtime": runtime,
        "runtime_bytes": sum(d.bytes for d in dists),
        "distributions": [{"name": d.name, "version": d.version, "bytes": d.bytes} for d in dists],
    }


def probe_form(key: str, art: Path, model_text: str | None = None) -> dict[str, Any]:
    import tempfile

    from deploytui.core.hashing import file_record
    from deploytui.core.modelref import parse
    from deploytui.core.runenv import runner_env
    from deploytui.core.workspace import Workspace
    from deploytui.families import registry
    from deploytui.inspectors import InspectError, elf

    form = registry.get(key)
    ws = Workspace.at(parse(model_text), art)  # the build's artifacts folder and model, as given
    files = {str(p.relative_to(ws.artifacts)): file_record(p) for p in form.ship_paths(ws)}
    # in this step's process group: the build kills the group (program included) on cancel/timeout
    with tempfile.TemporaryDirectory() as tmp:
        argv = form.run_command(Path(tmp) / "outputs.safetensors", 0, ws)
        run = elf.loaded_libraries(argv, env=runner_env(), timeout_s=120, own_group=False)
        # an AOTInductor package's shared object: its size, and the aoti_torch_* symbols it
        # leaves to the libtorch of the process that loads it (the reference page counts 23)
        objects = [
            {"package": pt2.name, "member": so.name, "bytes": so.stat().st_size}
            | {"aoti_symbols": len(elf.undefined_symbols(so).aoti)}
            for pt2 in form.ship_paths(ws)
            if pt2.suffix == ".pt2"
            for so in elf.aoti_shared_object(pt2, Path(tmp) / pt2.stem)
        ]
    if run.returncode != 0:
        tail = (run.stderr.strip().splitlines() or [""])[-1]
        raise InspectError(
            f"{key}: the program failed while listing its libraries (exit {run.returncode}): {tail[:200]}"
        )
    return {
        "probe": "libraries",
        "runtime": form.runtime,
        "runtime_bytes": elf.runtime_size(run.libraries),
        "libraries": [
            {"name": lib.name, "path": lib.path, "size": lib.size, "system": lib.system, "exists": lib.exists}
            for lib in run.libraries
        ],
        "files": files,
        **({"aoti_objects": objects} if objects else {}),
    }


def main(argv: list[str]) -> int:
    from deploytui.inspectors import InspectError

    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    try:
        if argv[:1] == ["runtime"] and len(argv) == 2:
            facts = probe_runtime(argv[1])
        elif argv[:1] == ["form"] and len(argv) in (3, 4):
            facts = probe_form(argv[1], Path(argv[2]), argv[3] if len(argv) == 4 else None)
        else:
            print("usage: probe_cmd runtime RUNTIME | probe_cmd form KEY ART [MODEL]", file=sys.stderr)
            return 2
    except (InspectError, OSError, KeyError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(json.dumps({**facts, "probed_at": started}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
