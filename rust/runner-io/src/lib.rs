//! The runner protocol every burn binary speaks (the same for the C++, Rust and Python runners):
//!
//! ```text
//! PROGRAM [MODEL_FILE] --inputs IN.safetensors --outputs OUT.safetensors [--repeat K]
//! ```
//!
//! - IN holds the example inputs `input_0`, `input_1`, ... (F32 or I64; also accepted: F64, I32,
//!   U8, BOOL), any rank. Any other tensor name, or a gap in the numbering, is an error.
//! - The program loads the model (stage `load`), runs forward once (`first_forward`), then K more
//!   times (default 10, K=0 allowed) and takes the median (`steady_forward`, null for K=0), in ms.
//!   A forward stage includes turning the inputs into tensors and reading the outputs back.
//! - The last forward's outputs go to OUT as `output_0`, `output_1`, ... in the model's output
//!   order: float outputs as F32, int outputs as I64, bool outputs as BOOL.
//! - stdout: one JSON line `{"stages_ms": {"load": .., "first_forward": .., "steady_forward": ..},
//!   "outputs": N}`.
//! - Any failure: one line `error: ...` on stderr, exit 1 (panics included, see [`quiet_panics`]).
//!
//! `--inputs` and `--outputs` are required (the legacy A1 mode without them is gone).

use std::collections::BTreeMap;
use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::time::Instant;

use burn::prelude::*;
use burn::tensor::{BoolStore, DType, Element, kind::Basic};
use safetensors::{Dtype, SafeTensors, tensor::TensorView};

pub const DEFAULT_REPEAT: usize = 10;

// ---------------------------------------------------------------------------------------------
// errors

/// Collapses a (possibly multi-line) message into one line.
pub fn one_line(msg: impl Display) -> String {
    msg.to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Prints `error: MSG` as one line on stderr and exits with status 1.
pub fn fail(msg: impl Display) -> ! {
    eprintln!("error: {}", one_line(msg));
    std::process::exit(1)
}

/// Turns any panic (e.g. inside a loader on a damaged file, or burn-onnx's "Failed to load
/// burnpack file ...") into a one-line `error: panic: MSG (at FILE:LINE)` and exit 1, instead of
/// a message plus backtrace (RUST_BACKTRACE may be set) and exit 101.
pub fn quiet_panics() {
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        let at = info
            .location()
            .map(|l| format!(" (at {}:{})", l.file(), l.line()))
            .unwrap_or_default();
        fail(format!("panic: {msg}{at}"))
    }));
}

// ---------------------------------------------------------------------------------------------
// arguments

/// What the model file argument of a program is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelArg {
    /// The program carries its model (compiled in, or at a path baked in at build time).
    None,
    /// The program takes MODEL_FILE as its one positional argument (named here for usage text).
    Required(&'static str),
}

/// `--inputs/--outputs/--repeat` of the protocol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Protocol {
    pub inputs: PathBuf,
    pub outputs: PathBuf,
    pub repeat: usize,
}

/// A parsed command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cli {
    pub model: Option<String>,
    pub protocol: Protocol,
}

pub fn usage(prog: &str, model: ModelArg) -> String {
    let m = match model {
        ModelArg::None => String::new(),
        ModelArg::Required(name) => format!("{name} "),
    };
    format!("usage: {prog} {m}--inputs IN.safetensors --outputs OUT.safetensors [--repeat K]")
}

/// Parses the arguments after the program name.
pub fn parse_args(args: impl IntoIterator<Item = String>, model: ModelArg) -> Result<Cli, String> {
    let mut positional = Vec::new();
    let (mut inputs, mut outputs, mut repeat) = (None, None, None);
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let slot = match flag.as_str() {
            "--inputs" => &mut inputs,
            "--outputs" => &mut outputs,
            "--repeat" => &mut repeat,
            f if f.starts_with("--") => return Err(format!("unknown option {f}")),
            _ => {
                positional.push(arg);
                continue;
            }
        };
        let value = match inline.or_else(|| it.next()) {
            Some(v) if !v.is_empty() => v,
            _ => return Err(format!("{flag} needs a value")),
        };
        if slot.replace(value).is_some() {
            return Err(format!("{flag} given twice"));
        }
    }
    let model = match (model, positional.len()) {
        (ModelArg::None, 0) => None,
        (ModelArg::None, _) => {
            return Err(format!(
                "unexpected argument {} (the model is built in)",
                positional[0]
            ));
        }
        (ModelArg::Required(_), 1) => positional.pop(),
        (ModelArg::Required(name), 0) => return Err(format!("missing {name}")),
        (ModelArg::Required(_), _) => {
            return Err(format!("unexpected argument {}", positional[1]));
        }
    };
    let protocol = match (inputs, outputs) {
        (Some(i), Some(o)) => {
            let repeat = match repeat {
                None => DEFAULT_REPEAT,
                Some(k) => k
                    .parse::<usize>()
                    .map_err(|_| format!("--repeat wants a count >= 0, got {k:?}"))?,
            };
            Protocol {
                inputs: i.into(),
                outputs: o.into(),
                repeat,
            }
        }
        (Some(_), None) | (None, None) => return Err("--outputs is required".into()),
        (None, Some(_)) => return Err("--inputs is required".into()),
    };
    Ok(Cli { model, protocol })
}

