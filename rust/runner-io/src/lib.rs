//! The runner protocol every burn binary speaks (the same for the C++, Rust and Python runners):
//!
//! ```text
//! PROGRAM [MODEL_FILE] --inputs IN.safetensors --outputs OUT.safetensors [--repeat K]
//!         [--warmup W] [--threads T]
//! ```
//!
//! - IN holds the example inputs (F32 or I64; also accepted: F64, I32, U8, BOOL), any rank, named
//!   `input_0`, `input_1`, ... (positional) or by keyword (`attention_mask`); its `__metadata__`
//!   entry `inputs` lists them in call order (comma-joined). Without it the names must be
//!   `input_0`, `input_1`, ... with no gap. ONNX programs feed them to the graph's inputs by name,
//!   burn's by that order.
//! - The program loads the model (stage `load`), runs forward once (`first_forward`), W more times
//!   untimed (`--warmup`, default 0), then K more times (default 10, K=0 allowed), each timed alone
//!   with `Instant` (`forward_ms`, their median `steady_forward`, null for K=0), in ms; `cpu_ms`
//!   and `loop_ms` are the process's CPU time and the wall time over those K. A forward stage
//!   includes turning the inputs into tensors and reading the outputs back.
//! - `--threads T` (default 1) is the program's to apply to its runtime as its crate allows; it
//!   sets [`Protocol::threads_reported`] to what the runtime then reports (None: it reports none).
//! - The last forward's outputs go to OUT under the model's names where the program knows them
//!   (an ONNX graph's output names), else as `output_0`, `output_1`, ... in the model's output
//!   order: float outputs as F32, int outputs as I64, bool outputs as BOOL.
//! - stdout: one JSON line `{"stages_ms": {"load": .., "first_forward": .., "steady_forward": ..},
//!   "outputs": N, "warmup": W, "forward_ms": [..], "cpu_ms": .., "loop_ms": .., "threads":
//!   {"requested": T, "reported": ..}}`.
//! - Any failure: one line `error: ...` on stderr, exit 1 (panics included, see [`quiet_panics`]).
//!
//! `--inputs` and `--outputs` are required (the legacy A1 mode without them is gone).
//!
//! This crate's core (arguments, raw safetensors tensors, the timed run, errors) has no burn in
//! it, so the tract and ONNX Runtime programs link none; the burn conversions (`TensorData`,
//! [`FromInput`], [`IntoOutput`], [`run_protocol`]) come with the default feature `burn`.

use std::collections::BTreeMap;
use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub use safetensors::Dtype;
use safetensors::{SafeTensors, tensor::TensorView};

#[cfg(feature = "burn")]
mod burn_io;
#[cfg(feature = "burn")]
pub use burn_io::*;

pub const DEFAULT_REPEAT: usize = 10;
/// `--repeat` and `--warmup` at most this: the line's raw times stay bounded.
pub const MAX_REPEAT: usize = 10_000;

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

/// `--inputs/--outputs/--repeat/--warmup/--threads` of the protocol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Protocol {
    pub inputs: PathBuf,
    pub outputs: PathBuf,
    pub repeat: usize,
    pub warmup: usize,
    pub threads: usize,
    /// The threads the runtime reports using, once the program applied `threads` (None: unknown).
    pub threads_reported: Option<usize>,
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
    format!(
        "usage: {prog} {m}--inputs IN.safetensors --outputs OUT.safetensors [--repeat K] [--warmup W] [--threads T]"
    )
}

/// Parses the arguments after the program name.
pub fn parse_args(args: impl IntoIterator<Item = String>, model: ModelArg) -> Result<Cli, String> {
    let mut positional = Vec::new();
    let (mut inputs, mut outputs, mut repeat) = (None, None, None);
    let (mut warmup, mut threads) = (None, None);
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
            "--warmup" => &mut warmup,
            "--threads" => &mut threads,
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
        (Some(i), Some(o)) => Protocol {
            inputs: i.into(),
            outputs: o.into(),
            repeat: count("--repeat", repeat, DEFAULT_REPEAT, 0)?,
            warmup: count("--warmup", warmup, 0, 0)?,
            threads: count("--threads", threads, 1, 1)?,
            threads_reported: None,
        },
        (Some(_), None) | (None, None) => return Err("--outputs is required".into()),
        (None, Some(_)) => return Err("--inputs is required".into()),
    };
    Ok(Cli { model, protocol })
}

