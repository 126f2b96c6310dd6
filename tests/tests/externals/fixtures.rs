//! Where the real programs' builds are, and what the suite does without them.

use std::io::Write;
use std::sync::Once;
use trust_gate_localnet::externals::ExternalPrograms;
use trust_gate_program_tests::externals;
use trust_gate_program_tests::world::World;

/// Set (to anything but empty or `0`) to make missing fixtures a failure, not a skip.
const REQUIRE: &str = "TRUST_GATE_REQUIRE_EXTERNALS";

/// The real registry, engine and MPL Core, or `None` (after one `externals SKIPPED` line for
/// the whole run) when they are not there and not required.
pub fn externals() -> Option<ExternalPrograms> {
    match externals::programs() {
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
                let shown = externals::dir().1;
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
