//! store-onnx-bpk: the generated model loaded with `Model::from_file(MODEL_FILE)` from a .bpk
//! given at run time (it ships next to the binary), so the binary runs anywhere; needs
//! LoadStrategy::File (the default, not feature `embed`).
//!
//! `store-onnx-bpk MODEL.bpk --inputs IN.safetensors --outputs OUT.safetensors [--repeat K]`

use runner_io::{ModelArg, fail, quiet_panics};

#[cfg(not(feature = "embed"))]
fn main() {
    use burn::prelude::*;
    use store_onnx::model::{Model, run_forward};

    let cli = runner_io::cli(ModelArg::Required("MODEL.BPK"));
    quiet_panics();
    let path = cli.model.unwrap_or_else(|| fail("no MODEL.BPK"));
    let device = Device::default();
    // burn-onnx's from_file panics ("Failed to load burnpack file ..."); the hook makes it one line
    let load = || Ok(Model::from_file(&path, &device));
    match cli.protocol {
        Some(protocol) => {
            runner_io::protocol_main(&protocol, load, |m, xs| run_forward(m, xs, &device))
        }
        None => legacy_main(load().unwrap_or_else(|e: String| fail(e)), &device),
    }
}

/// LEGACY (delete once the Python side speaks the protocol): no `--inputs`: the A1 formula
/// input, one `{"logits":..}` line.
#[cfg(not(feature = "embed"))]
fn legacy_main(model: store_onnx::model::Model, device: &burn::prelude::Device) {
    match store_onnx::legacy_logits_line(&model, device) {
        Ok(line) => println!("{line}"),
        Err(e) => fail(e),
    }
}

#[cfg(feature = "embed")]
fn main() {
    quiet_panics();
    let _ = ModelArg::None;
    fail("store-onnx-bpk needs LoadStrategy::File: build it without feature `embed`")
}
