//! convert: PyTorch a1.safetensors -> burn a1.bpk (SafetensorsStore + PyTorchToBurnAdapter,
//! then Module::save_file).

use burn::prelude::*;
use burn::store::{ModuleSnapshot, PyTorchToBurnAdapter, SafetensorsStore};
use store_deploy::{Mlp, fail, quiet_panics};

fn main() {
    quiet_panics();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output] = args.as_slice() else {
        fail("usage: convert IN.safetensors OUT.bpk");
    };
    let device = Device::flex();
    let mut model = Mlp::new(&device);
    let mut store = SafetensorsStore::from_file(input).with_from_adapter(PyTorchToBurnAdapter);
    match model.load_from(&mut store) {
        Ok(result) => {
            if !result.unused.is_empty() {
                fail(format!("{input}: unexpected tensors {:?}", result.unused));
            }
        }
        Err(e) => fail(format!("cannot load {input}: {e}")),
    }
    if let Err(e) = model.with_stable_param_ids().save_file(output) {
        fail(format!("cannot write {output}: {e}"));
    }
    eprintln!("convert: {input} -> {output}");
}
