//! Generates `idl/<program>.json` from the programs' code with Anchor's own IDL builder
//! (`anchor-lang-idl`, the library the Anchor CLI uses), or, with `--check`, fails when the
//! committed files differ from what the code produces. The seeds of accounts that a program
//! checks without Anchor's `seeds` constraint are added from `declared.rs`.
//!
//! Usage: `cargo run -p trust-gate-idl [-- --check]` from the workspace root.

mod declared;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

const PROGRAMS: [&str; 3] = ["policy_vault", "gate", "validation_registry"];

fn generate(root: &Path, program: &str) -> Result<String, String> {
    let mut idl = anchor_lang_idl::build::IdlBuilder::new()
        .program_path(root.join("programs").join(program))
        .build()
        .map_err(|e| format!("{program}: building the IDL failed: {e}"))?;
    declared::apply(program, &mut idl).map_err(|e| format!("{program}: {e}"))?;
    let mut json = serde_json::to_string_pretty(&idl).map_err(|e| format!("{program}: {e}"))?;
    json.push('\n');
    Ok(json)
}

/// The nearest directory at or above the current one that holds `Anchor.toml`.
fn workspace_root() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    cwd.ancestors()
        .find(|dir| dir.join("Anchor.toml").is_file())
        .map(Path::to_path_buf)
}

fn main() -> ExitCode {
    let check = std::env::args().any(|a| a == "--check");
    // Found at run time (not baked in at compile time): a binary built from another checkout
    // into a shared target directory must still read and write this one.
    let Some(root) = workspace_root() else {
        eprintln!("idl: run from inside the trust-gate workspace (no Anchor.toml above here)");
        return ExitCode::FAILURE;
    };
    // The builder recompiles the programs with `idl-build` and `-A warnings`; a target
    // directory of its own keeps that from invalidating the main build's artifacts.
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
        .join("idl-build");
    // SAFETY: single-threaded, before any other thread exists.
    unsafe {
        std::env::set_var("CARGO_TARGET_DIR", &target);
        // The builder turns a set RUSTUP_TOOLCHAIN into a `cargo +toolchain` argument that
        // rustup may not resolve; the active toolchain is the one we want anyway.
        std::env::remove_var("RUSTUP_TOOLCHAIN");
    }

    let mut stale = vec![];
    for program in PROGRAMS {
        eprintln!("idl: building {program} ...");
        let json = match generate(&root, program) {
            Ok(json) => json,
            Err(e) => {
                eprintln!("idl: {e}");
                return ExitCode::FAILURE;
            }
        };
        let path = root.join("idl").join(format!("{program}.json"));
        if check {
            let committed = std::fs::read_to_string(&path).unwrap_or_default();
            if committed != json {
                stale.push(format!("idl/{program}.json"));
            }
        } else if let Err(e) = std::fs::write(&path, json) {
            eprintln!("idl: writing {}: {e}", path.display());
            return ExitCode::FAILURE;
        } else {
            eprintln!("idl: wrote idl/{program}.json");
        }
    }
    if !stale.is_empty() {
        eprintln!(
            "idl: out of date: {}\nidl: regenerate with `cargo run -p trust-gate-idl` and commit idl/",
            stale.join(", ")
        );
        return ExitCode::FAILURE;
    }
    if check {
        eprintln!("idl: idl/ matches the code");
    }
    ExitCode::SUCCESS
}
