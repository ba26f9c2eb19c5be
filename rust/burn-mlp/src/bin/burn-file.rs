//! burn-file: loads an Mlp of any layout from a .bpk given on the command line (sizes from its
//! tensors' shapes, then Module::try_load_file).
//!
//! `burn-file MODEL.bpk --inputs IN.safetensors --outputs OUT.safetensors [--repeat K]`

use burn::prelude::*;
use runner_io::{ModelArg, protocol_main};
use burn_mlp::{fail, forward_data, load_bpk, quiet_panics};

fn main() {
    quiet_panics();
    let cli = runner_io::cli(ModelArg::Required("MODEL.BPK"));
    let path = cli.model.unwrap_or_else(|| fail("no MODEL.BPK"));
    let device = Device::flex();
    let load = || load_bpk(&path, &device);
    protocol_main(&cli.protocol, load, |m, xs| forward_data(m, xs, &device));
}
