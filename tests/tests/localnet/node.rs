//! The Node packages a check needs, installed by the project itself from the committed lock
//! file (`npm ci`) when they are missing: `tests/web3` (the web3.js check) and `packages/sdk`
//! (the TypeScript SDK's tests).

use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

static INSTALL: Mutex<()> = Mutex::new(());

/// Installs `dir`'s locked packages unless `marker` (a path under `dir/node_modules`) is
/// already there. Panics with what to do when Node or npm is missing: the check is part of
/// the suite, not optional.
pub fn install(dir: &Path, marker: &str) {
    let _once = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    if dir.join("node_modules").join(marker).exists() {
        return;
    }
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--prefix"])
        .arg(dir)
        .status()
        .unwrap_or_else(|e| {
            panic!(
                "npm is needed for {} (install Node.js 20+): {e}",
                dir.display()
            )
        });
    assert!(status.success(), "npm ci in {} failed", dir.display());
}
