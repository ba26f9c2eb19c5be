//! burn-mlp-capture: loads the Mlp (any layout) from a .bpk, records its forward on `Device::capture` and writes
//! the captured GraphIr as JSON: graph inputs/outputs, the operations in order (kind, Debug summary,
//! ids and shapes of their inputs and outputs) and the recorded values (ids, shapes, dtypes).

use burn::prelude::*;
use burn_capture::{CaptureBackend, TensorId};
use serde_json::{Value, json};
use burn_mlp::{Mlp, fail, load_bpk, quiet_panics};

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
            Value::Object(m)
                if m.len() == 1 && m.keys().all(|k| k.starts_with(char::is_uppercase)) =>
            {
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

/// [BATCH, d_in], element k = 0.1*k - 0.5: A1's formula input for d_in = 4.
fn example_input(d_in: usize, device: &Device) -> Tensor<2> {
    let n = burn_mlp::BATCH * d_in;
    let xs: Vec<f32> = (0..n).map(|k| (0.1 * k as f64 - 0.5) as f32).collect();
    Tensor::<2>::from_data(TensorData::new(xs, [burn_mlp::BATCH, d_in]), device)
}

/// Records `model.forward` on a capture device and describes the graph as JSON.
fn capture(model: &Mlp) -> Result<Value, String> {
    let flex = Device::flex();
    let device = Device::capture();
    let captured = device
        .capture_scope(|scope| {
            let model = model.clone().to_device(&device);
            let input = example_input(model.d_in(), &flex).to_device(&device);
            let output = model.forward(input.clone());
            let (i, o) = (id(&input), id(&output));
            scope.complete([i], [o])
        })
        .map_err(|e| format!("capture failed: {e}"))?;

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
    Ok(json!({
        "inputs": graph.inputs.iter().map(|t| t.value()).collect::<Vec<_>>(),
        "outputs": graph.outputs.iter().map(|t| t.value()).collect::<Vec<_>>(),
        "operations": operations,
        "values": values,
    }))
}

fn main() {
    quiet_panics();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [bpk, out_path] = args.as_slice() else {
        fail("usage: burn-mlp-capture A1.BPK OUT.json");
    };
    let model = load_bpk(bpk, &Device::flex()).unwrap_or_else(|e| fail(e));
    let doc = capture(&model).unwrap_or_else(|e| fail(e));
    let text = serde_json::to_string_pretty(&doc).expect("JSON") + "\n";
    if let Err(e) = std::fs::write(out_path, text) {
        fail(format!("cannot write {out_path}: {e}"));
    }
    let count = |k: &str| doc[k].as_array().map_or(0, Vec::len);
    let summary = json!({"operations": count("operations"), "values": count("values"),
                         "inputs": count("inputs"), "outputs": count("outputs")});
    println!("{summary}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_the_mlp_forward() {
        let doc = capture(&Mlp::a1(&Device::flex())).unwrap();
        let kinds: Vec<&str> = doc["operations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|op| op["kind"].as_str().unwrap())
            .collect();
        let ops: Vec<&str> = kinds.iter().copied().filter(|k| *k != "Init").collect();
        assert_eq!(
            ops,
            [
                "Float/Matmul",
                "BaseFloat/Reshape",
                "NumericFloat/Add",
                "Activation/Relu",
                "Float/Matmul",
                "BaseFloat/Reshape",
                "NumericFloat/Add"
            ]
        );
        // 4 parameters + the moved-in input are recorded values; only the input is a graph input
        assert_eq!(doc["values"].as_array().unwrap().len(), 5);
        assert_eq!(doc["inputs"].as_array().unwrap().len(), 1);
        assert_eq!(doc["outputs"].as_array().unwrap().len(), 1);
        let first = &doc["operations"][5];
        assert_eq!(first["inputs"][0]["shape"], json!([4, 4]));
        assert_eq!(first["outputs"][0]["shape"], json!([4, 8]));
    }

    #[test]
    fn kind_paths() {
        assert_eq!(kind(&json!({"Init": {"out": {}}})), "Init");
        assert_eq!(
            kind(&json!({"Float": ["F32", {"Matmul": {"lhs": 1, "rhs": 2}}]})),
            "Float/Matmul"
        );
        assert_eq!(
            kind(&json!({"Activation": {"Relu": {"input": 1, "out": 2}}})),
            "Activation/Relu"
        );
    }
}
