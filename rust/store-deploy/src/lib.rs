//! The A1 MLP in burn, and what every runner binary shares: the reference input, the forward,
//! the one-line JSON output and the one-line error exit.

use std::collections::BTreeMap;
use std::fmt::Display;

use burn::module::{ModuleMapper, Param, ParamId};
use burn::nn::{Linear, LinearConfig, Relu};
use burn::prelude::*;

pub const D_IN: usize = 4;
pub const D_HIDDEN: usize = 8;
pub const D_OUT: usize = 3;
pub const BATCH: usize = 4;

/// fc1 Linear 4->8, ReLU, fc2 Linear 8->3; parameter paths fc1.weight, fc1.bias, fc2.weight,
/// fc2.bias like the PyTorch module (burn keeps Linear weights as [in, out]).
#[derive(Module, Debug)]
pub struct Mlp {
    pub fc1: Linear,
    pub act: Relu,
    pub fc2: Linear,
}

impl Mlp {
    /// The architecture with freshly initialised (random) parameters; load a record into it.
    pub fn new(device: &Device) -> Self {
        Self {
            fc1: LinearConfig::new(D_IN, D_HIDDEN).init(device),
            act: Relu::new(),
            fc2: LinearConfig::new(D_HIDDEN, D_OUT).init(device),
        }
    }

    pub fn forward(&self, x: Tensor<2>) -> Tensor<2> {
        self.fc2.forward(self.act.forward(self.fc1.forward(x)))
    }

    /// Numbers the parameters 1, 2, ... in module order instead of the random ids `init` draws:
    /// burnpack stores each parameter's id, so this makes a saved .bpk byte-reproducible.
    pub fn with_stable_param_ids(self) -> Self {
        self.map(&mut StableIds(0))
    }
}

struct StableIds(u64);

impl ModuleMapper for StableIds {
    fn map_float<const D: usize>(&mut self, mut param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        self.0 += 1;
        param.id = ParamId::from(self.0);
        param
    }
}

/// The reference input, row-major: element k is 0.1*k - 0.5 computed in f64, stored as f32.
pub fn input_values() -> Vec<f32> {
    (0..BATCH * D_IN)
        .map(|k| (0.1 * k as f64 - 0.5) as f32)
        .collect()
}

pub fn input(device: &Device) -> Tensor<2> {
    Tensor::<2>::from_data(TensorData::new(input_values(), [BATCH, D_IN]), device)
}

/// Runs the forward on the reference input and returns the logits as rows.
pub fn logits(model: &Mlp, device: &Device) -> Result<Vec<Vec<f32>>, String> {
    let out = model.forward(input(device));
    let [rows, cols] = out.dims();
    let flat = out
        .try_into_vec_as::<f32>()
        .map_err(|e| one_line(format!("{e:?}")))?;
    Ok(flat.chunks(cols).take(rows).map(<[f32]>::to_vec).collect())
}

/// The JSON line every runner prints: {"logits":[[..],..]} with f32 round-trip precision.
pub fn logits_json(rows: &[Vec<f32>]) -> String {
    let mut obj = BTreeMap::new();
    obj.insert("logits", rows);
    serde_json::to_string(&obj).expect("a map of f32 rows serialises")
}

/// Forward + print the JSON line, or exit with a one-line error.
pub fn run(model: &Mlp, device: &Device) {
    match logits(model, device) {
        Ok(rows) => println!("{}", logits_json(&rows)),
        Err(e) => fail(format!("forward failed: {e}")),
    }
}

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

/// Turns any panic (e.g. inside a loader on a damaged file) into a one-line error and exit 1,
/// instead of a message plus backtrace (RUST_BACKTRACE may be set) and exit 101.
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

