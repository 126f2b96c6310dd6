//! The external clients the test suites drive, installed by the tests themselves on first use:
//! the Node packages of `tests/web3`, `tests/mcp-inspector`, `tests/mcp-client` and
//! `packages/sdk` from their committed lock files (`npm ci`), and the Python virtual
//! environment of `tests/x402` from its requirements file. So `cargo test --workspace` on a fresh clone needs nothing done by hand,
//! only the tools themselves on the machine (Node.js 20+ with npm, Python 3 with venv).
//!
//! Each folder is installed once: under a file lock (tests of one binary run on parallel
//! threads, and test binaries may run as parallel processes), and again only when its lock or
//! requirements file changes, which a stamp beside the installed packages records. A missing
//! tool is a one-line error naming what to install.
//!
//! Also [`RedisServer`]: a `redis-server` of a test's own, on a free loopback port.

mod redis_server;
mod tools;

pub use redis_server::RedisServer;

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use tools::Tools;

/// The stamp an install leaves: a copy of the lock or requirements file it installed from.
const STAMP: &str = ".trust-gate-installed";

/// Why a folder could not be installed: one line, naming what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupError(pub String);

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SetupError {}

/// The repository's root: the nearest folder with a `Cargo.lock` above the package under
/// test. It is found at run time from the `CARGO_MANIFEST_DIR` that `cargo test` gives each
/// test process, because a path compiled in is the path of whichever clone compiled this
/// crate: clones sharing one target directory (CI keeps one warm) reuse the build, and would
/// install and test another clone's folders. Outside cargo, the compiled-in path is the
/// fallback.
pub fn repo_root() -> PathBuf {
    let package = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    package
        .ancestors()
        .find(|dir| dir.join("Cargo.lock").is_file())
        .map(Path::to_path_buf)
        .unwrap_or(package)
}

/// Installs the Node packages of the repository folder `rel` (say `tests/mcp-inspector`) from
/// its lock file unless they are installed already, and returns the folder. Panics with the
/// one-line reason when that cannot be done: the check that needs them is part of the suite.
pub fn npm_package(rel: &str) -> PathBuf {
    npm_package_then(rel, |dir| dir.to_path_buf())
}

/// As [`npm_package`], then runs `then` on the folder while still holding its lock: for work
/// that writes into the folder too (the TypeScript SDK's `tsc` build into `dist/`).
pub fn npm_package_then<T>(rel: &str, then: impl FnOnce(&Path) -> T) -> T {
    let setup = Setup::new(repo_root());
    let (dir, _held) = setup.npm_install(rel).unwrap_or_else(|e| panic!("{e}"));
    then(&dir)
}

/// Makes the Python virtual environment `rel/.venv` from `rel/requirements.txt` unless it is
/// made already, and returns the environment's folder. Panics with the one-line reason.
pub fn python_venv(rel: &str) -> PathBuf {
    let setup = Setup::new(repo_root());
    let (venv, _held) = setup.venv_install(rel).unwrap_or_else(|e| panic!("{e}"));
    venv
}

/// Where folders are installed from, and which tools do it.
pub struct Setup {
    root: PathBuf,
    tools: Tools,
    /// Say on stderr what is being installed.
    announce: bool,
}

impl Setup {
    /// Folders under `root`, installed with the tools on this process's PATH.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Setup {
            root: root.into(),
            tools: Tools::default(),
            announce: true,
        }
    }

    /// Finds the tools on `path` instead of this process's PATH.
    pub fn with_path(mut self, path: impl Into<std::ffi::OsString>) -> Self {
        self.tools = Tools::on_path(path.into());
        self
    }

    /// Installs without saying so (this crate's own tests).
    pub fn quiet(mut self) -> Self {
        self.announce = false;
        self
    }

    /// `npm ci` in `rel` unless its stamp equals its lock file. Returns the folder and its held
    /// lock.
    pub fn npm_install(&self, rel: &str) -> Result<(PathBuf, File), SetupError> {
        let dir = self.root.join(rel);
        let (wanted, held) = locked_read(&dir.join("package-lock.json"), rel)?;
        let stamp = dir.join("node_modules").join(STAMP);
        if fs::read(&stamp).ok().as_deref() == Some(&wanted[..]) {
            return Ok((dir, held));
        }
        self.tools.require_node(rel)?;
        self.announce(&format!("installing {rel} from its lock file…"));
        self.tools.npm_ci(&dir, rel)?;
        write_stamp(&stamp, &wanted, rel)?;
        Ok((dir, held))
    }

    /// `python3 -m venv rel/.venv` and `pip install -r rel/requirements.txt` unless the
    /// environment's stamp equals the requirements file. Returns the environment and the held
    /// lock.
    pub fn venv_install(&self, rel: &str) -> Result<(PathBuf, File), SetupError> {
        let dir = self.root.join(rel);
        let requirements = dir.join("requirements.txt");
        let (wanted, held) = locked_read(&requirements, rel)?;
        let venv = dir.join(".venv");
        let stamp = venv.join(STAMP);
        if fs::read(&stamp).ok().as_deref() == Some(&wanted[..]) {
            return Ok((venv, held));
        }
        self.tools.require_python(rel)?;
        self.announce(&format!("installing {rel} from its requirements file…"));
        self.tools.make_venv(&venv, rel)?;
        self.tools.pip_install(&venv, &requirements, rel)?;
        write_stamp(&stamp, &wanted, rel)?;
        Ok((venv, held))
    }

    /// Says on stderr what is being installed. Written to the stream itself, not through
    /// `eprintln!`, which the test harness captures and shows only for a failing test.
    fn announce(&self, line: &str) {
        if self.announce {
            let _ = writeln!(std::io::stderr(), "{line}");
        }
    }
}

/// Takes an exclusive lock on the committed file `path` (the lock or requirements file, which
/// no install rewrites, so no lock file of our own is left behind) and reads it. The lock is
/// an advisory `flock`: separate opens conflict, so it orders threads and processes alike, and
/// it is released when the returned file is dropped.
fn locked_read(path: &Path, rel: &str) -> Result<(Vec<u8>, File), SetupError> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let cannot = |e: std::io::Error| SetupError(format!("{rel}/{name} cannot be read: {e}"));
    let file = File::open(path).map_err(cannot)?;
    file.lock().map_err(cannot)?;
    let wanted = fs::read(path).map_err(cannot)?;
    Ok((wanted, file))
}

fn write_stamp(stamp: &Path, wanted: &[u8], rel: &str) -> Result<(), SetupError> {
    fs::write(stamp, wanted)
        .map_err(|e| SetupError(format!("{rel}: cannot write {}: {e}", stamp.display())))
}

#[cfg(test)]
mod tests;
