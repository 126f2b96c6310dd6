//! Checks of the repository itself, run by `cargo test --workspace` (`tests/`):
//!
//! - [`links`]: every relative link in README.md and docs/ points at a file that exists and,
//!   for `#anchor`, at a heading of that file;
//! - [`layers`]: within every crate, modules import one another one way (no circles), and the
//!   client SDK's and the CLI's modules in their declared order.
//!
//! The logic is here, pure and unit-tested on small inputs; the tests run it on the tree.

pub mod layers;
pub mod links;

use std::path::{Path, PathBuf};

/// The workspace root (this crate is `tools/repo-checks`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("tools/repo-checks sits two levels below the root")
        .to_path_buf()
}
