//! The forward signature of the code burn-onnx generated, and the glue that calls it on protocol
//! inputs. Plain std, shared by build.rs (`#[path]`) and the crate's tests.
//!
//! burn-onnx names the forward's parameters after the ONNX inputs and types them from the graph:
//! `Tensor<4>`, `Tensor<2, Int>`, `Tensor<1, Bool>`, native scalars (`f32`, `i64`), shapes
//! (`[i64; 3]`); several outputs come back as a tuple. With partitioning on, submodules have
//! their own `forward`; the model's is the one inside `impl Model`.

/// The model's forward: parameter names and types, output types (one per output).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    pub inputs: Vec<(String, String)>,
    pub outputs: Vec<String>,
}

/// Collapses whitespace so that `Tensor < 2 , Int >` and `Tensor<2, Int>` read the same.
fn normalize(ty: &str) -> String {
    let mut out = String::new();
    let squeezed: Vec<&str> = ty.split_whitespace().collect();
    let joined = squeezed.join(" ");
    let mut chars = joined.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' => {
                let prev = out.chars().last();
                let next = chars.peek().copied();
                let glue_prev = matches!(prev, Some('<' | '[' | '(' | '&'));
                let glue_next = matches!(next, Some('<' | '>' | ',' | ']' | ')' | ';' | '['));
                if !glue_prev && !glue_next {
                    out.push(' ');
                }
            }
            ',' | ';' => {
                out.push(c);
                if chars.peek().is_some_and(|n| *n != ' ') {
                    out.push(' ');
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// Splits at commas that are not inside <>, [] or ().
fn split_top(s: &str) -> Vec<String> {
    let (mut parts, mut cur, mut depth) = (Vec::new(), String::new(), 0i32);
    for c in s.chars() {
        match c {
            '<' | '[' | '(' => depth += 1,
            '>' | ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    parts.push(cur);
    parts
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

/// The text between the bracket at `open` and its match.
fn bracketed(s: &str, open: usize) -> Result<&str, String> {
    let (o, c) = match s[open..].chars().next() {
        Some('(') => ('(', ')'),
        Some('<') => ('<', '>'),
        Some('[') => ('[', ']'),
        other => return Err(format!("expected a bracket, found {other:?}")),
    };
    let mut depth = 0;
    for (i, ch) in s[open..].char_indices() {
        if ch == o {
            depth += 1;
        } else if ch == c {
            depth -= 1;
            if depth == 0 {
                return Ok(&s[open + 1..open + i]);
            }
        }
    }
    Err("unbalanced brackets in the forward signature".into())
}

/// Finds `pub fn forward(&self, ...) -> T {` inside `impl Model {` and parses it.
pub fn parse_forward(code: &str) -> Result<Signature, String> {
    let mut found = None;
    let mut from = 0;
    while let Some(pos) = code[from..].find("pub fn forward") {
        let at = from + pos;
        // the closest `impl` before it names the type this forward belongs to
        let owner = code[..at]
            .rfind("impl ")
            .map(|i| code[i + 5..at].split_whitespace().next().unwrap_or(""));
        if owner == Some("Model") {
            if found.is_some() {
                return Err("two forward methods in impl Model".into());
            }
            found = Some(at);
        }
        from = at + 1;
    }
    let at = found.ok_or("no `pub fn forward` in `impl Model` of the generated code")?;
    let open = at + code[at..].find('(').ok_or("forward has no parameter list")?;
    let params = bracketed(code, open)?;
    let after = &code[open + params.len() + 2..];
    let body = after.find('{').ok_or("forward has no body")?;
    let ret = after[..body].trim();
    let ret = ret
        .strip_prefix("->")
        .ok_or_else(|| format!("forward returns nothing (`{ret}`)"))?
        .trim();

    let mut inputs = Vec::new();
    for p in split_top(params) {
        let p = normalize(&p);
        if p == "&self" {
            continue;
        }
        let (name, ty) = p
            .split_once(':')
            .ok_or_else(|| format!("cannot read the forward parameter `{p}`"))?;
        let name = name.trim().trim_start_matches("mut ").trim();
        inputs.push((name.to_string(), normalize(ty.trim())));
    }
    let outputs = if ret.starts_with('(') {
        let inner = bracketed(ret, 0)?;
        split_top(inner).iter().map(|t| normalize(t)).collect()
    } else {
        vec![normalize(ret)]
    };
    if outputs.is_empty() {
        return Err("forward returns an empty tuple".into());
    }
    Ok(Signature { inputs, outputs })
}

fn str_list(items: impl Iterator<Item = String>) -> String {
    let quoted: Vec<String> = items.map(|s| format!("{s:?}")).collect();
    format!("&[{}]", quoted.join(", "))
}

/// The glue, included in the same module as the generated `Model`:
/// `run_forward(&Model, Vec<TensorData>, &Device) -> Result<Vec<TensorData>, String>` plus the
/// signature as constants. Each argument is `FromInput::from_input(..)`: the forward's own
/// parameter types pick the conversion, so what is parsed here only counts and names them.
pub fn glue_code(sig: &Signature, source: &str) -> String {
    let n_in = sig.inputs.len();
    let params: Vec<String> = sig
        .inputs
        .iter()
        .map(|(n, t)| format!("{n}: {t}"))
        .collect();
    let ret = if sig.outputs.len() == 1 {
        sig.outputs[0].clone()
    } else {
        format!("({})", sig.outputs.join(", "))
    };
    let mut s = String::new();
    s.push_str(&format!(
        "// Generated by burn-onnx-gen/build.rs from the forward of {source}:\n\
         //   pub fn forward(&self, {}) -> {ret}\n\n",
        params.join(", ")
    ));
    s.push_str(&format!(
        "pub const FORWARD_INPUTS: &[&str] = {};\n",
        str_list(sig.inputs.iter().map(|(n, t)| format!("{n}: {t}")))
    ));
    s.push_str(&format!(
        "pub const FORWARD_OUTPUTS: &[&str] = {};\n\n",
        str_list(sig.outputs.iter().cloned())
    ));
    s.push_str(
        "/// Runs `Model::forward` on protocol inputs in the inputs file's call order, which is the\n\
         /// ONNX graph's input order (the export orders and names the graph's inputs as the file\n\
         /// does, and checks it), and returns its outputs in order.\n\
         pub fn run_forward(\n    model: &Model,\n    inputs: Vec<burn::tensor::TensorData>,\n    \
         device: &burn::tensor::Device,\n) -> Result<Vec<burn::tensor::TensorData>, String> {\n",
    );
    s.push_str(&format!(
        "    if inputs.len() != {n_in} {{\n        return Err(format!(\n            \
         \"the model takes {n_in} input(s) ({{}}), got {{}}\",\n            \
         FORWARD_INPUTS.join(\", \"),\n            inputs.len()\n        ));\n    }}\n"
    ));
    if n_in == 0 {
        s.push_str("    let _ = device;\n");
    }
    s.push_str("    #[allow(unused_mut, unused_variables)]\n    let mut inputs = inputs.into_iter();\n");
    let args: Vec<String> = (0..n_in)
        .map(|i| {
            format!(
                "        runner_io::FromInput::from_input(inputs.next().expect(\"counted\"), device, {i})?,\n"
            )
        })
        .collect();
    let outs: Vec<String> = (0..sig.outputs.len()).map(|i| format!("out{i}")).collect();
    let pattern = if outs.len() == 1 {
        outs[0].clone()
    } else {
        format!("({})", outs.join(", "))
    };
    s.push_str(&format!(
        "    let {pattern} = model.forward(\n{}    );\n",
        args.concat()
    ));
    let conv: Vec<String> = outs
        .iter()
        .map(|o| format!("        runner_io::IntoOutput::into_output({o})?,\n"))
        .collect();
    s.push_str(&format!("    Ok(vec![\n{}    ])\n}}\n", conv.concat()));
    s
}
