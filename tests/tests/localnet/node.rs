//! The Node packages an external-client check needs, installed by the project itself from
//! `tests/web3/package-lock.json` (`npm ci`) when they are missing.

use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

static INSTALL: Mutex<()> = Mutex::new(());

/// Installs `dir`'s locked packages unless already present. Panics with what to do when
/// Node or npm is missing: the check is part of the suite, not optional.
pub fn install(dir: &Path) {
    let _once = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    if dir
        .join("node_modules/@solana/web3.js/package.json")
        .exists()
    {
        return;
    }
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--prefix"])
        .arg(dir)
        .status()
        .unwrap_or_else(|e| {
            panic!("npm is needed for the @solana/web3.js check (install Node.js 20+): {e}")
        });
    assert!(status.success(), "npm ci in {} failed", dir.display());
}
