//! A configurable MLP in burn (Linear layers with ReLU between; A1 is [4, 8, 3]) and what every
//! burn-mlp program shares: loading it from a .bpk or PyTorch safetensors with the layer sizes
//! read from the weights' shapes, and the protocol forward.

use std::collections::BTreeMap;
use std::path::Path;

use burn::module::{ModuleMapper, Param, ParamId};
use burn::nn::{Linear, LinearConfig, Relu};
use burn::prelude::*;
use burn::store::ModuleRecord;
use burn::tensor::Bytes;
use runner_io::{FromInput, IntoOutput};

pub use runner_io::{fail, one_line, quiet_panics};

/// A1's layer sizes: Linear 4->8, ReLU, Linear 8->3.
pub const A1_SIZES: [usize; 3] = [4, 8, 3];
pub const D_IN: usize = A1_SIZES[0];
pub const D_OUT: usize = A1_SIZES[2];
pub const BATCH: usize = 4;

/// The shape of an MLP: `sizes` = [d_in, hidden..., d_out] (one Linear per pair), and whether
/// each Linear has a bias.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub sizes: Vec<usize>,
    pub bias: Vec<bool>,
}

impl Layout {
    /// All layers with a bias (nn.Linear's default).
    pub fn new(sizes: &[usize]) -> Self {
        Self {
            sizes: sizes.to_vec(),
            bias: vec![true; sizes.len().saturating_sub(1)],
        }
    }
}

/// Where the weights come from: PyTorch names `fc1.weight` [out, in] ... `fcN.weight`, or burn's
/// own `layers.0.weight` [in, out] ... (what `burn-convert` writes into a .bpk).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Names {
    Torch,
    Burn,
}

impl Names {
    fn weight(self, layer: usize) -> String {
        match self {
            Names::Torch => format!("fc{}.weight", layer + 1),
            Names::Burn => format!("layers.{layer}.weight"),
        }
    }

    fn bias(self, layer: usize) -> String {
        match self {
            Names::Torch => format!("fc{}.bias", layer + 1),
            Names::Burn => format!("layers.{layer}.bias"),
        }
    }
}

