//! ort-run: `ort-run MODEL.onnx --inputs IN --outputs OUT [--repeat K]` (the runner protocol, see
//! runner-io). ONNX Runtime's C API through the `ort` crate, without Python: the library is
//! loaded at run time from `ORT_DYLIB_PATH`, else from `../lib/` beside the program (a ship
//! bundle's layout, like an `$ORIGIN` RUNPATH), else from `DEPLOYTUI_ORT_DYLIB` baked in at build
//! time (the onnxruntime wheel's capi/libonnxruntime.so.*). Stages: `import` = loading the
//! library and creating ONNX Runtime's environment, `load` = creating the session (reading and
//! optimising the model), then the forwards. CPU, `--threads` intra-op threads (default 1, like
//! the Python onnxruntime form), one inter-op; ONNX Runtime's C API reports no thread count.
//! The inputs go to the graph's inputs by name; the outputs are written under the graph's names.

use std::cell::RefCell;
use std::time::Instant;

use ort::session::Session;
use ort::value::{DynValue, Tensor, TensorElementType, ValueType};
use runner_io::{Dtype, ModelArg, RawTensor, elapsed_ms, fail, one_line, quiet_panics};

const BAKED_DYLIB: Option<&str> = option_env!("DEPLOYTUI_ORT_DYLIB");

fn err(e: impl std::fmt::Display) -> String {
    one_line(e)
}

/// The baked library's file name in `../lib/` of the program's folder, when it is there.
fn beside_program(baked: &str) -> Option<String> {
    let name = std::path::Path::new(baked).file_name()?;
    let exe = std::env::current_exe().ok()?;
    let lib = exe.parent()?.parent()?.join("lib").join(name);
    lib.is_file().then(|| lib.to_string_lossy().into_owned())
}

fn dylib() -> String {
    std::env::var("ORT_DYLIB_PATH")
        .ok()
        .filter(|p| !p.is_empty())
        .or_else(|| BAKED_DYLIB.and_then(beside_program))
        .or(BAKED_DYLIB.map(String::from))
        .unwrap_or_else(|| {
            fail("no ONNX Runtime library: set ORT_DYLIB_PATH (built without DEPLOYTUI_ORT_DYLIB)")
        })
}

fn from_le<const N: usize, T>(data: &[u8], f: fn([u8; N]) -> T) -> Vec<T> {
    data.chunks_exact(N)
        .map(|c| f(c.try_into().expect("N bytes")))
        .collect()
}

fn to_value(t: RawTensor, i: usize) -> Result<DynValue, String> {
    let shape = t.shape.clone();
    let e = |e: ort::Error| format!("input_{i}: {}", err(e));
    Ok(match t.dtype {
        Dtype::F32 => Tensor::from_array((shape, from_le(&t.data, f32::from_le_bytes)))
            .map_err(e)?
            .into_dyn(),
        Dtype::F64 => Tensor::from_array((shape, from_le(&t.data, f64::from_le_bytes)))
            .map_err(e)?
            .into_dyn(),
        Dtype::I64 => Tensor::from_array((shape, from_le(&t.data, i64::from_le_bytes)))
            .map_err(e)?
            .into_dyn(),
        Dtype::I32 => Tensor::from_array((shape, from_le(&t.data, i32::from_le_bytes)))
            .map_err(e)?
            .into_dyn(),
        Dtype::U8 => Tensor::from_array((shape, t.data)).map_err(e)?.into_dyn(),
        Dtype::BOOL => {
            Tensor::from_array((shape, t.data.iter().map(|b| *b != 0).collect::<Vec<_>>()))
                .map_err(e)?
                .into_dyn()
        }
        other => return Err(format!("input_{i}: dtype {other:?} is not supported")),
    })
}

fn bytes<T: Copy, const N: usize>(values: &[T], f: fn(T) -> [u8; N]) -> Vec<u8> {
    values.iter().flat_map(|v| f(*v)).collect()
}

