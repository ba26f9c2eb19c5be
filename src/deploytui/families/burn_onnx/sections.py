"""The burn-onnx family's inspector section: the Rust burn-onnx generated from the model's .onnx."""

from __future__ import annotations

from deploytui.families.burn_onnx.family import GENERATED_RUST
from deploytui.inspectors.section import Builders, code_file, one

BUILDERS: Builders = {
    GENERATED_RUST: (
        "Code",
        "code",
        lambda i: "a1.rs",
        one(lambda i: code_file("Code", i.file(), "rust", i.title or None)),
    ),
}