/// The layout from the weights' shapes (name -> shape); the layers are numbered from 1 (Torch) or
/// 0 (Burn) without gaps, each one's input is the previous one's output. Tensors that are not
/// weights or biases of those layers are left to the loader (which rejects unused tensors).
pub fn layout_from_shapes(
    shapes: &BTreeMap<String, Vec<usize>>,
    names: Names,
) -> Result<Layout, String> {
    let mut sizes: Vec<usize> = Vec::new();
    let mut bias = Vec::new();
    for layer in 0.. {
        let Some(shape) = shapes.get(&names.weight(layer)) else {
            break;
        };
        let [d_in, d_out] = match (names, shape.as_slice()) {
            (Names::Torch, [o, i]) => [*i, *o],
            (Names::Burn, [i, o]) => [*i, *o],
            _ => {
                return Err(format!(
                    "{} has shape {shape:?}, not 2-D",
                    names.weight(layer)
                ));
            }
        };
        match sizes.last() {
            None => sizes.push(d_in),
            Some(&prev) if prev != d_in => {
                return Err(format!(
                    "{} takes {d_in} features but the layer before gives {prev}",
                    names.weight(layer)
                ));
            }
            Some(_) => {}
        }
        sizes.push(d_out);
        bias.push(shapes.contains_key(&names.bias(layer)));
    }
    if sizes.is_empty() {
        return Err(format!(
            "no {} among the tensors ({})",
            names.weight(0),
            shapes.keys().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    Ok(Layout { sizes, bias })
}

/// Linear layers `layers.0 .. layers.N-1` with ReLU between (not after the last); parameter paths
/// `layers.{i}.weight` / `.bias` (burn keeps Linear weights as [in, out]).
#[derive(Module, Debug)]
pub struct Mlp {
    pub layers: Vec<Linear>,
    pub act: Relu,
}

impl Mlp {
    /// The architecture with freshly initialised (random) parameters; load a record into it.
    pub fn new(layout: &Layout, device: &Device) -> Self {
        let layers = layout
            .sizes
            .windows(2)
            .zip(&layout.bias)
            .map(|(io, b)| LinearConfig::new(io[0], io[1]).with_bias(*b).init(device))
            .collect();
        Self {
            layers,
            act: Relu::new(),
        }
    }

    /// A1's architecture, [4, 8, 3].
    pub fn a1(device: &Device) -> Self {
        Self::new(&Layout::new(&A1_SIZES), device)
    }

    /// Input features (the first layer's d_in).
    pub fn d_in(&self) -> usize {
        self.layers.first().map_or(0, |l| l.weight.dims()[0])
    }

    pub fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        let last = self.layers.len().saturating_sub(1);
        self.layers.iter().enumerate().fold(x, |x, (i, l)| {
            let y = l.forward(x);
            if i < last { self.act.forward(y) } else { y }
        })
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

fn bpk_shapes(reader: burn_pack::Reader) -> Result<BTreeMap<String, Vec<usize>>, String> {
    let tensors = reader.into_tensors().map_err(|e| e.to_string())?;
    Ok(tensors
        .into_iter()
        .map(|t| (t.name, t.shape.as_slice().to_vec()))
        .collect())
}

/// An Mlp of any layout from a .bpk written by `burn-convert` (sizes from its tensors' shapes).
pub fn load_bpk(path: &str, device: &Device) -> Result<Mlp, String> {
    let err = |e: String| format!("cannot load {path}: {e}");
    let reader = burn_pack::Reader::from_file(path).map_err(|e| err(e.to_string()))?;
    let layout = layout_from_shapes(&bpk_shapes(reader).map_err(err)?, Names::Burn).map_err(err)?;
    Mlp::new(&layout, device)
        .try_load_file(path)
        .map_err(|e| err(e.to_string()))
}

/// The same from .bpk bytes (burn-embed's compiled-in weights).
pub fn load_bpk_bytes(bytes: &[u8], device: &Device) -> Result<Mlp, String> {
    let reader = burn_pack::Reader::from_bytes(Bytes::from_bytes_vec(bytes.to_vec()))
        .map_err(|e| e.to_string())?;
    let layout = layout_from_shapes(&bpk_shapes(reader)?, Names::Burn)?;
    let record =
        ModuleRecord::from_bytes(Bytes::from_bytes_vec(bytes.to_vec())).map_err(|e| e.to_string())?;
    Mlp::new(&layout, device)
        .try_load_record(record)
        .map_err(|e| format!("the weights do not fit the model: {e}"))
}

/// Name -> shape of every tensor in a safetensors file, from its header only (8-byte length,
/// then JSON) without reading the data.
pub fn safetensors_shapes(path: &Path) -> Result<BTreeMap<String, Vec<usize>>, String> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut len = [0u8; 8];
    f.read_exact(&mut len)
        .map_err(|e| format!("no safetensors header: {e}"))?;
    let n = u64::from_le_bytes(len);
    if n > 100_000_000 {
        return Err(format!("header length {n} is not plausible"));
    }
    let mut header = vec![0u8; n as usize];
    f.read_exact(&mut header)
        .map_err(|e| format!("truncated safetensors header: {e}"))?;
    let json: serde_json::Value =
        serde_json::from_slice(&header).map_err(|e| format!("bad safetensors header: {e}"))?;
    let obj = json.as_object().ok_or("the safetensors header is not an object")?;
    let mut shapes = BTreeMap::new();
    for (name, info) in obj.iter().filter(|(k, _)| *k != "__metadata__") {
        let shape = info["shape"]
            .as_array()
            .and_then(|s| s.iter().map(|d| d.as_u64().map(|d| d as usize)).collect())
            .ok_or_else(|| format!("{name}: no shape in the header"))?;
        shapes.insert(name.clone(), shape);
    }
    Ok(shapes)
}

/// An Mlp of any layout from PyTorch safetensors (`fc1.weight` ...): sizes from the header,
/// weights through SafetensorsStore + PyTorchToBurnAdapter (transposes Linear weights), names
/// mapped `fcK.` -> `layers.{K-1}.`. Missing or unused tensors are errors.
pub fn load_safetensors(path: &str, device: &Device) -> Result<Mlp, String> {
    use burn::store::{ModuleSnapshot, PyTorchToBurnAdapter, SafetensorsStore};
    let err = |e: String| format!("cannot load {path}: {e}");
    let shapes = safetensors_shapes(Path::new(path)).map_err(err)?;
    let layout = layout_from_shapes(&shapes, Names::Torch).map_err(err)?;
    let mut model = Mlp::new(&layout, device);
    let mut store = SafetensorsStore::from_file(path).with_from_adapter(PyTorchToBurnAdapter);
    for k in 1..layout.sizes.len() {
        store = store.with_key_remapping(format!(r"^fc{k}\."), format!("layers.{}.", k - 1));
    }
    let result = model
        .load_from(&mut store)
        .map_err(|e| err(e.to_string()))?;
    if !result.unused.is_empty() {
        return Err(err(format!("unexpected tensors {:?}", result.unused)));
    }
    if !result.missing.is_empty() {
        return Err(err(format!("missing tensors {:?}", result.missing)));
    }
    Ok(model)
}

/// The protocol forward: one input (F32, rank 1 to 4, last dimension d_in), one output.
pub fn forward_data(
    model: &Mlp,
    inputs: Vec<TensorData>,
    device: &Device,
) -> Result<Vec<TensorData>, String> {
    let [x]: [TensorData; 1] = inputs
        .try_into()
        .map_err(|v: Vec<TensorData>| format!("the MLP takes 1 input, got {}", v.len()))?;
    let d_in = model.d_in();
    let shape = x.shape().as_slice().to_vec();
    if shape.last() != Some(&d_in) {
        return Err(format!(
            "input_0: the MLP takes [..., {d_in}], got {shape:?}"
        ));
    }
    let out = match x.rank() {
        1 => model.forward(Tensor::<1>::from_input(x, device, 0)?).into_output(),
        2 => model.forward(Tensor::<2>::from_input(x, device, 0)?).into_output(),
        3 => model.forward(Tensor::<3>::from_input(x, device, 0)?).into_output(),
        4 => model.forward(Tensor::<4>::from_input(x, device, 0)?).into_output(),
        r => Err(format!("input_0: rank {r} is not supported (1 to 4)")),
    }?;
    Ok(vec![out])
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::module::Param;

    /// A1's input as deploytui/a1.py builds it: element k is 0.1*k - 0.5 in f64, stored as f32.
    fn input_values() -> Vec<f32> {
        (0..BATCH * D_IN)
            .map(|k| (0.1 * k as f64 - 0.5) as f32)
            .collect()
    }

    /// The forward on A1's input as rows (an error for an MLP that does not take 4 features).
    fn logits(model: &Mlp, device: &Device) -> Result<Vec<Vec<f32>>, String> {
        if model.d_in() != D_IN {
            return Err(format!("A1's input is [{BATCH}, {D_IN}]; this MLP takes {}", model.d_in()));
        }
        let x = Tensor::<2>::from_data(TensorData::new(input_values(), [BATCH, D_IN]), device);
        let out = model.forward(x);
        let [rows, cols] = out.dims();
        let flat = out
            .try_into_vec_as::<f32>()
            .map_err(|e| one_line(format!("{e:?}")))?;
        Ok(flat.chunks(cols).take(rows).map(<[f32]>::to_vec).collect())
    }

    /// PyTorch-layout ([out, in]) closed-form weights of A1, as in deploytui/a1.py.
    fn torch_weights() -> (Vec<f32>, Vec<f32>, Vec<f32>, Vec<f32>) {
        let w1 = (0..8)
            .flat_map(|i| (0..D_IN).map(move |j| ((((4 * i + j) % 7) as f64 - 3.0) * 0.1) as f32))
            .collect();
        let b1 = (0..8).map(|i| (0.05 * (i as f64 - 4.0)) as f32).collect();
        let w2 = (0..D_OUT)
            .flat_map(|i| (0..8).map(move |j| ((((8 * i + j) % 5) as f64 - 2.0) * 0.1) as f32))
            .collect();
        let b2 = (0..D_OUT).map(|i| (0.1 * (i as f64 - 1.0)) as f32).collect();
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
            layers: vec![
                linear(w1, b1, D_IN, 8, device),
                linear(w2, b2, 8, D_OUT, device),
            ],
            act: Relu::new(),
        }
    }

    /// Plain f64 forward of the same numbers, the reference for the burn forward.
    fn reference() -> Vec<Vec<f64>> {
        let (w1, b1, w2, b2) = torch_weights();
        let x = input_values();
        (0..BATCH)
            .map(|r| {
                let h: Vec<f64> = (0..8)
                    .map(|i| {
                        let s: f64 = (0..D_IN)
                            .map(|j| w1[i * D_IN + j] as f64 * x[r * D_IN + j] as f64)
                            .sum();
                        (s + b1[i] as f64).max(0.0)
                    })
                    .collect();
                (0..D_OUT)
                    .map(|i| {
                        (0..8).map(|j| w2[i * 8 + j] as f64 * h[j]).sum::<f64>() + b2[i] as f64
                    })
                    .collect()
            })
            .collect()
    }

    fn tmp_dir(tag: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("burn-mlp-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn input_formula_matches_python() {
        let x = input_values();
        assert_eq!(x.len(), 16);
        assert_eq!(x[0], -0.5f32);
        assert_eq!(x[5], (0.1f64 * 5.0 - 0.5) as f32);
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
        // the protocol forward gives the same, for rank 2 and rank 3 inputs
        let x = TensorData::new(input_values(), [BATCH, D_IN]);
        let out = forward_data(&a1_model(&device), vec![x], &device).unwrap();
        let flat = out[0].clone().try_into_vec::<f32>().unwrap();
        assert_eq!(flat, got.concat());
        let x3 = TensorData::new(input_values(), [2, 2, D_IN]);
        let out = forward_data(&a1_model(&device), vec![x3], &device).unwrap();
        assert_eq!(out[0].shape().as_slice(), &[2, 2, D_OUT]);
        assert_eq!(out[0].clone().try_into_vec::<f32>().unwrap(), flat);
        let wrong = TensorData::new(vec![0f32; 6], [2, 3]);
        assert!(forward_data(&a1_model(&device), vec![wrong], &device).is_err());
        assert!(forward_data(&a1_model(&device), vec![], &device).is_err());
    }

    #[test]
    fn layouts_from_shapes() {
        let shapes = |items: &[(&str, &[usize])]| -> BTreeMap<String, Vec<usize>> {
            items.iter().map(|(n, s)| (n.to_string(), s.to_vec())).collect()
        };
        let a1 = shapes(&[
            ("fc1.weight", &[8, 4]),
            ("fc1.bias", &[8]),
            ("fc2.weight", &[3, 8]),
            ("fc2.bias", &[3]),
        ]);
        assert_eq!(layout_from_shapes(&a1, Names::Torch).unwrap(), Layout::new(&[4, 8, 3]));
        let deep = shapes(&[
            ("layers.0.weight", &[5, 16]),
            ("layers.1.weight", &[16, 16]),
            ("layers.1.bias", &[16]),
            ("layers.2.weight", &[16, 2]),
        ]);
        let got = layout_from_shapes(&deep, Names::Burn).unwrap();
        assert_eq!(got.sizes, [5, 16, 16, 2]);
        assert_eq!(got.bias, [false, true, false]);
        let broken = shapes(&[("fc1.weight", &[8, 4]), ("fc2.weight", &[3, 7])]);
        assert!(layout_from_shapes(&broken, Names::Torch).is_err());
        assert!(layout_from_shapes(&shapes(&[("w", &[2, 2])]), Names::Torch).is_err());
        assert!(layout_from_shapes(&shapes(&[("fc1.weight", &[8])]), Names::Torch).is_err());
    }

    #[test]
    fn bpk_roundtrip_file_and_bytes_any_layout() {
        let device = Device::flex();
        let want = logits(&a1_model(&device), &device).unwrap();
        let dir = tmp_dir("bpk");
        let path = dir.join("a1.bpk");
        let p = path.to_str().unwrap();
        a1_model(&device).save_file(&path).unwrap();
        let from_file = load_bpk(p, &device).unwrap();
        assert_eq!(logits(&from_file, &device).unwrap(), want);

        let bytes = std::fs::read(&path).unwrap();
        let from_bytes = load_bpk_bytes(&bytes, &device).unwrap();
        assert_eq!(logits(&from_bytes, &device).unwrap(), want);

        // stable ids: saving twice gives the same bytes
        let stable = |out: &Path| {
            let m = load_bpk(p, &device).unwrap().with_stable_param_ids();
            m.save_file(out).unwrap();
            std::fs::read(out).unwrap()
        };
        assert_eq!(stable(&dir.join("again.bpk")), stable(&dir.join("again2.bpk")));

        // another layout: sizes come from the file
        let deep = Layout { sizes: vec![6, 16, 16, 2], bias: vec![true, false, true] };
        let deep_path = dir.join("deep.bpk");
        Mlp::new(&deep, &device).save_file(&deep_path).unwrap();
        let loaded = load_bpk(deep_path.to_str().unwrap(), &device).unwrap();
        assert_eq!(loaded.layers.len(), 3);
        assert!(loaded.layers[1].bias.is_none());
        let x = TensorData::new(vec![0.5f32; 12], [2, 6]);
        let out = forward_data(&loaded, vec![x], &device).unwrap();
        assert_eq!(out[0].shape().as_slice(), &[2, 2]);
        assert!(logits(&loaded, &device).is_err()); // the A1 formula input does not fit

        // damaged file: an error, not a panic
        let full = std::fs::read(&path).unwrap();
        for cut in [0, 16, full.len() / 2, full.len() - 1] {
            std::fs::write(&path, &full[..cut]).unwrap();
            assert!(load_bpk(p, &device).is_err(), "cut at {cut}");
            assert!(load_bpk_bytes(&full[..cut], &device).is_err(), "cut at {cut}");
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn safetensors_of_any_layout() {
        use safetensors::{Dtype, tensor::TensorView};
        let device = Device::flex();
        let dir = tmp_dir("st");
        // a PyTorch-layout [3, 5, 5, 2] MLP: fcK.weight [out, in]
        let sizes = [3usize, 5, 5, 2];
        let mut tensors: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::new();
        for k in 0..3 {
            let (i, o) = (sizes[k], sizes[k + 1]);
            let w: Vec<u8> = (0..o * i)
                .flat_map(|n| (((n % 7) as f32 - 3.0) * 0.1).to_le_bytes())
                .collect();
            let b: Vec<u8> = (0..o).flat_map(|n| (n as f32 * 0.01).to_le_bytes()).collect();
            tensors.push((format!("fc{}.weight", k + 1), vec![o, i], w));
            tensors.push((format!("fc{}.bias", k + 1), vec![o], b));
        }
        let views: Vec<_> = tensors
            .iter()
            .map(|(n, s, b)| (n.clone(), TensorView::new(Dtype::F32, s.clone(), b).unwrap()))
            .collect();
        let path = dir.join("deep.safetensors");
        std::fs::write(&path, safetensors::serialize(views, None).unwrap()).unwrap();
        let model = load_safetensors(path.to_str().unwrap(), &device).unwrap();
        assert_eq!(model.layers.len(), 3);
        assert_eq!(model.d_in(), 3);
        // fc1.weight is transposed into burn's [in, out]
        let w = model.layers[0].weight.val().into_data().try_into_vec::<f32>().unwrap();
        let torch_w0_1 = (1.0f32 - 3.0) * 0.1; // torch [0][1]: element n = 1 of [out, in]
        assert_eq!(w[5], torch_w0_1); // burn [1][0] = element 1*5 + 0
        let x = TensorData::new(vec![1.0f32; 3], [1, 3]);
        assert_eq!(
            forward_data(&model, vec![x], &device).unwrap()[0].shape().as_slice(),
            &[1, 2]
        );
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        assert!(load_safetensors(path.to_str().unwrap(), &device).is_err());
        std::fs::write(&path, &bytes[..4]).unwrap();
        assert!(load_safetensors(path.to_str().unwrap(), &device).is_err());
        std::fs::remove_dir_all(&dir).ok();
    }
}
