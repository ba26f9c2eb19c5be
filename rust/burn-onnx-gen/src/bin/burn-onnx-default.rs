//! burn-onnx-default: runs the model burn-onnx generated at build time, loaded as the reference page
//! does with `model::Model::default()`. With LoadStrategy::File that reads the .bpk from the
//! absolute OUT_DIR path baked in at build time and panics if it is gone (the page's lesson, kept
//! on purpose: the panic hook turns it into one `error: panic: Failed to load
//! burnpack file ...` line); with feature `embed` (LoadStrategy::Embedded) the .bpk is compiled in.
//!
//! `burn-onnx-default --inputs IN.safetensors --outputs OUT.safetensors [--repeat K]` (runner-io).

use burn::prelude::*;
use runner_io::{ModelArg, protocol_main, quiet_panics};
use burn_onnx_gen::model::{Model, run_forward};

fn main() {
    let cli = runner_io::cli(ModelArg::None);
    let protocol = cli.protocol;
    quiet_panics();
    let device = Device::default();
    protocol_main(
        &protocol,
        || Ok(Model::default()),
        |model, inputs| run_forward(model, inputs, &device),
    );
}