fn from_value(v: &DynValue, i: usize) -> Result<RawTensor, String> {
    let e = |e: ort::Error| format!("output_{i}: {}", err(e));
    let ty = match v.dtype() {
        ValueType::Tensor { ty, .. } => *ty,
        other => return Err(format!("output_{i}: {other:?} is not a tensor")),
    };
    let shape_of = |s: &ort::value::Shape| s.iter().map(|d| *d as usize).collect::<Vec<_>>();
    let (dtype, shape, data) = match ty {
        TensorElementType::Float32 => {
            let (s, x) = v.try_extract_tensor::<f32>().map_err(e)?;
            (Dtype::F32, shape_of(s), bytes(x, f32::to_le_bytes))
        }
        TensorElementType::Float64 => {
            let (s, x) = v.try_extract_tensor::<f64>().map_err(e)?;
            let x: Vec<f32> = x.iter().map(|v| *v as f32).collect();
            (Dtype::F32, shape_of(s), bytes(&x, f32::to_le_bytes))
        }
        TensorElementType::Int64 => {
            let (s, x) = v.try_extract_tensor::<i64>().map_err(e)?;
            (Dtype::I64, shape_of(s), bytes(x, i64::to_le_bytes))
        }
        TensorElementType::Int32 => {
            let (s, x) = v.try_extract_tensor::<i32>().map_err(e)?;
            let x: Vec<i64> = x.iter().map(|v| i64::from(*v)).collect();
            (Dtype::I64, shape_of(s), bytes(&x, i64::to_le_bytes))
        }
        TensorElementType::Bool => {
            let (s, x) = v.try_extract_tensor::<bool>().map_err(e)?;
            (
                Dtype::BOOL,
                shape_of(s),
                x.iter().map(|b| u8::from(*b)).collect(),
            )
        }
        other => {
            return Err(format!(
                "output_{i}: element type {other:?} is not supported"
            ));
        }
    };
    Ok(RawTensor { dtype, shape, data })
}

/// Feeds the inputs to the graph's inputs by name (checked: the same names, each once) and names
/// the outputs as the graph does.
fn forward(
    session: &RefCell<Session>,
    names: &[String],
    inputs: Vec<RawTensor>,
) -> Result<Vec<(String, RawTensor)>, String> {
    let mut session = session.borrow_mut();
    let mut wanted: Vec<String> = session
        .inputs()
        .iter()
        .map(|o| o.name().to_string())
        .collect();
    let mut given = names.to_vec();
    wanted.sort();
    given.sort();
    if wanted != given {
        return Err(format!(
            "the model's inputs are {wanted:?}, the inputs file holds {given:?}"
        ));
    }
    let feed = names
        .iter()
        .zip(inputs)
        .enumerate()
        .map(|(i, (n, t))| Ok((n.clone(), to_value(t, i)?)))
        .collect::<Result<Vec<_>, String>>()?;
    let out_names: Vec<String> = session
        .outputs()
        .iter()
        .map(|o| o.name().to_string())
        .collect();
    let outputs = session
        .run(feed)
        .map_err(|e| format!("ONNX Runtime run failed: {}", err(e)))?;
    out_names
        .into_iter()
        .enumerate()
        .map(|(i, n)| Ok((n, from_value(&outputs[i], i)?)))
        .collect()
}

fn main() {
    quiet_panics();
    let cli = runner_io::cli(ModelArg::Required("MODEL.onnx"));
    let path = cli.model.expect("required");
    if !std::path::Path::new(&path).is_file() {
        fail(format!("model file not found: {path}"));
    }
    let names: Vec<String> = runner_io::read_named_inputs(&cli.protocol.inputs)
        .unwrap_or_else(|e| fail(e))
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let lib = dylib();
    let t0 = Instant::now();
    let env = ort::init_from(&lib)
        .map_err(|e| format!("cannot load ONNX Runtime from {lib}: {}", err(e)))
        .and_then(|b| {
            b.with_name("ort-run")
                .with_telemetry(false)
                .build()
                .map_err(err)
        })
        .unwrap_or_else(|e| fail(e));
    let import_ms = elapsed_ms(t0);
    let load = || {
        let cannot = |e: String| format!("ONNX Runtime cannot load {path}: {e}");
        let b = Session::builder(&env).map_err(|e| cannot(err(e)))?;
        let b = b
            .with_intra_threads(cli.protocol.threads)
            .map_err(|e| cannot(err(e)))?;
        let mut b = b.with_inter_threads(1).map_err(|e| cannot(err(e)))?;
        let session = b.commit_from_file(&path).map_err(|e| cannot(err(e)))?;
        Ok(RefCell::new(session))
    };
    runner_io::raw_protocol_main(&cli.protocol, Some(import_ms), load, |s, xs| {
        forward(s, &names, xs)
    });
}
