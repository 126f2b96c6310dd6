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

/// The workspace root (this crate is `tools/repo-checks`). Read at run time, where cargo
/// names the package's directory, rather than baked in at compile time: a test binary built
/// from another checkout into a shared target directory must still check this one.
pub fn workspace_root() -> PathBuf {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    Path::new(&manifest)
        .ancestors()
        .nth(2)
        .expect("tools/repo-checks sits two levels below the root")
        .to_path_buf()
}