/// The single positional argument of a runner, or a one-line usage error.
pub fn one_arg(what: &str) -> String {
    let mut args = std::env::args().skip(1);
    match (args.next(), args.next()) {
        (Some(a), None) => a,
        _ => {
            let prog = std::env::args().next().unwrap_or_else(|| "runner".into());
            fail(format!("usage: {prog} {what}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::module::Param;

    /// PyTorch-layout ([out, in]) closed-form weights of A1, as in deploytui/a1.py.
    fn torch_weights() -> (Vec<f32>, Vec<f32>, Vec<f32>, Vec<f32>) {
        let w1 = (0..D_HIDDEN)
            .flat_map(|i| (0..D_IN).map(move |j| ((((4 * i + j) % 7) as f64 - 3.0) * 0.1) as f32))
            .collect();
        let b1 = (0..D_HIDDEN)
            .map(|i| (0.05 * (i as f64 - 4.0)) as f32)
            .collect();
        let w2 = (0..D_OUT)
            .flat_map(|i| {
                (0..D_HIDDEN).map(move |j| ((((8 * i + j) % 5) as f64 - 2.0) * 0.1) as f32)
            })
            .collect();
        let b2 = (0..D_OUT)
            .map(|i| (0.1 * (i as f64 - 1.0)) as f32)
            .collect();
        (w1, b1, w2, b2)
    }

    fn linear(
        w_out_in: Vec<f32>,
        b: Vec<f32>,
        d_in: usize,
        d_out: usize,
        device: &Device,
    ) -> Linear {
        // burn stores [in, out]: transpose PyTorch's [out, in] (as contiguous data, like a
        // loaded record; a transposed view would sum in another order)
        let w_in_out: Vec<f32> = (0..d_in * d_out)
            .map(|k| w_out_in[(k % d_out) * d_in + k / d_out])
            .collect();
        let w = Tensor::<2>::from_data(TensorData::new(w_in_out, [d_in, d_out]), device);
        let b = Tensor::<1>::from_data(TensorData::new(b, [d_out]), device);
        let mut l = LinearConfig::new(d_in, d_out).init(device);
        l.weight = Param::from_tensor(w);
        l.bias = Some(Param::from_tensor(b));
        l
    }

    fn a1_model(device: &Device) -> Mlp {
        let (w1, b1, w2, b2) = torch_weights();
        Mlp {
            fc1: linear(w1, b1, D_IN, D_HIDDEN, device),
            act: Relu::new(),
            fc2: linear(w2, b2, D_HIDDEN, D_OUT, device),
        }
    }

    /// Plain f64 forward of the same numbers, the reference for the burn forward.
    fn reference() -> Vec<Vec<f64>> {
        let (w1, b1, w2, b2) = torch_weights();
        let x = input_values();
        (0..BATCH)
            .map(|r| {
                let h: Vec<f64> = (0..D_HIDDEN)
                    .map(|i| {
                        let s: f64 = (0..D_IN)
                            .map(|j| w1[i * D_IN + j] as f64 * x[r * D_IN + j] as f64)
                            .sum();
                        (s + b1[i] as f64).max(0.0)
                    })
                    .collect();
                (0..D_OUT)
                    .map(|i| {
                        (0..D_HIDDEN)
                            .map(|j| w2[i * D_HIDDEN + j] as f64 * h[j])
                            .sum::<f64>()
                            + b2[i] as f64
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn input_formula_matches_python() {
        let x = input_values();
        assert_eq!(x.len(), 16);
        assert_eq!(x[0], -0.5f32);
        assert_eq!(x[5], (0.1f64 * 5.0 - 0.5) as f32);
        assert_eq!(x[15], (0.1f64 * 15.0 - 0.5) as f32);
        assert_eq!(x[15], 1.0f32);
    }

    #[test]
    fn forward_on_known_weights() {
        let device = Device::flex();
        let got = logits(&a1_model(&device), &device).unwrap();
        let want = reference();
        assert_eq!(got.len(), BATCH);
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.len(), D_OUT);
            for (a, b) in g.iter().zip(w) {
                assert!((*a as f64 - b).abs() <= 1e-6, "{a} vs {b}");
            }
        }
        // the page's numbers
        assert!((got[0][0] + 0.132).abs() < 1e-6 && (got[3][1] - 0.142).abs() < 1e-6);
    }

    #[test]
    fn bpk_roundtrip_file_and_bytes() {
        let device = Device::flex();
        let want = logits(&a1_model(&device), &device).unwrap();
        let dir = std::env::temp_dir().join(format!("store-deploy-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a1.bpk");
        a1_model(&device).save_file(&path).unwrap();
        let from_file = Mlp::new(&device).try_load_file(&path).unwrap();
        assert_eq!(logits(&from_file, &device).unwrap(), want);

        let bytes = std::fs::read(&path).unwrap();
        let record =
            burn::store::ModuleRecord::from_bytes(burn::tensor::Bytes::from_bytes_vec(bytes))
                .unwrap();
        let from_bytes = Mlp::new(&device).try_load_record(record).unwrap();
        assert_eq!(logits(&from_bytes, &device).unwrap(), want);

        // stable ids: saving twice gives the same bytes
        let again = dir.join("again.bpk");
        let stable = |p: &std::path::Path| {
            let m = Mlp::new(&device)
                .try_load_file(&path)
                .unwrap()
                .with_stable_param_ids();
            m.save_file(p).unwrap();
            std::fs::read(p).unwrap()
        };
        assert_eq!(stable(&again), stable(&dir.join("again2.bpk")));

        // damaged file: an error, not a panic
        let full = std::fs::read(&path).unwrap();
        std::fs::write(&path, &full[..full.len() / 2]).unwrap();
        assert!(Mlp::new(&device).try_load_file(&path).is_err());
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn json_keeps_f32_round_trip() {
        let s = logits_json(&[vec![0.1f32, -0.132, 1.0]]);
        assert_eq!(s, r#"{"logits":[[0.1,-0.132,1.0]]}"#);
    }
}
