//! The Node packages a check needs, installed by the project itself from the committed lock
//! file (`npm ci`) when they are missing: `tests/web3` (the web3.js check) and `packages/sdk`
//! (the TypeScript SDK, built with its own `tsc`; its tests run on Node's test runner, fed what
//! the Rust side computed).

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

/// The TypeScript SDK's folder (`packages/sdk`).
pub fn sdk_package() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../packages/sdk")
}

/// Installs the SDK's locked dependencies when missing and builds it (`dist/`) with its own
/// `tsc`, once per test process (tests run in parallel and share `dist/`).
pub fn build_sdk() -> std::path::PathBuf {
    static BUILT: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let dir = sdk_package();
            install(&dir, "@x402/express/package.json");
            let out = Command::new("node")
                .arg(dir.join("node_modules/typescript/bin/tsc"))
                .arg("-p")
                .arg(dir.join("tsconfig.json"))
                .output()
                .expect("node runs");
            assert!(
                out.status.success(),
                "tsc failed:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            dir
        })
        .clone()
}

/// Runs the package's Node test `file` (on Node's own runner) with `fixture` written to the
/// JSON file TRUST_GATE_FIXTURE names; panics with Node's report unless at least one test ran
/// and none failed. Returns the report.
pub fn node_test(dir: &Path, file: &str, fixture: &serde_json::Value) -> String {
    let path = std::env::temp_dir().join(format!(
        "trust-gate-sdk-{}-{}.json",
        std::process::id(),
        file.replace('/', "_")
    ));
    std::fs::write(&path, serde_json::to_vec_pretty(fixture).unwrap()).unwrap();
    let out = Command::new("node")
        .arg("--test")
        .arg("--test-concurrency=1")
        .arg(dir.join(file))
        .env("TRUST_GATE_FIXTURE", &path)
        .output()
        .expect("node runs");
    let _ = std::fs::remove_file(&path);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "node --test {file} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Node's runner reports its own tally; at least one test ran and none failed.
    assert!(stdout.contains("# fail 0"), "{stdout}");
    assert!(!stdout.contains("# pass 0"), "{stdout}");
    stdout
}
