//! burn-st: reads PyTorch safetensors directly (an Mlp of any layout: sizes from the header's
//! shapes; SafetensorsStore + PyTorchToBurnAdapter, `fcK.` mapped to `layers.{K-1}.`).
//!
//! `burn-st MODEL.safetensors --inputs IN.safetensors --outputs OUT.safetensors [--repeat K]`

use burn::prelude::*;
use runner_io::{ModelArg, protocol_main};
use burn_mlp::{fail, forward_data, load_safetensors, quiet_panics};

fn main() {
    quiet_panics();
    let cli = runner_io::cli(ModelArg::Required("MODEL.SAFETENSORS"));
    let path = cli.model.unwrap_or_else(|| fail("no MODEL.SAFETENSORS"));
    let device = Device::flex();
    let load = || load_safetensors(&path, &device);
    protocol_main(&cli.protocol, load, |m, xs| forward_data(m, xs, &device));
}
