//! The install rules with stand-in tools on a PATH of their own: the real installs are what the
//! suites do on a fresh clone (and CI starts from one every run); what a machine without the
//! tools, or with a broken one, gets can only be shown with tools that behave so.

use super::*;
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicU32, Ordering};

/// One test at a time: a test writing its stand-in tools while another test's thread forks
/// could hand that child the open file, and exec'ing the tool then fails with "Text file
/// busy" (ETXTBSY). Held for a whole test; the parallel-callers test makes its own threads
/// once its tools are written.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A fresh folder with `bin/` for the tools and `pkg/` to install.
fn scratch() -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "trust-gate-test-setup-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("bin")).unwrap();
    fs::create_dir_all(dir.join("pkg")).unwrap();
    fs::write(dir.join("pkg/package-lock.json"), "{\"v\":1}").unwrap();
    fs::write(
        dir.join("pkg/requirements.txt"),
        "x402-conformance==1.6.0\n",
    )
    .unwrap();
    dir
}

fn tool(dir: &Path, name: &str, script: &str) {
    let path = dir.join("bin").join(name);
    // The tools are looked up on a PATH of their own; what they run is on the system's.
    fs::write(&path, format!("#!/bin/sh\nPATH=/usr/bin:/bin\n{script}\n")).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// node at `version`, and an npm that counts its `ci` runs in `pkg/runs`, takes a while (so
/// that parallel callers overlap) and makes `node_modules`.
fn node_and_npm(dir: &Path, version: &str) {
    tool(dir, "node", &format!("echo {version}"));
    tool(
        dir,
        "npm",
        "[ \"$1\" = --version ] && { echo 10.9.0; exit 0; }\n\
         # npm ci --no-audit --no-fund --prefix DIR\n\
         echo run >> \"$5/runs\"; sleep 0.2; mkdir -p \"$5/node_modules\"",
    );
}

fn setup(dir: &Path) -> Setup {
    Setup::new(dir).with_path(dir.join("bin")).quiet()
}

fn runs(dir: &Path) -> usize {
    fs::read_to_string(dir.join("pkg/runs"))
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

fn one_line(e: &SetupError) {
    assert!(!e.0.contains('\n'), "{e}");
}

#[test]
fn parallel_callers_install_once_and_again_when_the_lock_file_changes() {
    let _serial = serial();
    let dir = scratch();
    node_and_npm(&dir, "v20.20.2");
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| setup(&dir).npm_install("pkg").map(drop).unwrap());
        }
    });
    assert_eq!(runs(&dir), 1);
    assert_eq!(
        fs::read(dir.join("pkg/node_modules").join(STAMP)).unwrap(),
        b"{\"v\":1}"
    );
    setup(&dir).npm_install("pkg").unwrap();
    assert_eq!(runs(&dir), 1, "installed and unchanged: nothing to do");
    fs::write(dir.join("pkg/package-lock.json"), "{\"v\":2}").unwrap();
    setup(&dir).npm_install("pkg").unwrap();
    assert_eq!(runs(&dir), 2, "a changed lock file is installed again");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn no_node_is_one_line_naming_it() {
    let _serial = serial();
    let dir = scratch();
    let e = setup(&dir).npm_install("pkg").unwrap_err();
    one_line(&e);
    assert_eq!(
        e.0,
        "pkg needs Node.js 20 or newer with npm: `node` is not on PATH; install Node.js"
    );
    assert_eq!(runs(&dir), 0);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn an_old_node_or_no_npm_is_named() {
    let _serial = serial();
    let dir = scratch();
    node_and_npm(&dir, "v18.19.0");
    let e = setup(&dir).npm_install("pkg").unwrap_err();
    one_line(&e);
    assert!(
        e.0.contains("\"v18.19.0\"") && e.0.ends_with("install Node.js 20+"),
        "{e}"
    );

    tool(&dir, "node", "echo v22.1.0");
    fs::remove_file(dir.join("bin/npm")).unwrap();
    let e = setup(&dir).npm_install("pkg").unwrap_err();
    one_line(&e);
    assert!(e.0.ends_with("`npm` is not on PATH; install npm"), "{e}");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_failing_npm_ci_is_named_and_leaves_no_stamp() {
    let _serial = serial();
    let dir = scratch();
    tool(&dir, "node", "echo v20.0.0");
    tool(&dir, "npm", "[ \"$1\" = --version ] && exit 0; exit 7");
    let e = setup(&dir).npm_install("pkg").unwrap_err();
    one_line(&e);
    assert!(e.0.starts_with("`npm ci` in pkg failed"), "{e}");
    assert!(!dir.join("pkg/node_modules").join(STAMP).exists());
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn no_python_or_no_venv_is_one_line_naming_it() {
    let _serial = serial();
    let dir = scratch();
    let e = setup(&dir).venv_install("pkg").unwrap_err();
    one_line(&e);
    assert!(e.0.contains("`python3` is not on PATH"), "{e}");

    // Debian's python3 without python3-venv.
    tool(
        &dir,
        "python3",
        "[ \"$1\" = --version ] && { echo Python 3.11.2; exit 0; }\n\
         echo 'The virtual environment was not successfully created because ensurepip is not\n\
         available.  On Debian/Ubuntu systems, you need to install the python3-venv' >&2; exit 1",
    );
    let e = setup(&dir).venv_install("pkg").unwrap_err();
    one_line(&e);
    assert!(
        e.0.contains("ensurepip is not") && e.0.ends_with("apt-get install python3-venv)"),
        "{e}"
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_venv_is_made_once_from_its_requirements_file() {
    let _serial = serial();
    let dir = scratch();
    // A python3 whose venv is a folder with a pip that counts its installs.
    tool(
        &dir,
        "python3",
        "[ \"$1\" = --version ] && { echo Python 3.11.2; exit 0; }\n\
         # python3 -m venv --clear DIR\n\
         mkdir -p \"$4/bin\"; printf '#!/bin/sh\\nPATH=/usr/bin:/bin\\necho pip >> \"$(dirname \"$0\")/../../runs\"\\n' \
         > \"$4/bin/pip\"; chmod 755 \"$4/bin/pip\"",
    );
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| setup(&dir).venv_install("pkg").map(drop).unwrap());
        }
    });
    assert_eq!(runs(&dir), 1);
    assert!(dir.join("pkg/.venv").join(STAMP).exists());
    let _ = fs::remove_dir_all(&dir);
}
