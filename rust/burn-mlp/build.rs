//! Chooses the .bpk that burn-embed compiles in: $DEPLOYTUI_BPK if set and present. Otherwise
//! (cargo test, clippy, or the burn-convert step that has not written it yet) an empty placeholder
//! is embedded and burn-embed exits with an error at run time.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=DEPLOYTUI_BPK");
    println!("cargo:rerun-if-changed=build.rs");
    let wanted = std::env::var_os("DEPLOYTUI_BPK")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from);
    if let Some(p) = &wanted {
        // also reruns once the file appears
        println!("cargo:rerun-if-changed={}", p.display());
    }
    let path = match wanted.and_then(|p| std::fs::canonicalize(p).ok()) {
        Some(p) => p,
        None => {
            let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
            let p = out.join("no-weights.bpk");
            std::fs::write(&p, b"").expect("write placeholder");
            p
        }
    };
    println!("cargo:rustc-env=DEPLOYTUI_EMBED_BPK={}", path.display());
}
