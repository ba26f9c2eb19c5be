//! infer-st: reads PyTorch safetensors directly (an Mlp of any layout: sizes from the header's
//! shapes; SafetensorsStore + PyTorchToBurnAdapter, `fcK.` mapped to `layers.{K-1}.`).
//!
//! `infer-st MODEL.safetensors --inputs IN.safetensors --outputs OUT.safetensors [--repeat K]`

use burn::prelude::*;
use runner_io::{ModelArg, protocol_main};
use store_deploy::{Mlp, fail, forward_data, load_safetensors, quiet_panics, run};

fn main() {
    quiet_panics();
    let cli = runner_io::cli(ModelArg::Required("MODEL.SAFETENSORS"));
    let path = cli.model.unwrap_or_else(|| fail("no MODEL.SAFETENSORS"));
    let device = Device::flex();
    let load = || load_safetensors(&path, &device);
    match cli.protocol {
        Some(p) => protocol_main(&p, load, |m, xs| forward_data(m, xs, &device)),
        None => legacy_main(load().unwrap_or_else(|e| fail(e)), &device),
    }
}

/// LEGACY (delete once the Python side speaks the protocol): the A1 formula input, one
/// `{"logits":..}` line.
fn legacy_main(model: Mlp, device: &Device) {
    run(&model, device);
}
