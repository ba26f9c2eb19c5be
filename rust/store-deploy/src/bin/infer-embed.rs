//! infer-embed: the .bpk is compiled into the binary with include_bytes! (path chosen at build
//! time through DEPLOYTUI_BPK, see build.rs; A1's by default) and loaded from memory (sizes from
//! its tensors' shapes, then ModuleRecord::from_bytes).
//!
//! `infer-embed --inputs IN.safetensors --outputs OUT.safetensors [--repeat K]`

use burn::prelude::*;
use runner_io::{ModelArg, protocol_main};
use store_deploy::{Mlp, fail, forward_data, load_bpk_bytes, quiet_panics, run};

static WEIGHTS: &[u8] = include_bytes!(env!("DEPLOYTUI_EMBED_BPK"));

fn load(device: &Device) -> Result<Mlp, String> {
    if WEIGHTS.is_empty() {
        return Err("no weights compiled in: build with DEPLOYTUI_BPK=/path/to/a1.bpk".into());
    }
    load_bpk_bytes(WEIGHTS, device).map_err(|e| format!("embedded weights: {e}"))
}

fn main() {
    quiet_panics();
    let cli = runner_io::cli(ModelArg::None);
    let device = Device::flex();
    match cli.protocol {
        Some(p) => protocol_main(&p, || load(&device), |m, xs| forward_data(m, xs, &device)),
        None => legacy_main(&device),
    }
}

/// LEGACY (delete once the Python side speaks the protocol): the A1 formula input, one
/// `{"logits":..}` line.
fn legacy_main(device: &Device) {
    let model = load(device).unwrap_or_else(|e| fail(e));
    run(&model, device);
}
