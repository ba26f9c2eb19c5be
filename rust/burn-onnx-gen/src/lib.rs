//! The model burn-onnx generated at build time from $DEPLOYTUI_ONNX (see build.rs), with the glue
//! that runs its forward on protocol inputs, shared by the binaries:
//! - `burn-onnx-default`: `Model::default()`. With LoadStrategy::File that reads the .bpk from the
//!   absolute OUT_DIR path baked in at build time (the reference page's relocation trap, kept on
//!   purpose); with feature `embed` (LoadStrategy::Embedded) the .bpk is compiled in.
//! - `burn-onnx-bpk`: `Model::from_file(MODEL_FILE)`, a .bpk shipped next to the binary.

/// The generated code (`model/<stem>.rs`) and its glue (`run_forward`, `FORWARD_INPUTS`, ...).
/// Warnings in it are burn-onnx's, e.g. the File variant's "associated function `from_bytes` is
/// never used": kept visible in builds, silenced for clippy.
#[allow(clippy::all)]
#[cfg_attr(clippy, allow(dead_code))]
pub mod model {
    include!(env!("DEPLOYTUI_MODEL_RS"));
    include!(concat!(env!("OUT_DIR"), "/glue.rs"));
}

#[cfg(test)]
#[path = "../glue.rs"]
mod glue;

/// The ONNX file's stem: the generated code is `model/<stem>.rs`, its weights `<stem>.bpk`.
pub const MODEL_STEM: &str = env!("DEPLOYTUI_MODEL_STEM");

#[cfg(test)]
mod tests {
    use super::glue::{Signature, glue_code, parse_forward};
    use super::*;
    use burn::prelude::*;

    fn sig(inputs: &[(&str, &str)], outputs: &[&str]) -> Signature {
        Signature {
            inputs: inputs.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect(),
            outputs: outputs.iter().map(|t| t.to_string()).collect(),
        }
    }

    #[test]
    fn parses_one_float_input() {
        let code = "impl Model {\n    #[allow(clippy::let_and_return, clippy::approx_constant)]\n    \
                    pub fn forward(&self, input1: Tensor<4>) -> Tensor<2> {\n        let x = input1;\n        x\n    }\n}\n";
        assert_eq!(parse_forward(code).unwrap(), sig(&[("input1", "Tensor<4>")], &["Tensor<2>"]));
    }

    #[test]
    fn parses_int_inputs_and_tuple_outputs_over_several_lines() {
        // rustfmt breaks a long signature over lines; submodules have a forward of their own
        let code = r#"
impl Submodule1 {
    pub fn forward(&self, a: Tensor<2>) -> Tensor<2> { a }
}
impl Model {
    pub fn new(device: &Device) -> Self { todo!() }

    #[allow(clippy::let_and_return, clippy::approx_constant)]
    pub fn forward(
        &self,
        tokens: Tensor<2, Int>,
        mask: Tensor< 3 , Bool >,
        scale: f32,
        shape: [i64; 3],
    ) -> (Tensor<3>, Tensor<2, Int>) {
        let (a, b) = self.submodule1.forward(x);
        (a, b)
    }
}
impl Default for Model { fn default() -> Self { Self::from_file("x", &Default::default()) } }
"#;
        let got = parse_forward(code).unwrap();
        assert_eq!(
            got,
            sig(
                &[
                    ("tokens", "Tensor<2, Int>"),
                    ("mask", "Tensor<3, Bool>"),
                    ("scale", "f32"),
                    ("shape", "[i64; 3]")
                ],
                &["Tensor<3>", "Tensor<2, Int>"]
            )
        );
    }

    #[test]
    fn parses_two_inputs() {
        let code = "impl Model { pub fn forward(&self, x: Tensor<2>, y: Tensor<2>) -> Tensor<2> { x } }";
        let got = parse_forward(code).unwrap();
        assert_eq!(got, sig(&[("x", "Tensor<2>"), ("y", "Tensor<2>")], &["Tensor<2>"]));
    }

    #[test]
    fn rejects_what_it_cannot_read() {
        assert!(parse_forward("impl Other { pub fn forward(&self) -> Tensor<2> {} }").is_err());
        assert!(parse_forward("impl Model { pub fn forward(&self, x: Tensor<2>) { } }").is_err());
        assert!(parse_forward("impl Model { pub fn forward(&self, x: Tensor<2> -> T {").is_err());
        let two = "impl Model { pub fn forward(&self) -> A {} pub fn forward(&self) -> B {} }";
        assert!(parse_forward(two).is_err());
    }

    #[test]
    fn glue_calls_forward_with_each_input_and_unpacks_tuples() {
        let g = glue_code(
            &sig(&[("tokens", "Tensor<2, Int>"), ("x", "Tensor<4>")], &["Tensor<3>", "Tensor<2>"]),
            "model/m.rs",
        );
        assert!(g.contains(r#"pub const FORWARD_INPUTS: &[&str] = &["tokens: Tensor<2, Int>", "x: Tensor<4>"];"#), "{g}");
        assert!(g.contains(r#"pub const FORWARD_OUTPUTS: &[&str] = &["Tensor<3>", "Tensor<2>"];"#), "{g}");
        assert!(g.contains("if inputs.len() != 2 {"), "{g}");
        assert!(g.contains("let (out0, out1) = model.forward("), "{g}");
        assert_eq!(g.matches("runner_io::FromInput::from_input(").count(), 2);
        assert!(g.contains("device, 1)?,"));
        assert_eq!(g.matches("runner_io::IntoOutput::into_output(").count(), 2);

        let one = glue_code(&sig(&[("x", "Tensor<2>")], &["Tensor<2>"]), "model/a1.rs");
        assert!(one.contains("let out0 = model.forward("), "{one}");
    }

    /// The glue this crate was built with runs the generated model (a1.onnx by default).
    #[test]
    fn built_glue_matches_the_generated_forward() {
        assert!(!model::FORWARD_INPUTS.is_empty() && !model::FORWARD_OUTPUTS.is_empty());
        let code = std::fs::read_to_string(env!("DEPLOYTUI_MODEL_RS")).unwrap();
        let sig = parse_forward(&code).unwrap();
        assert_eq!(sig.inputs.len(), model::FORWARD_INPUTS.len());
        assert_eq!(sig.outputs.len(), model::FORWARD_OUTPUTS.len());
    }

    #[cfg(not(feature = "embed"))]
    #[test]
    fn a1_gives_the_reference_logits() {
        if MODEL_STEM != "a1" {
            return; // built for another model
        }
        let device = Device::default();
        let model = model::Model::default();
        let xs: Vec<f32> = (0..16).map(|k| (0.1 * k as f64 - 0.5) as f32).collect();
        let out = model::run_forward(&model, vec![TensorData::new(xs, [4, 4])], &device).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].shape().as_slice(), &[4, 3]);
        let got = out[0].clone().try_into_vec_as::<f32>().unwrap();
        let want = [
            -0.132, -0.07, 0.127, -0.106, 0.002, 0.105, -0.114, 0.084, 0.072, -0.127, 0.142, 0.056,
        ];
        for (g, w) in got.iter().zip(want) {
            assert!((*g as f64 - w).abs() < 1e-6, "{g} vs {w}");
        }
        // wrong inputs are errors, not panics
        assert!(model::run_forward(&model, vec![], &device).is_err());
        let bad = TensorData::new(vec![0i64; 16], [4, 4]);
        assert!(model::run_forward(&model, vec![bad], &device).is_err());
    }
}
