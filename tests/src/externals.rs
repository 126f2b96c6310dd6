//! Where the real registry's, engine's and MPL Core's SBF builds are: the folder
//! `TRUST_GATE_EXTERNALS_DIR` names, else `../shared/fixtures/8004` beside the repository.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Once;
use trust_gate_localnet::externals::{ExternalPrograms, MPL_CORE_FILE};

/// Names another folder of the real programs' builds.
pub const DIR_VAR: &str = "TRUST_GATE_EXTERNALS_DIR";
/// Set (to anything but empty or `0`) to make missing builds a failure, not a skip (CI).
pub const REQUIRE_VAR: &str = "TRUST_GATE_REQUIRE_EXTERNALS";

/// The folder, and how to name it in a message.
pub fn dir() -> (PathBuf, String) {
    match std::env::var_os(DIR_VAR).filter(|d| !d.is_empty()) {
        Some(d) => (PathBuf::from(&d), d.to_string_lossy().into_owned()),
        None => (
            trust_gate_test_setup::repo_root().join("../shared/fixtures/8004"),
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

/// The real programs for a test, or `None` after one `externals SKIPPED: … not found` line
/// for the whole test process when they are not there. Panics instead when
/// `TRUST_GATE_REQUIRE_EXTERNALS` is set.
pub fn or_skip() -> Option<ExternalPrograms> {
    match programs() {
        Ok(p) => Some(p),
        Err(why) => {
            let required = std::env::var(REQUIRE_VAR).is_ok_and(|v| !v.is_empty() && v != "0");
            assert!(
                !required,
                "{REQUIRE_VAR} is set but the fixtures are missing: {why}"
            );
            static SAID: Once = Once::new();
            SAID.call_once(|| {
                // Straight to the stream: the harness shows a passing test's `eprintln!`
                // only on failure.
                let _ = writeln!(
                    std::io::stderr(),
                    "externals SKIPPED: {} not found",
                    dir().1
                );
            });
            None
        }
    }
}
