//! Where the real programs' builds are, and what the suite does without them.

pub use trust_gate_program_tests::externals::or_skip as externals;
use trust_gate_program_tests::world::World;

/// A world on the real programs, or `None` when the suite is skipped (after one `externals
/// SKIPPED` line for the whole run; a failure when they are required).
pub async fn real_world() -> Option<World> {
    let externals = externals()?;
    Some(World::on_real(&externals).await)
}
