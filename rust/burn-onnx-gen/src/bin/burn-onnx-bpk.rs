//! burn-onnx-bpk: the generated model loaded with `Model::from_file(MODEL_FILE)` from a .bpk
//! given at run time (it ships next to the binary), so the binary runs anywhere; needs
//! LoadStrategy::File (the default, not feature `embed`).
//!
//! `burn-onnx-bpk MODEL.bpk --inputs IN.safetensors --outputs OUT.safetensors [--repeat K]`

use runner_io::{ModelArg, fail, quiet_panics};

#[cfg(not(feature = "embed"))]
fn main() {
    use burn::prelude::*;
    use burn_onnx_gen::model::{Model, run_forward};

    let cli = runner_io::cli(ModelArg::Required("MODEL.BPK"));
    quiet_panics();
    let path = cli.model.unwrap_or_else(|| fail("no MODEL.BPK"));
    let device = Device::default();
    // burn-onnx's from_file panics ("Failed to load burnpack file ..."); the hook makes it one line
    let load = || Ok::<_, String>(Model::from_file(&path, &device));
    runner_io::protocol_main(&cli.protocol, load, |m, xs| run_forward(m, xs, &device));
}

#[cfg(feature = "embed")]
fn main() {
    quiet_panics();
    let _ = ModelArg::None;
    fail("burn-onnx-bpk needs LoadStrategy::File: build it without feature `embed`")
}
