//! Generates Rust code and a .bpk from the exported a1.onnx with burn-onnx's ModelGen.
//! The ONNX file: $DEPLOYTUI_ONNX, else $DEPLOYTUI_ARTIFACTS/a1.onnx, else ../../artifacts/a1.onnx.
//! Feature `embed` selects LoadStrategy::Embedded, otherwise LoadStrategy::File (whose
//! Model::default() reads the .bpk from the absolute OUT_DIR path baked in here).

use std::path::PathBuf;

use burn_onnx::{LoadStrategy, ModelGen};

fn main() {
    println!("cargo:rerun-if-env-changed=DEPLOYTUI_ONNX");
    println!("cargo:rerun-if-env-changed=DEPLOYTUI_ARTIFACTS");
    println!("cargo:rerun-if-changed=build.rs");
    let onnx = match std::env::var_os("DEPLOYTUI_ONNX").filter(|p| !p.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => match std::env::var_os("DEPLOYTUI_ARTIFACTS").filter(|p| !p.is_empty()) {
            Some(a) => PathBuf::from(a).join("a1.onnx"),
            None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../artifacts/a1.onnx"),
        },
    };
    let onnx = std::fs::canonicalize(&onnx).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; export it first (deploytui build --only export-onnx) or set DEPLOYTUI_ONNX",
            onnx.display()
        )
    });
    println!("cargo:rerun-if-changed={}", onnx.display());
    let strategy = if std::env::var_os("CARGO_FEATURE_EMBED").is_some() {
        LoadStrategy::Embedded
    } else {
        LoadStrategy::File
    };
    // ModelGen names its input in the generated header; give it relative to this crate
    // (e.g. ../../artifacts/a1.onnx) when the file is inside the repository
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let input = match manifest.join("../..").canonicalize().map(|root| onnx.strip_prefix(root)) {
        Ok(Ok(rel)) => PathBuf::from("../..").join(rel),
        _ => onnx.clone(),
    };
    ModelGen::new()
        .input(input.to_str().expect("UTF-8 path"))
        .out_dir("model/")
        .load_strategy(strategy)
        .run_from_script();
}
