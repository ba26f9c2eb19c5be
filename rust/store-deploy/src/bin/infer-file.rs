//! infer-file: loads the Mlp from a .bpk given on the command line (Module::try_load_file).

use burn::prelude::*;
use store_deploy::{Mlp, fail, one_arg, quiet_panics, run};

fn main() {
    quiet_panics();
    let path = one_arg("A1.BPK");
    let device = Device::flex();
    let model = match Mlp::new(&device).try_load_file(&path) {
        Ok(m) => m,
        Err(e) => fail(format!("cannot load {path}: {e}")),
    };
    run(&model, &device);
}
