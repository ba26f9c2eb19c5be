//! Runs the model that burn-onnx generated from a1.onnx at build time, as the reference page does:
//! `model::Model::default()`. With LoadStrategy::File that reads the .bpk from the absolute OUT_DIR
//! path baked in at build time and panics if it is gone (the page's lesson, kept on purpose);
//! with feature `embed` (LoadStrategy::Embedded) the .bpk is compiled in.

use std::collections::BTreeMap;

use burn::prelude::*;

// The generated file: warnings in it are burn-onnx's, e.g. the File variant's
// "associated function `from_bytes` is never used". Kept visible in builds, silenced for clippy.
#[allow(clippy::all)]
#[cfg_attr(clippy, allow(dead_code))]
mod model {
    include!(concat!(env!("OUT_DIR"), "/model/a1.rs"));
}

fn main() {
    let device = Device::default();
    let model = model::Model::default();
    let xs: Vec<f32> = (0..16).map(|k| (0.1 * k as f64 - 0.5) as f32).collect();
    let x = Tensor::<2>::from_data(TensorData::new(xs, [4, 4]), &device);
    let y = model.forward(x);
    let [_, cols] = y.dims();
    let flat = match y.try_into_vec_as::<f32>() {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: cannot read the logits: {e:?}");
            std::process::exit(1);
        }
    };
    let rows: Vec<&[f32]> = flat.chunks(cols).collect();
    let mut out = BTreeMap::new();
    out.insert("logits", rows);
    println!(
        "{}",
        serde_json::to_string(&out).expect("f32 rows serialise")
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_model_gives_the_reference_logits() {
        let device = Device::default();
        let model = model::Model::default();
        let xs: Vec<f32> = (0..16).map(|k| (0.1 * k as f64 - 0.5) as f32).collect();
        let y = model.forward(Tensor::<2>::from_data(TensorData::new(xs, [4, 4]), &device));
        assert_eq!(y.dims(), [4, 3]);
        let got = y.try_into_vec_as::<f32>().unwrap();
        let want = [
            -0.132, -0.07, 0.127, -0.106, 0.002, 0.105, -0.114, 0.084, 0.072, -0.127, 0.142, 0.056,
        ];
        for (g, w) in got.iter().zip(want) {
            assert!((*g as f64 - w).abs() < 1e-6, "{g} vs {w}");
        }
    }
}
