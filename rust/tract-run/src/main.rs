//! tract-run: `tract-run MODEL.onnx --inputs IN --outputs OUT [--repeat K]` (the runner protocol,
//! see runner-io). Loads the ONNX file with tract at run time (its external `.onnx.data` is read
//! from beside it), fixes the inputs' shapes and types to those of IN, optimises and runs it.
//! `tract-run --nodes MODEL.onnx --inputs IN` prints the optimised model's nodes instead (one
//! per line, `NAME<TAB>OP<TAB>OUTPUT FACTS`), for the inspector.

use runner_io::{Dtype, ModelArg, RawTensor, fail, one_line, quiet_panics, read_raw_inputs};
use tract_onnx::prelude::*;

type Plan = Arc<TypedRunnableModel>;

fn datum(dtype: Dtype) -> Result<DatumType, String> {
    Ok(match dtype {
        Dtype::F32 => f32::datum_type(),
        Dtype::F64 => f64::datum_type(),
        Dtype::I64 => i64::datum_type(),
        Dtype::I32 => i32::datum_type(),
        Dtype::U8 => u8::datum_type(),
        Dtype::BOOL => bool::datum_type(),
        other => return Err(format!("dtype {other:?} is not supported")),
    })
}

fn err(e: impl std::fmt::Display) -> String {
    // tract's errors are anyhow chains: {:#} shows every cause (it names the failing node and
    // operator), without the backtrace {:?} would add
    one_line(format!("{e:#}"))
}

/// The optimised model, its inputs typed and shaped like `inputs`.
fn optimised(path: &str, inputs: &[RawTensor]) -> Result<TypedModel, String> {
    let mut model = tract_onnx::onnx()
        .model_for_path(path)
        .map_err(|e| format!("tract cannot load {path}: {}", err(e)))?;
    let declared = model.inputs.len();
    if declared != inputs.len() {
        return Err(format!(
            "the model takes {declared} inputs, got {}",
            inputs.len()
        ));
    }
    for (i, t) in inputs.iter().enumerate() {
        let fact = InferenceFact::dt_shape(
            datum(t.dtype).map_err(|e| format!("input_{i}: {e}"))?,
            &t.shape,
        );
        model
            .set_input_fact(i, fact)
            .map_err(|e| format!("input_{i}: {}", err(e)))?;
    }
    model
        .into_optimized()
        .map_err(|e| format!("tract cannot optimise {path}: {}", err(e)))
}

fn to_tensor(t: RawTensor, i: usize) -> Result<TValue, String> {
    let dt = datum(t.dtype).map_err(|e| format!("input_{i}: {e}"))?;
    // SAFETY: from_raw_dt copies `data`, whose length it checks against the shape and dtype
    let tensor = unsafe { Tensor::from_raw_dt(dt, &t.shape, &t.data) }
        .map_err(|e| format!("input_{i}: {}", err(e)))?;
    Ok(tensor.into_tvalue())
}

fn from_tensor(v: TValue, i: usize) -> Result<RawTensor, String> {
    let dt = v.datum_type();
    let (dtype, target) = if dt.is_float() {
        (Dtype::F32, f32::datum_type())
    } else if dt == bool::datum_type() {
        (Dtype::BOOL, dt)
    } else if dt.is_integer() {
        (Dtype::I64, i64::datum_type())
    } else {
        return Err(format!("output_{i}: type {dt:?} is not supported"));
    };
    let t = v
        .cast_to_dt(target)
        .map_err(|e| format!("output_{i}: {}", err(e)))?;
    let data = t.as_bytes().to_vec();
    Ok(RawTensor {
        dtype,
        shape: t.shape().to_vec(),
        data,
    })
}

fn forward(plan: &Plan, inputs: Vec<RawTensor>) -> Result<Vec<RawTensor>, String> {
    let values = inputs
        .into_iter()
        .enumerate()
        .map(|(i, t)| to_tensor(t, i))
        .collect::<Result<TVec<_>, _>>()?;
    let outputs = plan
        .run(values)
        .map_err(|e| format!("tract run failed: {}", err(e)))?;
    outputs
        .into_iter()
        .enumerate()
        .map(|(i, v)| from_tensor(v, i))
        .collect()
}

fn print_nodes(model: &TypedModel) {
    for node in model.eval_order().unwrap_or_else(|e| fail(err(e))) {
        let node = model.node(node);
        let facts: Vec<String> = node
            .outputs
            .iter()
            .map(|o| format!("{:?} {:?}", o.fact.datum_type, o.fact.shape))
            .collect();
        println!("{}\t{}\t{}", node.name, node.op().name(), facts.join(", "));
    }
}

fn main() {
    quiet_panics();
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let nodes = args.first().is_some_and(|a| a == "--nodes");
    if nodes {
        args.remove(0);
        args.extend(["--outputs".into(), "/dev/null".into()]);
    }
    let cli = runner_io::parse_args(args, ModelArg::Required("MODEL.onnx")).unwrap_or_else(|e| {
        fail(format!(
            "{e}; {}",
            runner_io::usage("tract-run", ModelArg::Required("MODEL.onnx"))
        ))
    });
    let path = cli.model.expect("required");
    // the inputs' types and shapes fix the model's: read them before the timed load
    let inputs = read_raw_inputs(&cli.protocol.inputs).unwrap_or_else(|e| fail(e));
    if nodes {
        print_nodes(&optimised(&path, &inputs).unwrap_or_else(|e| fail(e)));
        return;
    }
    let load = || {
        optimised(&path, &inputs)?
            .into_runnable()
            .map_err(|e| format!("tract cannot plan {path}: {}", err(e)))
    };
    runner_io::raw_protocol_main(&cli.protocol, None, load, forward);
}
