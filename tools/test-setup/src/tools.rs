//! The tools that install the folders (node, npm, python3 and the venv's pip), each run as a
//! process, and the one-line errors that name what to install when one is missing.

use crate::SetupError;
use std::ffi::OsString;
use std::io::ErrorKind;
use std::os::fd::AsFd;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};

/// The oldest Node.js major version the suites run on (`engines` of `packages/sdk`).
const NODE_MAJOR: u32 = 20;

#[derive(Default)]
pub(crate) struct Tools {
    /// A PATH to find the tools on instead of the process's own.
    path: Option<OsString>,
}

impl Tools {
    pub(crate) fn on_path(path: OsString) -> Self {
        Tools { path: Some(path) }
    }

    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        if let Some(path) = &self.path {
            // A PATH set on the command is also where the program itself is looked up.
            cmd.env("PATH", path);
        }
        cmd
    }

    /// `node` at version 20 or newer, and `npm`.
    pub(crate) fn require_node(&self, rel: &str) -> Result<(), SetupError> {
        let need = format!("{rel} needs Node.js {NODE_MAJOR} or newer with npm");
        let version = self.version_of("node", &need, "install Node.js")?;
        let major = version
            .trim()
            .trim_start_matches('v')
            .split('.')
            .next()
            .and_then(|m| m.parse::<u32>().ok());
        match major {
            Some(m) if m >= NODE_MAJOR => {}
            _ => {
                return Err(SetupError(format!(
                    "{need}: `node --version` says {:?}; install Node.js {NODE_MAJOR}+",
                    version.trim()
                )))
            }
        }
        self.version_of("npm", &need, "install npm").map(drop)
    }

    /// `python3`; whether it has venv shows when the environment is made.
    pub(crate) fn require_python(&self, rel: &str) -> Result<(), SetupError> {
        let need = format!("{rel} needs Python 3 with venv");
        self.version_of("python3", &need, "install Python 3 (python3, python3-venv)")
            .map(drop)
    }

    /// `program --version`'s output, or the error that says what to install.
    fn version_of(&self, program: &str, need: &str, install: &str) -> Result<String, SetupError> {
        match self.command(program).arg("--version").output() {
            Ok(out) if out.status.success() => {
                let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
                text.push_str(&String::from_utf8_lossy(&out.stderr));
                Ok(text)
            }
            Ok(out) => Err(SetupError(format!(
                "{need}: `{program} --version` failed ({}); {install}",
                out.status
            ))),
            Err(e) if e.kind() == ErrorKind::NotFound => Err(SetupError(format!(
                "{need}: `{program}` is not on PATH; {install}"
            ))),
            Err(e) => Err(SetupError(format!(
                "{need}: `{program}` cannot be run ({e}); {install}"
            ))),
        }
    }

    /// `npm ci` in `dir`, its output on our stderr (stdout is the test runner's report).
    pub(crate) fn npm_ci(&self, dir: &Path, rel: &str) -> Result<(), SetupError> {
        let status = self
            .command("npm")
            .args(["ci", "--no-audit", "--no-fund", "--prefix"])
            .arg(dir)
            .stdout(to_stderr())
            .status();
        finished(status, &format!("`npm ci` in {rel}"), "npm")
    }

    /// A fresh virtual environment at `venv` (`--clear`: one left half-made by an interrupted
    /// run is made again).
    pub(crate) fn make_venv(&self, venv: &Path, rel: &str) -> Result<(), SetupError> {
        let out = self
            .command("python3")
            .args(["-m", "venv", "--clear"])
            .arg(venv)
            .output()
            .map_err(|e| SetupError(format!("{rel} needs Python 3 with venv: `python3` ({e})")))?;
        if out.status.success() {
            return Ok(());
        }
        // Debian's python3 without python3-venv fails here, its advice on the last lines.
        let said = String::from_utf8_lossy(&out.stderr);
        let said = said
            .lines()
            .chain(String::from_utf8_lossy(&out.stdout).lines())
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("no output")
            .to_string();
        Err(SetupError(format!(
            "{rel} needs Python 3 with venv: `python3 -m venv` failed ({said}); install venv \
             (Debian: apt-get install python3-venv)"
        )))
    }

    /// `pip install -r requirements` into the environment.
    pub(crate) fn pip_install(
        &self,
        venv: &Path,
        requirements: &Path,
        rel: &str,
    ) -> Result<(), SetupError> {
        let status = self
            .command(venv.join("bin/pip"))
            .args(["install", "--quiet", "--disable-pip-version-check", "-r"])
            .arg(requirements)
            .stdout(to_stderr())
            .status();
        finished(
            status,
            &format!("`pip install -r {rel}/requirements.txt`"),
            "pip",
        )
    }
}

fn finished(status: std::io::Result<ExitStatus>, what: &str, tool: &str) -> Result<(), SetupError> {
    match status {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(SetupError(format!(
            "{what} failed ({s}); {tool}'s output is above"
        ))),
        Err(e) => Err(SetupError(format!("{what} could not start: {e}"))),
    }
}

/// Our stderr, for a child's stdout.
fn to_stderr() -> Stdio {
    std::io::stderr()
        .as_fd()
        .try_clone_to_owned()
        .map(Stdio::from)
        .unwrap_or_else(|_| Stdio::inherit())
}
