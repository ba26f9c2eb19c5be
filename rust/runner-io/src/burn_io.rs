//! The burn side of the protocol (feature `burn`): protocol tensors as `TensorData`, forward
//! arguments built from them ([`FromInput`]) and results turned back ([`IntoOutput`]).

use std::path::Path;

use burn::prelude::*;
use burn::tensor::{BoolStore, DType, Element, kind::Basic};

use crate::{
    Dtype, Protocol, RawTensor, decode_raw_inputs, encode_raw_outputs, fail, one_line,
    read_raw_inputs, run_protocol_with, write_atomic,
};

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

/// Raw protocol inputs as burn `TensorData` (F32, I64, F64, I32, U8, BOOL).
pub fn to_tensor_data(raw: Vec<RawTensor>) -> Result<Vec<TensorData>, String> {
    raw.into_iter()
        .enumerate()
        .map(|(i, t)| {
            let dtype = burn_dtype(t.dtype)
                .ok_or_else(|| format!("input_{i}: dtype {:?} is not supported", t.dtype))?;
            if t.dtype == Dtype::BOOL {
                let values: Vec<bool> = t.data.iter().map(|b| *b != 0).collect();
                return Ok(TensorData::new(values, t.shape));
            }
            TensorData::try_from_bytes_vec(t.data, t.shape, dtype)
                .map_err(|e| format!("input_{i}: {e}"))
        })
        .collect()
}

/// The tensors `input_0`, `input_1`, ... of a safetensors buffer, in order.
pub fn decode_inputs(bytes: &[u8]) -> Result<Vec<TensorData>, String> {
    to_tensor_data(decode_raw_inputs(bytes)?)
}

pub fn read_inputs(path: &Path) -> Result<Vec<TensorData>, String> {
    to_tensor_data(read_raw_inputs(path)?).map_err(|e| format!("{}: {e}", path.display()))
}

/// An output as the protocol writes it: F32 (any float), I64 (any int) or BOOL.
fn output_raw(data: TensorData) -> Result<RawTensor, String> {
    let shape = data.shape().as_slice().to_vec();
    let dtype = data.dtype();
    let err = |e: burn::tensor::DataError| format!("cannot read a {dtype:?} output: {e}");
    if dtype.is_bool() {
        let values = data.try_into_vec_as::<bool>().map_err(err)?;
        let data = values.into_iter().map(u8::from).collect();
        return Ok(RawTensor {
            dtype: Dtype::BOOL,
            shape,
            data,
        });
    }
    let (st, target) = if dtype.is_int() || dtype.is_uint() {
        (Dtype::I64, DType::I64)
    } else {
        (Dtype::F32, DType::F32)
    };
    let data = data.try_cast(target).map_err(err)?;
    Ok(RawTensor {
        dtype: st,
        shape,
        data: data.as_bytes().to_vec(),
    })
}

/// A safetensors buffer holding the outputs as `output_0`, `output_1`, ...
pub fn encode_outputs(outputs: Vec<TensorData>) -> Result<Vec<u8>, String> {
    encode_raw_outputs(
        outputs
            .into_iter()
            .map(output_raw)
            .collect::<Result<Vec<_>, _>>()?,
    )
}

/// Writes the outputs next to `path` first, then renames: OUT is never left half-written.
pub fn write_outputs(path: &Path, outputs: Vec<TensorData>) -> Result<(), String> {
    write_atomic(path, &encode_outputs(outputs)?)
}

// ---------------------------------------------------------------------------------------------
// inputs into model arguments, model results into outputs

fn describe(data: &TensorData) -> String {
    format!("{:?} {:?}", data.dtype(), data.shape().as_slice())
}

/// A forward argument built from one protocol input. The generated glue of burn-onnx-gen calls
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

/// Reads the inputs, then times `load`, the first `forward` and `repeat` more, writes the last
/// outputs and returns the JSON line.
pub fn run_protocol<M>(
    protocol: &Protocol,
    load: impl FnOnce() -> Result<M, String>,
    forward: impl FnMut(&M, Vec<TensorData>) -> Result<Vec<TensorData>, String>,
) -> Result<String, String> {
    run_protocol_with(
        protocol,
        None,
        to_tensor_data,
        encode_outputs,
        load,
        forward,
    )
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
    use std::path::Path;

    use safetensors::SafeTensors;

    use super::*;
    use crate::tests::{encode_inputs, tmp};

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
        assert_eq!(
            (t("output_0").dtype(), t("output_0").shape()),
            (Dtype::F32, &[2, 3, 4][..])
        );
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
        assert_eq!(
            (t("output_2").dtype(), t("output_2").shape()),
            (Dtype::F32, &[][..])
        );
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
        assert!(
            decode_inputs(&gap)
                .unwrap_err()
                .contains("input_0 is missing")
        );
        let named = encode_inputs(&[("x", Dtype::F32, vec![2, 4], fb.clone())]);
        assert!(
            decode_inputs(&named)
                .unwrap_err()
                .contains("unexpected tensor")
        );
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
        std::fs::write(
            &inputs,
            encode_inputs(&[("input_0", Dtype::F32, vec![2, 4], fb)]),
        )
        .unwrap();
        let outputs = tmp("proto-out.safetensors");
        let mut calls = 0;
        let p = Protocol {
            inputs: inputs.clone(),
            outputs: outputs.clone(),
            repeat: 3,
            warmup: 1,
            threads: 1,
            threads_reported: None,
        };
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
        assert_eq!(calls, 5);
        assert!(line.starts_with("{\"stages_ms\": {\"load\": "), "{line}");
        assert!(line.contains(", \"outputs\": 1, \"warmup\": 1, "), "{line}");
        assert!(line.ends_with("\"threads\": {\"requested\": 1, \"reported\": null}}"), "{line}");
        let back = std::fs::read(&outputs).unwrap();
        let st = SafeTensors::deserialize(&back).unwrap();
        assert_eq!(st.tensor("output_0").unwrap().shape(), &[2, 4]);

        let p0 = Protocol {
            repeat: 0,
            warmup: 0,
            ..p
        };
        let line = run_protocol(&p0, || Ok(()), |_, _| Ok(vec![])).unwrap();
        assert!(line.contains("\"steady_forward\": null") && line.contains("\"outputs\": 0"));
        let failing = run_protocol(
            &p0,
            || Err::<(), _>("no model".to_string()),
            |_, _| Ok(vec![]),
        );
        assert_eq!(failing.unwrap_err(), "no model");
        std::fs::remove_file(&inputs).ok();
        std::fs::remove_file(&outputs).ok();
    }
}
