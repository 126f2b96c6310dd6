//! The TypeScript SDK (`packages/sdk`) for the tests: installed from its lock file on first
//! use (`trust-gate-test-setup`), built with its own `tsc`, its tests run on Node's test
//! runner, fed what the Rust side computed.

use std::path::Path;
use std::process::Command;

/// Installs the SDK's locked dependencies when missing and builds it (`dist/`) with its own
/// `tsc`, once per test process, under the folder's install lock (test binaries may run as
/// parallel processes, and all of them share `dist/`).
pub fn build_sdk() -> std::path::PathBuf {
    static BUILT: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            trust_gate_test_setup::npm_package_then("packages/sdk", |dir| {
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
                dir.to_path_buf()
            })
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
