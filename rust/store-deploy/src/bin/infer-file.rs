//! infer-file: loads an Mlp of any layout from a .bpk given on the command line (sizes from its
//! tensors' shapes, then Module::try_load_file).
//!
//! `infer-file MODEL.bpk --inputs IN.safetensors --outputs OUT.safetensors [--repeat K]`

use burn::prelude::*;
use runner_io::{ModelArg, protocol_main};
use store_deploy::{Mlp, fail, forward_data, load_bpk, quiet_panics, run};

fn main() {
    quiet_panics();
    let cli = runner_io::cli(ModelArg::Required("MODEL.BPK"));
    let path = cli.model.unwrap_or_else(|| fail("no MODEL.BPK"));
    let device = Device::flex();
    let load = || load_bpk(&path, &device);
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
