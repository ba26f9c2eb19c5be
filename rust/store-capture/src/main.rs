//! store-capture: loads the Mlp from a .bpk, records its forward on `Device::capture` and writes
//! the captured GraphIr as JSON: graph inputs/outputs, the operations in order (kind, Debug summary,
//! ids and shapes of their inputs and outputs) and the recorded values (ids, shapes, dtypes).

use burn::prelude::*;
use burn_capture::{CaptureBackend, TensorId};
use serde_json::{Value, json};
use store_deploy::{Mlp, fail, quiet_panics};

fn id<const D: usize>(tensor: &Tensor<D>) -> TensorId {
    match tensor.clone().try_into_primitive::<CaptureBackend>() {
        Ok(t) => t.id(),
        Err(e) => fail(format!("tensor is not on the capture device: {e:?}")),
    }
}

/// "Float/Matmul", "BaseFloat/Reshape", "Activation/Relu", "Init": the enum variant path of an
/// operation, read from its serde form (externally tagged enums, dtypes skipped).
fn kind(op: &Value) -> String {
    let mut parts = Vec::new();
    let mut cur = op;
    loop {
        match cur {
            Value::String(s) => {
                parts.push(s.clone());
                break;
            }
            // an enum variant (CamelCase); a one-field struct such as {"out": ..} ends the path
            Value::Object(m) if m.len() == 1 && m.keys().all(|k| k.starts_with(char::is_uppercase)) => {
                let (k, v) = m.iter().next().expect("one entry");
                parts.push(k.clone());
                cur = v;
            }
            // tuple variant such as Float(F32, Matmul(..)): follow the enum payload
            Value::Array(items) => match items.iter().rev().find(|v| v.is_object()) {
                Some(v) => cur = v,
                None => break,
            },
            _ => break,
        }
    }
    parts.join("/")
}

fn tensor_ref(t: &burn_ir::TensorIr) -> Value {
    json!({"id": t.id.value(), "shape": t.shape.as_slice(), "dtype": format!("{:?}", t.dtype)})
}

fn main() {
    quiet_panics();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [bpk, out_path] = args.as_slice() else {
        fail("usage: store-capture A1.BPK OUT.json");
    };
    let flex = Device::flex();
    let model = match Mlp::new(&flex).try_load_file(bpk) {
        Ok(m) => m,
        Err(e) => fail(format!("cannot load {bpk}: {e}")),
    };
    let device = Device::capture();
    let captured = device
        .capture_scope(|scope| {
            let model = model.clone().to_device(&device);
            let input = store_deploy::input(&flex).to_device(&device);
            let output = model.forward(input.clone());
            let (i, o) = (id(&input), id(&output));
            scope.complete([i], [o])
        })
        .unwrap_or_else(|e| fail(format!("capture failed: {e}")));

    let graph = &captured.graph;
    let operations: Vec<Value> = graph
        .operations
        .iter()
        .map(|op| {
            let serde_form = serde_json::to_value(op).unwrap_or(Value::Null);
            let debug = format!("{op:?}");
            json!({
                "kind": kind(&serde_form),
                "summary": debug.chars().take(110).collect::<String>(),
                "inputs": op.inputs().map(tensor_ref).collect::<Vec<_>>(),
                "outputs": op.outputs().map(tensor_ref).collect::<Vec<_>>(),
            })
        })
        .collect();
    let values: Vec<Value> = captured
        .values
        .iter()
        .map(|(id, data)| {
            json!({"id": id.value(), "shape": data.shape().as_slice(), "dtype": format!("{:?}", data.dtype())})
        })
        .collect();
    let doc = json!({
        "inputs": graph.inputs.iter().map(|t| t.value()).collect::<Vec<_>>(),
        "outputs": graph.outputs.iter().map(|t| t.value()).collect::<Vec<_>>(),
        "operations": operations,
        "values": values,
    });
    let text = serde_json::to_string_pretty(&doc).expect("JSON") + "\n";
    if let Err(e) = std::fs::write(out_path, text) {
        fail(format!("cannot write {out_path}: {e}"));
    }
    let summary = json!({"operations": graph.operations.len(), "values": captured.values.len(),
                         "inputs": graph.inputs.len(), "outputs": graph.outputs.len()});
    println!("{summary}");
}
