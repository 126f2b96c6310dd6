//! Where the real programs' builds are, and what the suite does without them.

use trust_gate_localnet::externals::ExternalPrograms;
use trust_gate_program_tests::world::World;

/// The real registry, engine and MPL Core, or `None` (after one `externals SKIPPED` line for
/// the whole run) when they are not there and not required.
pub fn externals() -> Option<ExternalPrograms> {
    trust_gate_program_tests::externals::or_skip()
}

/// A world on the real programs, or `None` when the suite is skipped.
pub async fn real_world() -> Option<World> {
    let externals = externals()?;
    Some(World::on_real(&externals).await)
}
