//! Where the real programs' builds are, and what the suite does without them.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Once;
use trust_gate_localnet::externals::{ExternalPrograms, MPL_CORE_FILE};
use trust_gate_program_tests::world::World;

/// Set (to anything but empty or `0`) to make missing fixtures a failure, not a skip.
const REQUIRE: &str = "TRUST_GATE_REQUIRE_EXTERNALS";
/// Names another folder of the real programs' builds.
const DIR: &str = "TRUST_GATE_EXTERNALS_DIR";

/// The fixtures' folder: `TRUST_GATE_EXTERNALS_DIR`, else `../shared/fixtures/8004` beside
/// the repository.
fn dir() -> (PathBuf, String) {
    match std::env::var_os(DIR).filter(|d| !d.is_empty()) {
        Some(d) => (PathBuf::from(&d), d.to_string_lossy().into_owned()),
        None => (
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/8004"),
            "../shared/fixtures/8004".to_string(),
        ),
    }
}

/// The real registry, engine and MPL Core, or `None` (after one `externals SKIPPED` line for
/// the whole run) when they are not there and not required.
pub fn externals() -> Option<ExternalPrograms> {
    let (dir, shown) = dir();
    let found = ExternalPrograms::in_dir(&dir).and_then(|p| {
        if p.mpl_core {
            Ok(p)
        } else {
            Err(format!("no {MPL_CORE_FILE} in {}", dir.display()))
        }
    });
    match found {
        Ok(p) => Some(p),
        Err(why) => {
            let required = std::env::var(REQUIRE).is_ok_and(|v| !v.is_empty() && v != "0");
            assert!(
                !required,
                "{REQUIRE} is set but the fixtures are missing: {why}"
            );
            static SAID: Once = Once::new();
            SAID.call_once(|| {
                // Straight to the stream: the harness would only show a passing test's
                // `eprintln!` on failure.
                let _ = writeln!(std::io::stderr(), "externals SKIPPED: {shown} not found");
            });
            None
        }
    }
}

/// A world on the real programs, or `None` when the suite is skipped.
pub async fn real_world() -> Option<World> {
    let externals = externals()?;
    Some(World::on_real(&externals).await)
}
