//! Chooses the .bpk that infer-embed compiles in: $DEPLOYTUI_BPK if set. Without it (cargo test,
//! clippy) an empty placeholder is embedded and infer-embed exits with an error at run time.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=DEPLOYTUI_BPK");
    println!("cargo:rerun-if-changed=build.rs");
    let path = match std::env::var_os("DEPLOYTUI_BPK") {
        Some(p) if !p.is_empty() => {
            let p = PathBuf::from(p);
            let p = std::fs::canonicalize(&p)
                .unwrap_or_else(|e| panic!("DEPLOYTUI_BPK={}: {e}", p.display()));
            println!("cargo:rerun-if-changed={}", p.display());
            p
        }
        _ => {
            let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
            let p = out.join("no-weights.bpk");
            std::fs::write(&p, b"").expect("write placeholder");
            p
        }
    };
    println!("cargo:rustc-env=DEPLOYTUI_EMBED_BPK={}", path.display());
}
