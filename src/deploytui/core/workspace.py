"""Where one model's files live: the `Workspace` value (the artifacts folder, the bundles folder and
the model), made once at an entry point (the CLI's `--artifacts`/`--model`, the app's model
switch, a bench script) and passed to everything that reads or writes those files. There is no
current model and no current artifacts folder anywhere else: a job keeps the workspace it started
with whatever the app shows meanwhile.

Layout under `artifacts`: `<slug>/` per model (manifest, exports, binaries, results, inputs,
reference, ship verdicts, serving cells), `shared/` for the model-independent programs, and
`sweep.json`. Bundles go to `bundles/<slug>/<form>/`.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from deploytui.core.modelref import DEFAULT as DEFAULT_MODEL
from deploytui.core.modelref import ModelRef, parse

if TYPE_CHECKING:
    from deploytui.core.dataref import DataRef

PACKAGE = Path(__file__).resolve().parents[1]  # src/deploytui/
CHECKOUT = PACKAGE.parents[1]  # the source checkout when run from one (src/deploytui/ in it)
SHARED = "shared"  # artifacts/shared/: the model-independent programs, built once for every model
SWEEP = "sweep.json"  # artifacts/sweep.json: the sweep's points, across models
ARTIFACTS_ENV = "DEPLOYTUI_ARTIFACTS"
BUNDLES_ENV = "DEPLOYTUI_BUNDLES"


def in_checkout() -> bool:
    """Run from a source checkout (an editable install), not from an installed package."""
    return PACKAGE.parent.name == "src" and (CHECKOUT / "pyproject.toml").is_file()


def data_dir() -> Path:
    """Where the artifacts and bundles go by default: the checkout, else the user's data folder
    ($XDG_DATA_HOME/deploytui, ~/.local/share/deploytui)."""
    if in_checkout():
        return CHECKOUT
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "deploytui"


def hint(options: str, command: str, *words: str) -> str:
    """A hint's command line, `deploytui COMMAND OPTIONS WORDS` (empty words left out): for
    `Workspace.command`, and for facts kept without their workspace (choose's FormFacts.model)."""
    return " ".join(w for w in ("deploytui", command, options, *words) if w)


@dataclass(frozen=True)
class Workspace:
    artifacts: Path  # the artifacts root (absolute)
    model: ModelRef
    bundles: Path  # the bundles root (absolute): <slug>/<form>/
    data: DataRef | None = None  # the user's samples (`--data`): the build's evaluation and calibration sets
    # the folders named on the command line (`from_env`: "artifacts", "bundles"): a hint names
    # them too, so the command it gives finds these folders
    named: frozenset[str] = dataclasses.field(default=frozenset(), compare=False)

    @classmethod
    def at(
        cls,
        model: ModelRef | None = None,
        artifacts: Path | str | None = None,
        bundles: Path | str | None = None,
    ) -> Workspace:
        """A workspace for `model` (default a1) under `artifacts` and `bundles` (default: the
        checkout's artifacts/ and bundles/, else the user's data folder's)."""
        base = data_dir()
        return cls(
            artifacts=Path(artifacts or base / "artifacts").expanduser().resolve(),
            model=model or parse(None),
            bundles=Path(bundles or base / "bundles").expanduser().resolve(),
        )

    @classmethod
    def from_env(
        cls,
        model: ModelRef | None = None,
        artifacts: Path | str | None = None,
        bundles: Path | str | None = None,
        environ: Mapping[str, str] = os.environ,
    ) -> Workspace:
        """`at`, the folders not given taken from DEPLOYTUI_ARTIFACTS / DEPLOYTUI_BUNDLES: read
        here only, at an entry point (the CLI, a bench script), never by library code. The
        folders given are `named`; those from the environment are left to it."""
        named = frozenset(k for k, v in (("artifacts", artifacts), ("bundles", bundles)) if v)
        ws = cls.at(model, artifacts or environ.get(ARTIFACTS_ENV), bundles or environ.get(BUNDLES_ENV))
        return dataclasses.replace(ws, named=named)

    def for_model(self, model: ModelRef) -> Workspace:
        """The same folders, another model (its data, `--data`, is this model's only: dropped)."""
        return dataclasses.replace(self, model=model, data=self.data if model == self.model else None)

    def with_data(self, data: DataRef | None) -> Workspace:
        """The same model and folders, judged and calibrated on `data` (None: drawn samples)."""
        return dataclasses.replace(self, data=data)

    def hint_options(self) -> str:
        """The options a hint's command needs to act on this model in these folders: `--model
        REF` (none for the default model), `--artifacts DIR`/`--bundles DIR` for the folders
        named on the command line (absolute: the hint works from any folder)."""
        words = [] if self.model.text == DEFAULT_MODEL else ["--model", self.model.text]
        for name, path in (("artifacts", self.artifacts), ("bundles", self.bundles)):
            words += [f"--{name}", str(path)] if name in self.named else []
        return shlex.join(words)

    def command(self, command: str, *words: str) -> str:
        """`deploytui COMMAND [--model REF] [--artifacts DIR] WORDS` as a hint for this model."""
        return hint(self.hint_options(), command, *words)

    @property
    def slug(self) -> str:
        return self.model.slug

    @property
    def model_dir(self) -> Path:
        """artifacts/<slug>/: one model's manifest, results, inputs, reference, exports, binaries."""
        return self.artifacts / self.model.slug

    @property
    def shared_dir(self) -> Path:
        return self.artifacts / SHARED

    @property
    def bin_dir(self) -> Path:
        return self.shared_dir / "bin"

    @property
    def results_path(self) -> Path:
        return self.model_dir / "results.json"

    @property
    def reference_path(self) -> Path:
        """Eager's outputs (output_0, ...), written by the build's export-model step."""
        return self.model_dir / "reference.safetensors"

    @property
    def inputs_path(self) -> Path:
        return self.model_dir / "inputs.safetensors"

    def outputs_path(self, form_key: str) -> Path:
        """The last run's outputs of a form (the Diff view recomputes from them)."""
        return self.model_dir / "outputs" / f"{form_key}.safetensors"

    @property
    def sample_set_path(self) -> Path:
        """What the evaluation set is (export-samples' set.json: the data, its split, fingerprint)."""
        return self.model_dir / "accuracy" / "set.json"

    @property
    def ship_path(self) -> Path:
        """Each form's last isolated check of its bundle (`deploytui ship FORM --check`)."""
        return self.model_dir / "ship.json"

    def ship_path_for(self, arch: str | None) -> Path:
        """The verdicts on the model's bundles for another architecture (`ship --arch`, `bench
        --target` on a host of it): ship-<arch>.json; None: this machine's ship.json."""
        return self.model_dir / f"ship-{arch}.json" if arch else self.ship_path

    def build_path_for(self, arch: str) -> Path:
        """`deploytui build --arch`'s last line per form for another architecture: build-<arch>.json."""
        return self.model_dir / f"build-{arch}.json"

    @property
    def serve_path(self) -> Path:
        """The serving cells (`deploytui bench --batch/--threads`)."""
        return self.model_dir / "serve.json"

    @property
    def sweep_path(self) -> Path:
        """The sweep's points, across models (`deploytui sweep`)."""
        return self.artifacts / SWEEP

    @property
    def targets_path(self) -> Path:
        """The named targets and their facts, across models (`deploytui target add`)."""
        return self.artifacts / "targets.json"

    def target_dir(self, target: str) -> Path:
        """What was measured on a target for this model: its results.json and the outputs."""
        return self.model_dir / "targets" / target

    def results_on(self, target: str | None) -> Path:
        """The stored runs of this model on a target (`bench --target`), or on this machine."""
        return self.target_dir(target) / "results.json" if target else self.results_path

    def measured_targets(self) -> list[str]:
        """The targets with stored runs of this model, by name."""
        folder = self.model_dir / "targets"
        if not folder.is_dir():
            return []
        return sorted(p.name for p in folder.iterdir() if (p / "results.json").is_file())

    def serve_on(self, target: str | None) -> Path:
        """The serving cells of this model on a target (`bench --target … --batch`), or here."""
        return self.target_dir(target) / "serve.json" if target else self.serve_path

    @property
    def bundles_dir(self) -> Path:
        """Where `deploytui ship` writes the model's bundles by default (bundles/<slug>/<form>/)."""
        return self.bundles / self.model.slug