/// A count flag's value, from `least` to [`MAX_REPEAT`] (`default` when not given).
fn count(flag: &str, value: Option<String>, default: usize, least: usize) -> Result<usize, String> {
    let Some(text) = value else {
        return Ok(default);
    };
    text.parse::<usize>()
        .ok()
        .filter(|k| (least..=MAX_REPEAT).contains(k))
        .ok_or_else(|| format!("{flag} wants a whole number from {least} to {MAX_REPEAT}, got {text:?}"))
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
// safetensors in and out, as raw tensors

/// One tensor of a protocol file: its safetensors dtype, shape and little-endian bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawTensor {
    pub dtype: Dtype,
    pub shape: Vec<usize>,
    pub data: Vec<u8>,
}

/// The inputs' names in call order: the `inputs` metadata entry, else `input_0`, `input_1`, ...
fn call_order(st: &SafeTensors, listed: Option<&String>) -> Result<Vec<String>, String> {
    let mut held: Vec<String> = st.names().into_iter().map(String::from).collect();
    held.sort();
    if let Some(listed) = listed {
        let order: Vec<String> = listed
            .split(',')
            .filter(|n| !n.is_empty())
            .map(String::from)
            .collect();
        let mut sorted = order.clone();
        sorted.sort();
        if sorted != held {
            return Err(format!(
                "holds {held:?} but its metadata lists {order:?}"
            ));
        }
        return Ok(order);
    }
    let mut found = BTreeMap::new();
    for name in held {
        let index = name
            .strip_prefix("input_")
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|i| format!("input_{i}") == name)
            .ok_or_else(|| {
                format!("unexpected tensor {name:?} (inputs are input_0, input_1, ...)")
            })?;
        found.insert(index, name);
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

/// The inputs of a safetensors buffer with their names, in call order.
pub fn decode_named_inputs(bytes: &[u8]) -> Result<Vec<(String, RawTensor)>, String> {
    let st = SafeTensors::deserialize(bytes)
        .map_err(|e| format!("not a valid safetensors file: {e}"))?;
    let (_, meta) = SafeTensors::read_metadata(bytes)
        .map_err(|e| format!("not a valid safetensors file: {e}"))?;
    let listed = meta.metadata().as_ref().and_then(|m| m.get("inputs"));
    call_order(&st, listed)?
        .into_iter()
        .map(|name| {
            let view = st.tensor(&name).map_err(|e| format!("{name}: {e}"))?;
            let raw = RawTensor {
                dtype: view.dtype(),
                shape: view.shape().to_vec(),
                data: view.data().to_vec(),
            };
            Ok((name, raw))
        })
        .collect()
}

/// The inputs of a safetensors buffer in call order (their names dropped).
pub fn decode_raw_inputs(bytes: &[u8]) -> Result<Vec<RawTensor>, String> {
    Ok(decode_named_inputs(bytes)?
        .into_iter()
        .map(|(_, t)| t)
        .collect())
}

/// A safetensors buffer holding the outputs under their names.
pub fn encode_named_outputs(outputs: Vec<(String, RawTensor)>) -> Result<Vec<u8>, String> {
    let views = outputs
        .iter()
        .map(|(name, t)| {
            TensorView::new(t.dtype, t.shape.clone(), &t.data)
                .map(|v| (name.clone(), v))
                .map_err(|e| format!("{name}: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    safetensors::serialize(views, None).map_err(|e| format!("cannot encode the outputs: {e}"))
}

/// A safetensors buffer holding the outputs as `output_0`, `output_1`, ...
pub fn encode_raw_outputs(outputs: Vec<RawTensor>) -> Result<Vec<u8>, String> {
    encode_named_outputs(
        outputs
            .into_iter()
            .enumerate()
            .map(|(i, t)| (format!("output_{i}"), t))
            .collect(),
    )
}

/// Writes `bytes` next to `path` first, then renames: OUT is never left half-written.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
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

/// The raw inputs of a protocol file with their names, in call order (its path in any error).
pub fn read_named_inputs(path: &Path) -> Result<Vec<(String, RawTensor)>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    decode_named_inputs(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// The raw inputs of a protocol file in call order (its path in any error).
pub fn read_raw_inputs(path: &Path) -> Result<Vec<RawTensor>, String> {
    Ok(read_named_inputs(path)?.into_iter().map(|(_, t)| t).collect())
}

// ---------------------------------------------------------------------------------------------
// the timed run

#[derive(Clone, Debug, PartialEq)]
pub struct Stages {
    /// Loading the runtime itself, where it is a separate library (ort-run's libonnxruntime).
    pub import: Option<f64>,
    pub load: f64,
    pub first_forward: f64,
    pub steady_forward: Option<f64>,
}

/// What the timed forwards measured (see the crate doc): the W untimed ones' count, each of the
/// K timed alone, the process's CPU time and the wall time over the K (None when K is 0).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timing {
    pub warmup: usize,
    pub forward_ms: Vec<f64>,
    pub cpu_ms: Option<f64>,
    pub loop_ms: Option<f64>,
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

fn opt<T>(x: Option<T>, f: impl Fn(T) -> String) -> String {
    x.map_or("null".to_string(), f)
}

/// The stdout line of the protocol.
pub fn report_json(stages: &Stages, outputs: usize, timing: &Timing, protocol: &Protocol) -> String {
    let import = stages
        .import
        .map_or(String::new(), |x| format!("\"import\": {}, ", ms(x)));
    let times: Vec<String> = timing.forward_ms.iter().map(|x| ms(*x)).collect();
    format!(
        "{{\"stages_ms\": {{{import}\"load\": {}, \"first_forward\": {}, \"steady_forward\": {}}}, \"outputs\": {}, \
         \"warmup\": {}, \"forward_ms\": [{}], \"cpu_ms\": {}, \"loop_ms\": {}, \
         \"threads\": {{\"requested\": {}, \"reported\": {}}}}}",
        ms(stages.load),
        ms(stages.first_forward),
        opt(stages.steady_forward, ms),
        outputs,
        timing.warmup,
        times.join(", "),
        opt(timing.cpu_ms, ms),
        opt(timing.loop_ms, ms),
        protocol.threads,
        opt(protocol.threads_reported, |n| n.to_string()),
    )
}

/// Milliseconds since `t0`.
pub fn elapsed_ms(t0: Instant) -> f64 {
    t0.elapsed().as_secs_f64() * 1e3
}

/// The CPU time this process has used so far (all its threads), ms.
pub fn process_cpu_ms() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec, which `ts` is
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
}

/// After a first call (not timed here), `warmup` untimed calls of `forward`, then `repeat` more,
/// each timed alone (its arguments, from `args`, made before the clock starts); the last call's
/// result.
pub fn timed_forwards<A, O>(
    warmup: usize,
    repeat: usize,
    first: O,
    mut args: impl FnMut() -> A,
    mut forward: impl FnMut(A) -> Result<O, String>,
) -> Result<(O, Timing), String> {
    let mut out = first;
    for _ in 0..warmup {
        out = forward(args())?;
    }
    let mut timing = Timing {
        warmup,
        forward_ms: Vec::with_capacity(repeat),
        ..Timing::default()
    };
    let (cpu0, wall0) = (process_cpu_ms(), Instant::now());
    for _ in 0..repeat {
        let a = args();
        let t0 = Instant::now();
        out = forward(a)?;
        timing.forward_ms.push(elapsed_ms(t0));
    }
    if repeat > 0 {
        timing.cpu_ms = Some(process_cpu_ms() - cpu0);
        timing.loop_ms = Some(elapsed_ms(wall0));
    }
    Ok((out, timing))
}

/// Reads the inputs (`decode`), then times `load`, the first `forward`, `warmup` untimed and
/// `repeat` timed more, writes the last outputs (`encode`) and returns the JSON line (with
/// `import`, when given: the time the program took to load its runtime before).
pub fn run_protocol_with<I: Clone, O, M>(
    protocol: &Protocol,
    import: Option<f64>,
    decode: impl FnOnce(Vec<RawTensor>) -> Result<Vec<I>, String>,
    encode: impl FnOnce(Vec<O>) -> Result<Vec<u8>, String>,
    load: impl FnOnce() -> Result<M, String>,
    mut forward: impl FnMut(&M, Vec<I>) -> Result<Vec<O>, String>,
) -> Result<String, String> {
    let path = &protocol.inputs;
    let inputs = decode(read_raw_inputs(path)?).map_err(|e| format!("{}: {e}", path.display()))?;
    let t0 = Instant::now();
    let model = load()?;
    let load_ms = elapsed_ms(t0);

    let t0 = Instant::now();
    let first = forward(&model, inputs.clone())?;
    let first_ms = elapsed_ms(t0);

    let (outputs, timing) = timed_forwards(
        protocol.warmup,
        protocol.repeat,
        first,
        || inputs.clone(),
        |xs| forward(&model, xs),
    )?;
    let n = outputs.len();
    write_atomic(&protocol.outputs, &encode(outputs)?)?;
    let stages = Stages {
        import,
        load: load_ms,
        first_forward: first_ms,
        steady_forward: median(&timing.forward_ms),
    };
    Ok(report_json(&stages, n, &timing, protocol))
}

/// [`run_protocol_with`] on raw tensors, for a `main`: prints the line, or exits with a
/// one-line error. The program turns raw tensors into its own (inside the forward stage); it gets
/// the inputs in call order, names them as [`read_named_inputs`] does and names its outputs.
pub fn raw_protocol_main<M>(
    protocol: &Protocol,
    import: Option<f64>,
    load: impl FnOnce() -> Result<M, String>,
    forward: impl FnMut(&M, Vec<RawTensor>) -> Result<Vec<(String, RawTensor)>, String>,
) {
    match run_protocol_with(protocol, import, Ok, encode_named_outputs, load, forward) {
        Ok(line) => println!("{line}"),
        Err(e) => fail(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn s(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| a.to_string()).collect()
    }

    pub(crate) fn tmp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("runner-io-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    pub(crate) fn encode_inputs(tensors: &[(&str, Dtype, Vec<usize>, Vec<u8>)]) -> Vec<u8> {
        let views: Vec<_> = tensors
            .iter()
            .map(|(n, d, s, b)| (n.to_string(), TensorView::new(*d, s.clone(), b).unwrap()))
            .collect();
        safetensors::serialize(views, None).unwrap()
    }

    #[test]
    fn arguments() {
        let m = ModelArg::Required("MODEL.BPK");
        let cli = parse_args(s(&["m.bpk", "--inputs", "i.st", "--outputs=o.st"]), m).unwrap();
        assert_eq!(cli.model.as_deref(), Some("m.bpk"));
        let p = cli.protocol;
        assert_eq!(
            (p.inputs, p.outputs, p.repeat),
            ("i.st".into(), "o.st".into(), 10)
        );
        let cli = parse_args(
            s(&["--repeat", "0", "--inputs", "a", "--outputs", "b"]),
            ModelArg::None,
        );
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

    #[test]
    fn raw_inputs_and_outputs() {
        let fb: Vec<u8> = (0..8).flat_map(|k| (k as f32).to_le_bytes()).collect();
        let ib: Vec<u8> = [5i64, -2].iter().flat_map(|x| x.to_le_bytes()).collect();
        let bytes = encode_inputs(&[
            ("input_1", Dtype::I64, vec![2], ib.clone()),
            ("input_0", Dtype::F32, vec![2, 4], fb.clone()),
        ]);
        let raw = decode_raw_inputs(&bytes).unwrap();
        assert_eq!(
            raw[0],
            RawTensor {
                dtype: Dtype::F32,
                shape: vec![2, 4],
                data: fb.clone()
            }
        );
        assert_eq!(
            raw[1],
            RawTensor {
                dtype: Dtype::I64,
                shape: vec![2],
                data: ib
            }
        );
        for cut in [0, 7, 8, bytes.len() / 2, bytes.len() - 1] {
            assert!(decode_raw_inputs(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let gap = encode_inputs(&[("input_1", Dtype::F32, vec![2, 4], fb.clone())]);
        assert!(
            decode_raw_inputs(&gap)
                .unwrap_err()
                .contains("input_0 is missing")
        );
        let named = encode_inputs(&[("x", Dtype::F32, vec![2, 4], fb)]);
        assert!(
            decode_raw_inputs(&named)
                .unwrap_err()
                .contains("unexpected tensor")
        );

        let back = encode_raw_outputs(raw.clone()).unwrap();
        let st = SafeTensors::deserialize(&back).unwrap();
        assert_eq!(st.tensor("output_0").unwrap().data(), &raw[0].data[..]);
        assert_eq!(st.tensor("output_1").unwrap().dtype(), Dtype::I64);
        let short = RawTensor {
            dtype: Dtype::F32,
            shape: vec![3],
            data: vec![0; 4],
        };
        assert!(encode_raw_outputs(vec![short]).is_err());
    }

    #[test]
    fn named_inputs_in_the_order_their_metadata_lists() {
        let fb: Vec<u8> = (0..4).flat_map(|k| (k as f32).to_le_bytes()).collect();
        let ib: Vec<u8> = [1i64, 0].iter().flat_map(|x| x.to_le_bytes()).collect();
        let views = vec![
            (
                "input_ids".to_string(),
                TensorView::new(Dtype::F32, vec![4], &fb).unwrap(),
            ),
            (
                "attention_mask".to_string(),
                TensorView::new(Dtype::I64, vec![2], &ib).unwrap(),
            ),
        ];
        let listed = |order: &str| {
            let meta = std::collections::HashMap::from([("inputs".to_string(), order.to_string())]);
            safetensors::serialize(views.clone(), Some(meta)).unwrap()
        };
        let named = decode_named_inputs(&listed("input_ids,attention_mask")).unwrap();
        let names: Vec<&str> = named.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["input_ids", "attention_mask"]);
        assert_eq!(named[1].1.dtype, Dtype::I64);
        let err = decode_named_inputs(&listed("input_ids")).unwrap_err();
        assert!(err.contains("metadata lists"), "{err}");
        // without the list, names other than input_N are an error
        let bare = safetensors::serialize(views.clone(), None).unwrap();
        assert!(decode_named_inputs(&bare).unwrap_err().contains("unexpected tensor"));
        let out = encode_named_outputs(vec![("logits".into(), named[0].1.clone())]).unwrap();
        assert!(SafeTensors::deserialize(&out).unwrap().tensor("logits").is_ok());
    }

    #[test]
    fn raw_protocol_run() {
        let fb: Vec<u8> = (0..4).flat_map(|k| (k as f32).to_le_bytes()).collect();
        let inputs = tmp("raw-in.safetensors");
        std::fs::write(
            &inputs,
            encode_inputs(&[("input_0", Dtype::F32, vec![4], fb)]),
        )
        .unwrap();
        let outputs = tmp("raw-out.safetensors");
        let p = Protocol {
            inputs: inputs.clone(),
            outputs: outputs.clone(),
            repeat: 2,
            warmup: 0,
            threads: 1,
            threads_reported: Some(1),
        };
        let mut calls = 0;
        let line = run_protocol_with(
            &p,
            Some(1.5),
            Ok,
            encode_raw_outputs,
            || Ok(()),
            |_, xs| {
                calls += 1;
                Ok(xs)
            },
        )
        .unwrap();
        assert_eq!(calls, 3);
        assert!(
            line.starts_with("{\"stages_ms\": {\"import\": 1.5, \"load\": "),
            "{line}"
        );
        assert!(line.contains(", \"outputs\": 1, \"warmup\": 0, \"forward_ms\": ["), "{line}");
        assert!(line.ends_with("{\"requested\": 1, \"reported\": 1}}"), "{line}");
        let back = std::fs::read(&outputs).unwrap();
        assert_eq!(
            SafeTensors::deserialize(&back)
                .unwrap()
                .tensor("output_0")
                .unwrap()
                .shape(),
            &[4]
        );
        std::fs::write(&inputs, b"damaged").unwrap();
        let err = run_protocol_with(&p, None, Ok, encode_raw_outputs, || Ok(()), |_, xs| Ok(xs))
            .unwrap_err();
        assert!(
            err.starts_with(&format!(
                "{}: not a valid safetensors file",
                inputs.display()
            )),
            "{err}"
        );
        std::fs::remove_file(&inputs).ok();
        std::fs::remove_file(&outputs).ok();
    }

    #[test]
    fn medians_and_numbers() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        let p = parse_args(
            s(&["--inputs", "a", "--outputs", "b", "--threads", "2"]),
            ModelArg::None,
        )
        .unwrap()
        .protocol;
        let timing = Timing {
            warmup: 3,
            forward_ms: vec![0.25, 0.5],
            cpu_ms: Some(1.5),
            loop_ms: Some(0.75),
        };
        let line = report_json(
            &Stages {
                import: None,
                load: 1.23456789,
                first_forward: 0.5,
                steady_forward: Some(0.25),
            },
            2,
            &timing,
            &p,
        );
        assert_eq!(
            line,
            r#"{"stages_ms": {"load": 1.234568, "first_forward": 0.5, "steady_forward": 0.25}, "outputs": 2, "warmup": 3, "forward_ms": [0.25, 0.5], "cpu_ms": 1.5, "loop_ms": 0.75, "threads": {"requested": 2, "reported": null}}"#
        );
    }

    /// Each forward is timed alone: a forward that burns 5 ms of its thread's CPU reads 5 ms or
    /// more (its arguments, made in 5 ms of sleep before each call, not counted), and the
    /// process's CPU time over the loop is what the forwards burnt; one that sleeps reads its
    /// sleep and almost no CPU. No bound on wall times: the machine may be shared and loaded.
    #[test]
    fn timing_against_a_known_spin_and_sleep() {
        let thread_ms = || {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: clock_gettime writes one timespec, which `ts` is
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
            ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
        };
        let spin = |ms: f64| {
            let t0 = thread_ms();
            while thread_ms() - t0 < ms {
                std::hint::spin_loop();
            }
        };
        let slow_args = || std::thread::sleep(std::time::Duration::from_millis(5));
        let (_, t) = timed_forwards(2, 20, (), slow_args, |()| {
            spin(5.0);
            Ok(())
        })
        .unwrap();
        assert_eq!((t.warmup, t.forward_ms.len()), (2, 20));
        assert!(t.forward_ms.iter().all(|x| *x >= 5.0), "{:?}", t.forward_ms);
        let cpu = t.cpu_ms.unwrap();
        assert!((90.0..130.0).contains(&cpu), "20 x 5 ms burnt: {cpu}");
        let sleeps = 20.0 * 5.0;
        assert!(t.loop_ms.unwrap() >= t.forward_ms.iter().sum::<f64>() + sleeps);
        let (_, t) = timed_forwards(0, 10, (), || (), |()| {
            std::thread::sleep(std::time::Duration::from_millis(5));
            Ok(())
        })
        .unwrap();
        assert!(t.forward_ms.iter().all(|x| *x >= 5.0), "{:?}", t.forward_ms);
        assert!(t.cpu_ms.unwrap() < 5.0, "{t:?}");
        let err = parse_args(s(&["--inputs", "a", "--outputs", "b", "--threads", "0"]), ModelArg::None);
        assert!(err.unwrap_err().contains("--threads wants a whole number from 1"));
        let err = parse_args(s(&["--inputs", "a", "--outputs", "b", "--repeat", "10001"]), ModelArg::None);
        assert!(err.is_err());
    }
}