/// [`parse_args`] on this process's arguments; a usage error exits with one line.
pub fn cli(model: ModelArg) -> Cli {
    let prog = std::env::args()
        .next()
        .map(|p| {
            Path::new(&p)
                .file_name()
                .map_or(p.clone(), |n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "runner".into());
    parse_args(std::env::args().skip(1), model)
        .unwrap_or_else(|e| fail(format!("{e}; {}", usage(&prog, model))))
}

// ---------------------------------------------------------------------------------------------
// safetensors in and out

fn burn_dtype(dtype: Dtype) -> Option<DType> {
    Some(match dtype {
        Dtype::F32 => DType::F32,
        Dtype::F64 => DType::F64,
        Dtype::I64 => DType::I64,
        Dtype::I32 => DType::I32,
        Dtype::U8 => DType::U8,
        Dtype::BOOL => DType::Bool(BoolStore::Native),
        _ => return None,
    })
}

/// The tensors `input_0`, `input_1`, ... of a safetensors buffer, in order.
pub fn decode_inputs(bytes: &[u8]) -> Result<Vec<TensorData>, String> {
    let st = SafeTensors::deserialize(bytes)
        .map_err(|e| format!("not a valid safetensors file: {e}"))?;
    let mut found = BTreeMap::new();
    for (name, view) in st.iter() {
        let index = name
            .strip_prefix("input_")
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|i| format!("input_{i}") == name)
            .ok_or_else(|| format!("unexpected tensor {name:?} (inputs are input_0, input_1, ...)"))?;
        let dtype = burn_dtype(view.dtype())
            .ok_or_else(|| format!("{name}: dtype {:?} is not supported", view.dtype()))?;
        let shape = view.shape().to_vec();
        let data = if view.dtype() == Dtype::BOOL {
            let values: Vec<bool> = view.data().iter().map(|b| *b != 0).collect();
            TensorData::new(values, shape)
        } else {
            TensorData::try_from_bytes_vec(view.data().to_vec(), shape, dtype)
                .map_err(|e| format!("{name}: {e}"))?
        };
        found.insert(index, data);
    }
    let n = found.len();
    if let Some(missing) = (0..n).find(|i| !found.contains_key(i)) {
        return Err(format!(
            "input_{missing} is missing ({n} inputs must be input_0 .. input_{})",
            n.saturating_sub(1)
        ));
    }
    Ok(found.into_values().collect())
}

pub fn read_inputs(path: &Path) -> Result<Vec<TensorData>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    decode_inputs(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// An output as the protocol writes it: F32 (any float), I64 (any int) or BOOL.
fn output_bytes(data: TensorData) -> Result<(Dtype, Vec<usize>, Vec<u8>), String> {
    let shape = data.shape().as_slice().to_vec();
    let dtype = data.dtype();
    let err = |e: burn::tensor::DataError| format!("cannot read a {dtype:?} output: {e}");
    if dtype.is_bool() {
        let values = data.try_into_vec_as::<bool>().map_err(err)?;
        return Ok((Dtype::BOOL, shape, values.into_iter().map(u8::from).collect()));
    }
    let (st, target) = if dtype.is_int() || dtype.is_uint() {
        (Dtype::I64, DType::I64)
    } else {
        (Dtype::F32, DType::F32)
    };
    let data = data.try_cast(target).map_err(err)?;
    Ok((st, shape, data.as_bytes().to_vec()))
}

/// A safetensors buffer holding the outputs as `output_0`, `output_1`, ...
pub fn encode_outputs(outputs: Vec<TensorData>) -> Result<Vec<u8>, String> {
    let parts = outputs
        .into_iter()
        .map(output_bytes)
        .collect::<Result<Vec<_>, _>>()?;
    let views = parts
        .iter()
        .enumerate()
        .map(|(i, (dtype, shape, bytes))| {
            TensorView::new(*dtype, shape.clone(), bytes)
                .map(|v| (format!("output_{i}"), v))
                .map_err(|e| format!("output_{i}: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    safetensors::serialize(views, None).map_err(|e| format!("cannot encode the outputs: {e}"))
}

/// Writes the outputs next to `path` first, then renames: OUT is never left half-written.
pub fn write_outputs(path: &Path, outputs: Vec<TensorData>) -> Result<(), String> {
    let bytes = encode_outputs(outputs)?;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| {
            std::fs::remove_file(&tmp).ok();
            format!("cannot write {}: {e}", path.display())
        })
}

// ---------------------------------------------------------------------------------------------
// inputs into model arguments, model results into outputs

fn describe(data: &TensorData) -> String {
    format!("{:?} {:?}", data.dtype(), data.shape().as_slice())
}

/// A forward argument built from one protocol input. The generated glue of store-onnx calls
/// `FromInput::from_input(..)` for each argument and lets the forward signature pick the impl.
pub trait FromInput: Sized {
    fn from_input(data: TensorData, device: &Device, index: usize) -> Result<Self, String>;
}

fn check_rank(data: &TensorData, rank: usize, kind: &str, index: usize) -> Result<(), String> {
    if data.rank() != rank {
        return Err(format!(
            "input_{index}: the model takes a rank-{rank} {kind} tensor, got {}",
            describe(data)
        ));
    }
    Ok(())
}

impl<const D: usize> FromInput for Tensor<D> {
    fn from_input(data: TensorData, device: &Device, index: usize) -> Result<Self, String> {
        check_rank(&data, D, "float", index)?;
        if !data.dtype().is_float() {
            return Err(format!(
                "input_{index}: the model takes a float tensor, got {}",
                describe(&data)
            ));
        }
        Ok(Tensor::from_data(data, device))
    }
}

impl<const D: usize> FromInput for Tensor<D, Int> {
    fn from_input(data: TensorData, device: &Device, index: usize) -> Result<Self, String> {
        check_rank(&data, D, "int", index)?;
        let dtype = data.dtype();
        if !(dtype.is_int() || dtype.is_uint()) {
            return Err(format!(
                "input_{index}: the model takes an int tensor (I64), got {}",
                describe(&data)
            ));
        }
        Ok(Tensor::from_data(data, device))
    }
}

impl<const D: usize> FromInput for Tensor<D, Bool> {
    fn from_input(data: TensorData, device: &Device, index: usize) -> Result<Self, String> {
        check_rank(&data, D, "bool", index)?;
        if !data.dtype().is_bool() {
            return Err(format!(
                "input_{index}: the model takes a bool tensor, got {}",
                describe(&data)
            ));
        }
        Ok(Tensor::from_data(data, device))
    }
}

/// One value (a rank-0 tensor, or any shape with one element), as burn-onnx's native scalars.
fn scalar<E: Element>(data: TensorData, index: usize) -> Result<E, String> {
    if data.num_elements() != 1 {
        return Err(format!(
            "input_{index}: the model takes a scalar, got {}",
            describe(&data)
        ));
    }
    let what = describe(&data);
    data.try_into_vec_as::<E>()
        .map_err(|e| format!("input_{index}: {what}: {e}"))
        .map(|v| v[0])
}

macro_rules! scalar_io {
    ($($t:ty),*) => {$(
        impl FromInput for $t {
            fn from_input(data: TensorData, _: &Device, index: usize) -> Result<Self, String> {
                scalar::<$t>(data, index)
            }
        }
        impl IntoOutput for $t {
            fn into_output(self) -> Result<TensorData, String> {
                Ok(TensorData::new(vec![self], Vec::<usize>::new()))
            }
        }
    )*};
}
scalar_io!(f32, f64, i32, i64, bool);

/// A shape argument (`[i64; N]`): a rank-1 int tensor of N elements.
impl<const N: usize> FromInput for [i64; N] {
    fn from_input(data: TensorData, _: &Device, index: usize) -> Result<Self, String> {
        let dtype = data.dtype();
        if data.rank() != 1 || data.num_elements() != N || !(dtype.is_int() || dtype.is_uint()) {
            return Err(format!(
                "input_{index}: the model takes a shape of {N} ints (I64 [{N}]), got {}",
                describe(&data)
            ));
        }
        let values = data
            .try_into_vec_as::<i64>()
            .map_err(|e| format!("input_{index}: {e}"))?;
        values
            .try_into()
            .map_err(|_| format!("input_{index}: not {N} values"))
    }
}

/// A forward result as a protocol output (converted to F32/I64/BOOL when written).
pub trait IntoOutput {
    fn into_output(self) -> Result<TensorData, String>;
}

impl<const D: usize, K: Basic> IntoOutput for Tensor<D, K> {
    fn into_output(self) -> Result<TensorData, String> {
        self.try_into_data()
            .map_err(|e| one_line(format!("cannot read an output: {e:?}")))
    }
}

impl<const N: usize> IntoOutput for [i64; N] {
    fn into_output(self) -> Result<TensorData, String> {
        Ok(TensorData::new(self.to_vec(), [N]))
    }
}

// ---------------------------------------------------------------------------------------------
// the timed run

#[derive(Clone, Debug, PartialEq)]
pub struct Stages {
    pub load: f64,
    pub first_forward: f64,
    pub steady_forward: Option<f64>,
}

/// The median of the samples (mean of the two middle ones for an even count); None when empty.
pub fn median(samples: &[f64]) -> Option<f64> {
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(s[n / 2]),
        _ => Some((s[n / 2 - 1] + s[n / 2]) / 2.0),
    }
}

fn ms(x: f64) -> String {
    // 1 ns resolution; f64 Display is the shortest form that reads back, valid JSON
    format!("{}", (x * 1e6).round() / 1e6)
}

/// The stdout line of the protocol.
pub fn report_json(stages: &Stages, outputs: usize) -> String {
    let steady = stages.steady_forward.map_or("null".to_string(), ms);
    format!(
        "{{\"stages_ms\": {{\"load\": {}, \"first_forward\": {}, \"steady_forward\": {}}}, \"outputs\": {}}}",
        ms(stages.load),
        ms(stages.first_forward),
        steady,
        outputs
    )
}

fn elapsed_ms(t0: Instant) -> f64 {
    t0.elapsed().as_secs_f64() * 1e3
}

/// Reads the inputs, then times `load`, the first `forward` and `repeat` more, writes the last
/// outputs and returns the JSON line.
pub fn run_protocol<M>(
    protocol: &Protocol,
    load: impl FnOnce() -> Result<M, String>,
    mut forward: impl FnMut(&M, Vec<TensorData>) -> Result<Vec<TensorData>, String>,
) -> Result<String, String> {
    let inputs = read_inputs(&protocol.inputs)?;
    let t0 = Instant::now();
    let model = load()?;
    let load_ms = elapsed_ms(t0);

    let t0 = Instant::now();
    let mut outputs = forward(&model, inputs.clone())?;
    let first_ms = elapsed_ms(t0);

    let mut samples = Vec::with_capacity(protocol.repeat);
    for _ in 0..protocol.repeat {
        let args = inputs.clone();
        let t0 = Instant::now();
        outputs = forward(&model, args)?;
        samples.push(elapsed_ms(t0));
    }
    let n = outputs.len();
    write_outputs(&protocol.outputs, outputs)?;
    let stages = Stages {
        load: load_ms,
        first_forward: first_ms,
        steady_forward: median(&samples),
    };
    Ok(report_json(&stages, n))
}

/// [`run_protocol`] for a `main`: prints the line, or exits with a one-line error.
pub fn protocol_main<M>(
    protocol: &Protocol,
    load: impl FnOnce() -> Result<M, String>,
    forward: impl FnMut(&M, Vec<TensorData>) -> Result<Vec<TensorData>, String>,
) {
    match run_protocol(protocol, load, forward) {
        Ok(line) => println!("{line}"),
        Err(e) => fail(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| a.to_string()).collect()
    }

    fn tmp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("runner-io-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    #[test]
    fn arguments() {
        let m = ModelArg::Required("MODEL.BPK");
        let cli = parse_args(s(&["m.bpk", "--inputs", "i.st", "--outputs=o.st"]), m).unwrap();
        assert_eq!(cli.model.as_deref(), Some("m.bpk"));
        let p = cli.protocol;
        assert_eq!((p.inputs, p.outputs, p.repeat), ("i.st".into(), "o.st".into(), 10));
        let cli = parse_args(s(&["--repeat", "0", "--inputs", "a", "--outputs", "b"]), ModelArg::None);
        assert_eq!(cli.unwrap().protocol.repeat, 0);
        // no --inputs: an error (the legacy A1 mode is gone)
        assert!(parse_args(s(&["m.bpk"]), m).is_err());
        assert!(parse_args(s(&[]), ModelArg::None).is_err());
        for bad in [
            &["--inputs", "a"][..],
            &["--outputs", "b"],
            &["--repeat", "3"],
            &["--inputs", "a", "--outputs", "b", "--repeat", "-1"],
            &["--inputs", "a", "--outputs", "b", "--repeat"],
            &["--inputs", "a", "--inputs", "c", "--outputs", "b"],
            &["--bogus"],
            &["extra"],
        ] {
            assert!(parse_args(s(bad), ModelArg::None).is_err(), "{bad:?}");
        }
        assert!(parse_args(s(&[]), m).is_err());
        assert!(parse_args(s(&["a", "b"]), m).is_err());
    }

    fn encode_inputs(tensors: &[(&str, Dtype, Vec<usize>, Vec<u8>)]) -> Vec<u8> {
        let views: Vec<_> = tensors
            .iter()
            .map(|(n, d, s, b)| (n.to_string(), TensorView::new(*d, s.clone(), b).unwrap()))
            .collect();
        safetensors::serialize(views, None).unwrap()
    }

    #[test]
    fn safetensors_round_trip() {
        let f: Vec<f32> = (0..24).map(|k| k as f32 * 0.25 - 1.0).collect();
        let i: Vec<i64> = vec![3, -1, 7];
        let fb: Vec<u8> = f.iter().flat_map(|x| x.to_le_bytes()).collect();
        let ib: Vec<u8> = i.iter().flat_map(|x| x.to_le_bytes()).collect();
        let bytes = encode_inputs(&[
            ("input_1", Dtype::I64, vec![3], ib),
            ("input_0", Dtype::F32, vec![2, 3, 4], fb),
            ("input_2", Dtype::F32, vec![], 2.5f32.to_le_bytes().to_vec()),
        ]);
        let path = tmp("in.safetensors");
        std::fs::write(&path, &bytes).unwrap();
        let inputs = read_inputs(&path).unwrap();
        assert_eq!(inputs.len(), 3);
        assert_eq!(inputs[0].shape().as_slice(), &[2, 3, 4]);
        assert_eq!(inputs[0].clone().try_into_vec::<f32>().unwrap(), f);
        assert_eq!(inputs[1].dtype(), DType::I64);
        assert_eq!(inputs[1].clone().try_into_vec::<i64>().unwrap(), i);
        assert_eq!(inputs[2].rank(), 0);

        // through tensors and back: F32 stays F32, I64 stays I64, a rank-0 stays rank 0
        let device = Device::flex();
        let x = Tensor::<3>::from_input(inputs[0].clone(), &device, 0).unwrap();
        let y = Tensor::<1, Int>::from_input(inputs[1].clone(), &device, 1).unwrap();
        let z = f32::from_input(inputs[2].clone(), &device, 2).unwrap();
        assert_eq!(z, 2.5);
        let b = x.clone().greater_elem(0.0);
        let outs = vec![
            x.into_output().unwrap(),
            y.into_output().unwrap(),
            z.into_output().unwrap(),
            b.into_output().unwrap(),
            [1i64, 2].into_output().unwrap(),
        ];
        let out_path = tmp("out.safetensors");
        write_outputs(&out_path, outs).unwrap();
        let back = std::fs::read(&out_path).unwrap();
        let st = SafeTensors::deserialize(&back).unwrap();
        let t = |n: &str| st.tensor(n).unwrap();
        assert_eq!((t("output_0").dtype(), t("output_0").shape()), (Dtype::F32, &[2, 3, 4][..]));
        let got: Vec<f32> = t("output_0")
            .data()
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(got, f);
        assert_eq!(t("output_1").dtype(), Dtype::I64);
        let got: Vec<i64> = t("output_1")
            .data()
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(got, i);
        assert_eq!((t("output_2").dtype(), t("output_2").shape()), (Dtype::F32, &[][..]));
        assert_eq!(t("output_3").dtype(), Dtype::BOOL);
        assert_eq!(t("output_3").data()[..6], [0, 0, 0, 0, 0, 1]);
        assert_eq!(t("output_4").dtype(), Dtype::I64);
        std::fs::remove_file(&out_path).ok();
        std::fs::remove_file(&path).ok();
    }

    #[test]
    fn damaged_or_wrong_inputs_are_errors() {
        let fb: Vec<u8> = (0..8).flat_map(|k| (k as f32).to_le_bytes()).collect();
        let good = encode_inputs(&[("input_0", Dtype::F32, vec![2, 4], fb.clone())]);
        for cut in [0, 7, 8, 20, good.len() / 2, good.len() - 1] {
            assert!(decode_inputs(&good[..cut]).is_err(), "cut at {cut}");
        }
        let gap = encode_inputs(&[("input_1", Dtype::F32, vec![2, 4], fb.clone())]);
        assert!(decode_inputs(&gap).unwrap_err().contains("input_0 is missing"));
        let named = encode_inputs(&[("x", Dtype::F32, vec![2, 4], fb.clone())]);
        assert!(decode_inputs(&named).unwrap_err().contains("unexpected tensor"));
        let padded = encode_inputs(&[("input_00", Dtype::F32, vec![2, 4], fb.clone())]);
        assert!(decode_inputs(&padded).is_err());
        let half = encode_inputs(&[("input_0", Dtype::F16, vec![2, 4], fb[..16].to_vec())]);
        assert!(decode_inputs(&half).unwrap_err().contains("not supported"));
        assert!(read_inputs(Path::new("/nonexistent/in.safetensors")).is_err());

        // rank and kind mismatches are errors, not burn panics
        let device = Device::flex();
        let x = decode_inputs(&good).unwrap().remove(0);
        assert!(Tensor::<3>::from_input(x.clone(), &device, 0).is_err());
        assert!(Tensor::<2, Int>::from_input(x.clone(), &device, 0).is_err());
        assert!(f32::from_input(x.clone(), &device, 0).is_err());
        assert!(<[i64; 2]>::from_input(x.clone(), &device, 0).is_err());
        assert!(Tensor::<2>::from_input(x, &device, 0).is_ok());
    }

    #[test]
    fn protocol_run_and_report() {
        let fb: Vec<u8> = (0..8).flat_map(|k| (k as f32).to_le_bytes()).collect();
        let inputs = tmp("proto-in.safetensors");
        std::fs::write(&inputs, encode_inputs(&[("input_0", Dtype::F32, vec![2, 4], fb)])).unwrap();
        let outputs = tmp("proto-out.safetensors");
        let mut calls = 0;
        let p = Protocol { inputs: inputs.clone(), outputs: outputs.clone(), repeat: 3 };
        let line = run_protocol(
            &p,
            || Ok(Device::flex()),
            |device, xs| {
                calls += 1;
                let x = Tensor::<2>::from_input(xs[0].clone(), device, 0)?;
                Ok(vec![(x * 2.0).into_output()?])
            },
        )
        .unwrap();
        assert_eq!(calls, 4);
        assert!(line.starts_with("{\"stages_ms\": {\"load\": "), "{line}");
        assert!(line.ends_with(", \"outputs\": 1}"), "{line}");
        assert!(!line.contains("null"));
        let back = std::fs::read(&outputs).unwrap();
        let st = SafeTensors::deserialize(&back).unwrap();
        assert_eq!(st.tensor("output_0").unwrap().shape(), &[2, 4]);

        let p0 = Protocol { repeat: 0, ..p };
        let line = run_protocol(&p0, || Ok(()), |_, _| Ok(vec![])).unwrap();
        assert!(line.contains("\"steady_forward\": null") && line.contains("\"outputs\": 0"));
        let failing = run_protocol(&p0, || Err::<(), _>("no model".to_string()), |_, _| Ok(vec![]));
        assert_eq!(failing.unwrap_err(), "no model");
        std::fs::remove_file(&inputs).ok();
        std::fs::remove_file(&outputs).ok();
    }

    #[test]
    fn medians_and_numbers() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        let line = report_json(
            &Stages { load: 1.23456789, first_forward: 0.5, steady_forward: Some(0.25) },
            2,
        );
        assert_eq!(
            line,
            r#"{"stages_ms": {"load": 1.234568, "first_forward": 0.5, "steady_forward": 0.25}, "outputs": 2}"#
        );
    }
}
