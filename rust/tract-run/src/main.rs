//! tract-run: `tract-run MODEL.onnx --inputs IN --outputs OUT [--repeat K] [--warmup W]
//! [--threads T]` (the runner protocol, see runner-io; T > 1: a T-thread pool for matrix products). Loads the ONNX file with tract at run time (its external `.onnx.data` is read
//! from beside it), fixes the inputs' shapes and types to those of IN, optimises and runs it.
//! `tract-run --nodes MODEL.onnx --inputs IN` prints the optimised model's nodes instead (one
//! per line, `NAME<TAB>OP<TAB>OUTPUT FACTS`), for the inspector. Each graph input takes the
//! inputs file's tensor of its name; the outputs are written under the graph's output names.

use runner_io::{Dtype, ModelArg, RawTensor, fail, one_line, quiet_panics, read_named_inputs};
use tract_onnx::prelude::*;

type Plan = Arc<TypedRunnableModel>;

/// A runnable model, where each graph input's tensor sits in the call order (`order[i]`), and its
/// output names.
struct Loaded {
    plan: Plan,
    order: Vec<usize>,
    outputs: Vec<String>,
}

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

/// For each graph input (in the graph's order), where the tensor of its name sits in the
/// inputs; checked: the same names, each once.
fn graph_order(graph: &[String], names: &[String]) -> Result<Vec<usize>, String> {
    let (mut g, mut n) = (graph.to_vec(), names.to_vec());
    g.sort();
    n.sort();
    if g != n {
        return Err(format!(
            "the model's inputs are {graph:?}, the inputs file holds {names:?}"
        ));
    }
    Ok(graph
        .iter()
        .map(|x| names.iter().position(|y| y == x).expect("checked"))
        .collect())
}

/// The optimised model, each graph input typed and shaped like the input of its name; and where
/// each graph input sits in `inputs`.
fn optimised(path: &str, inputs: &[(String, RawTensor)]) -> Result<(TypedModel, Vec<usize>), String> {
    // the inputs' facts are set from IN below and everything else is inferred from them: the
    // graph's own shape annotations (a dynamic export's `batch,16,32,32`) would not unify with
    // the concrete batch size
    let mut model = tract_onnx::onnx()
        .with_ignore_value_info(true)
        .with_ignore_output_shapes(true)
        .model_for_path(path)
        .map_err(|e| format!("tract cannot load {path}: {}", err(e)))?;
    let graph: Vec<String> = model
        .input_outlets()
        .map_err(err)?
        .iter()
        .map(|o| model.node(o.node).name.clone())
        .collect();
    let names: Vec<String> = inputs.iter().map(|(n, _)| n.clone()).collect();
    let order = graph_order(&graph, &names)?;
    for (i, &k) in order.iter().enumerate() {
        let t = &inputs[k].1;
        let fact = InferenceFact::dt_shape(
            datum(t.dtype).map_err(|e| format!("{}: {e}", graph[i]))?,
            &t.shape,
        );
        model
            .set_input_fact(i, fact)
            .map_err(|e| format!("{}: {}", graph[i], err(e)))?;
    }
    let typed = model
        .into_optimized()
        .map_err(|e| format!("tract cannot optimise {path}: {}", err(e)))?;
    Ok((typed, order))
}

/// The graph's output names, in its order (its outlets' labels, else the producing nodes' names).
fn output_names(model: &TypedModel) -> Result<Vec<String>, String> {
    Ok(model
        .output_outlets()
        .map_err(err)?
        .iter()
        .map(|o| {
            model
                .outlet_label(*o)
                .map_or_else(|| model.node(o.node).name.clone(), String::from)
        })
        .collect())
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

fn forward(m: &Loaded, inputs: Vec<RawTensor>) -> Result<Vec<(String, RawTensor)>, String> {
    let values = m
        .order
        .iter()
        .enumerate()
        .map(|(i, &k)| to_tensor(inputs[k].clone(), i))
        .collect::<Result<TVec<_>, _>>()?;
    let outputs = m
        .plan
        .run(values)
        .map_err(|e| format!("tract run failed: {}", err(e)))?;
    outputs
        .into_iter()
        .zip(&m.outputs)
        .enumerate()
        .map(|(i, (v, name))| Ok((name.clone(), from_tensor(v, i)?)))
        .collect()
}

/// `--threads`: tract runs its matrix products on the calling thread (T = 1) or, with
/// tract-linalg's `multithread-mm`, on a T-thread rayon pool; the pool's own count is returned.
fn apply_threads(threads: usize) -> usize {
    use tract_linalg::multithread::{Executor, set_default_executor};
    if threads <= 1 {
        return 1;
    }
    let executor = Executor::multithread(threads);
    let reported = match &executor {
        Executor::MultiThread(pool) => pool.current_num_threads(),
        _ => 1,
    };
    set_default_executor(executor);
    reported
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
    let path = cli.model.clone().expect("required");
    let mut protocol = cli.protocol;
    protocol.threads_reported = Some(apply_threads(protocol.threads));
    // the inputs' types and shapes fix the model's: read them before the timed load
    let inputs = read_named_inputs(&protocol.inputs).unwrap_or_else(|e| fail(e));
    if nodes {
        print_nodes(&optimised(&path, &inputs).unwrap_or_else(|e| fail(e)).0);
        return;
    }
    let load = || {
        let (model, order) = optimised(&path, &inputs)?;
        let outputs = output_names(&model)?;
        let plan = model
            .into_runnable()
            .map_err(|e| format!("tract cannot plan {path}: {}", err(e)))?;
        Ok(Loaded {
            plan,
            order,
            outputs,
        })
    };
    runner_io::raw_protocol_main(&protocol, None, load, forward);
}
