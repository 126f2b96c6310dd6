//! Where the real registry's, engine's and MPL Core's SBF builds are: the folder
//! `TRUST_GATE_EXTERNALS_DIR` names, else `../shared/fixtures/8004` beside the repository.

use std::path::{Path, PathBuf};
use trust_gate_localnet::externals::{ExternalPrograms, MPL_CORE_FILE};

/// Names another folder of the real programs' builds.
pub const DIR_VAR: &str = "TRUST_GATE_EXTERNALS_DIR";

/// The folder, and how to name it in a message.
pub fn dir() -> (PathBuf, String) {
    match std::env::var_os(DIR_VAR).filter(|d| !d.is_empty()) {
        Some(d) => (PathBuf::from(&d), d.to_string_lossy().into_owned()),
        None => (
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/8004"),
            "../shared/fixtures/8004".to_string(),
        ),
    }
}

/// The real registry, engine and MPL Core, or why they cannot be loaded.
pub fn programs() -> Result<ExternalPrograms, String> {
    let (dir, _) = dir();
    let p = ExternalPrograms::in_dir(&dir)?;
    if !p.mpl_core {
        return Err(format!("no {MPL_CORE_FILE} in {}", dir.display()));
    }
    Ok(p)
}
