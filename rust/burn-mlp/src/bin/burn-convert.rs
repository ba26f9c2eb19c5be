//! burn-convert: PyTorch safetensors of an MLP of any layout (`fc1.weight` [out, in] ...) -> burn .bpk
//! (sizes from the header; SafetensorsStore + PyTorchToBurnAdapter, then Module::save_file with
//! stable parameter ids, so the bytes are reproducible).

use burn::prelude::*;
use burn_mlp::{fail, load_safetensors, quiet_panics};

fn main() {
    quiet_panics();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output] = args.as_slice() else {
        fail("usage: burn-convert IN.safetensors OUT.bpk");
    };
    let device = Device::flex();
    let model = load_safetensors(input, &device).unwrap_or_else(|e| fail(e));
    let sizes: Vec<usize> = std::iter::once(model.d_in())
        .chain(model.layers.iter().map(|l| l.weight.dims()[1]))
        .collect();
    if let Err(e) = model.with_stable_param_ids().save_file(output) {
        fail(format!("cannot write {output}: {e}"));
    }
    eprintln!("burn-convert: {input} -> {output} (layer sizes {sizes:?})");
}
