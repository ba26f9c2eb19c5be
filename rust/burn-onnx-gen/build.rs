//! Generates Rust code and a .bpk from an ONNX file with burn-onnx's ModelGen, then the glue that
//! lets one `main` run any model.
//!
//! The ONNX file: $DEPLOYTUI_ONNX, else $DEPLOYTUI_ARTIFACTS/a1/a1.onnx, else
//! ../../artifacts/a1/a1.onnx (a1's, for cargo test and clippy).
//! Its external data (`<name>.onnx.data`, torch.onnx.export's default) is read from beside it.
//! Feature `embed` selects LoadStrategy::Embedded, otherwise LoadStrategy::File (whose
//! Model::default() reads the .bpk from the absolute OUT_DIR path baked in here; `from_file`
//! loads one given at run time).
//!
//! Outputs in OUT_DIR: `model/<stem>.rs` and `model/<stem>.bpk` (burn-onnx names them after the
//! ONNX file), `glue.rs` (`run_forward`, from the parsed forward signature), and the env var
//! DEPLOYTUI_MODEL_RS = the path of `model/<stem>.rs`, so the include path is fixed.

use std::path::PathBuf;

use burn_onnx::{LoadStrategy, ModelGen};

#[path = "glue.rs"]
mod glue;

fn main() {
    println!("cargo:rerun-if-env-changed=DEPLOYTUI_ONNX");
    println!("cargo:rerun-if-env-changed=DEPLOYTUI_ARTIFACTS");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=glue.rs");
    let onnx = match std::env::var_os("DEPLOYTUI_ONNX").filter(|p| !p.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => match std::env::var_os("DEPLOYTUI_ARTIFACTS").filter(|p| !p.is_empty()) {
            Some(a) => PathBuf::from(a).join("a1").join("a1.onnx"),
            None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../artifacts/a1/a1.onnx"),
        },
    };
    let onnx = std::fs::canonicalize(&onnx).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; export it first (deploytui build --only export-onnx) or set DEPLOYTUI_ONNX",
            onnx.display()
        )
    });
    println!("cargo:rerun-if-changed={}", onnx.display());
    let mut data = onnx.clone().into_os_string();
    data.push(".data");
    let data = PathBuf::from(data);
    if data.is_file() {
        println!("cargo:rerun-if-changed={}", data.display());
    }
    let stem = onnx
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("a UTF-8 ONNX file name")
        .to_string();
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

    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let model_rs = out.join("model").join(format!("{stem}.rs"));
    let code = std::fs::read_to_string(&model_rs)
        .unwrap_or_else(|e| panic!("burn-onnx wrote no {}: {e}", model_rs.display()));
    let sig = glue::parse_forward(&code)
        .unwrap_or_else(|e| panic!("{}: {e}", model_rs.display()));
    let source = format!("model/{stem}.rs");
    std::fs::write(out.join("glue.rs"), glue::glue_code(&sig, &source)).expect("write glue.rs");
    println!("cargo:rustc-env=DEPLOYTUI_MODEL_RS={}", model_rs.display());
    println!("cargo:rustc-env=DEPLOYTUI_MODEL_STEM={stem}");
}
