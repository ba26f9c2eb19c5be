//! infer-embed: the .bpk is compiled into the binary with include_bytes! (path chosen at build
//! time through DEPLOYTUI_BPK, see build.rs) and loaded from memory (ModuleRecord::from_bytes).

use burn::prelude::*;
use burn::store::ModuleRecord;
use burn::tensor::Bytes;
use store_deploy::{Mlp, fail, quiet_panics, run};

static WEIGHTS: &[u8] = include_bytes!(env!("DEPLOYTUI_EMBED_BPK"));

fn main() {
    quiet_panics();
    if std::env::args().len() > 1 {
        fail("usage: infer-embed (takes no arguments: the weights are compiled in)");
    }
    if WEIGHTS.is_empty() {
        fail("no weights compiled in: build with DEPLOYTUI_BPK=/path/to/a1.bpk");
    }
    let device = Device::flex();
    let record = match ModuleRecord::from_bytes(Bytes::from_bytes_vec(WEIGHTS.to_vec())) {
        Ok(r) => r,
        Err(e) => fail(format!("embedded weights are damaged: {e}")),
    };
    let model = match Mlp::new(&device).try_load_record(record) {
        Ok(m) => m,
        Err(e) => fail(format!("embedded weights do not fit the model: {e}")),
    };
    run(&model, &device);
}
