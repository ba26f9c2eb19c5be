//! infer-st: reads PyTorch's a1.safetensors directly (SafetensorsStore + PyTorchToBurnAdapter).

use burn::prelude::*;
use burn::store::{ModuleSnapshot, PyTorchToBurnAdapter, SafetensorsStore};
use store_deploy::{Mlp, fail, one_arg, quiet_panics, run};

fn main() {
    quiet_panics();
    let path = one_arg("A1.SAFETENSORS");
    let device = Device::flex();
    let mut model = Mlp::new(&device);
    let mut store = SafetensorsStore::from_file(&path).with_from_adapter(PyTorchToBurnAdapter);
    if let Err(e) = model.load_from(&mut store) {
        fail(format!("cannot load {path}: {e}"));
    }
    run(&model, &device);
}
