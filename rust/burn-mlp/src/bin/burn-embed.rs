//! burn-embed: the .bpk is compiled into the binary with include_bytes! (path chosen at build
//! time through DEPLOYTUI_BPK, see build.rs: the model's own .bpk) and loaded from memory (sizes from
//! its tensors' shapes, then ModuleRecord::from_bytes).
//!
//! `burn-embed --inputs IN.safetensors --outputs OUT.safetensors [--repeat K]`

use burn::prelude::*;
use runner_io::{ModelArg, protocol_main};
use burn_mlp::{Mlp, forward_data, load_bpk_bytes, quiet_panics};

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
    protocol_main(&cli.protocol, || load(&device), |m, xs| forward_data(m, xs, &device));
}
