//! A third party's program from `../shared/fixtures` (its real SBF build), loaded at its id
//! through the upgradeable loader as a program dumped from a cluster. A suite that runs one
//! is meaningless without it, so a missing build fails the test with one line naming it.

use anchor_lang::prelude::Pubkey;
use solana_program_test::ProgramTest;

/// Where one program's build is found.
pub struct Fixture {
    /// The program's id.
    pub id: Pubkey,
    /// How the one-line failure names it (`payment-channels`).
    pub name: &'static str,
    /// Its folder under `../shared/fixtures`.
    pub folder: &'static str,
    /// The build's file name.
    pub file: &'static str,
    /// A variable naming another folder holding `file`.
    pub dir_var: &'static str,
}

impl Fixture {
    /// The build's path, and how to name it in a message.
    pub fn path(&self) -> (std::path::PathBuf, String) {
        match std::env::var_os(self.dir_var).filter(|d| !d.is_empty()) {
            Some(d) => {
                let p = std::path::PathBuf::from(&d).join(self.file);
                let shown = p.to_string_lossy().into_owned();
                (p, shown)
            }
            None => (
                trust_gate_test_setup::repo_root()
                    .join("../shared/fixtures")
                    .join(self.folder)
                    .join(self.file),
                format!("../shared/fixtures/{}/{}", self.folder, self.file),
            ),
        }
    }

    /// The bytecode at `path` (shown as `shown`), or one line saying which file is missing.
    pub fn read(&self, path: &std::path::Path, shown: &str) -> Result<Vec<u8>, String> {
        std::fs::read(path).map_err(|e| {
            format!(
                "{} fixture missing: {shown} ({e}); set {} to its folder",
                self.name, self.dir_var
            )
        })
    }

    /// The program's bytecode; panics with [`Fixture::read`]'s line when it is missing.
    pub fn elf(&self) -> Vec<u8> {
        let (path, shown) = self.path();
        self.read(&path, &shown)
            .unwrap_or_else(|why| panic!("{why}"))
    }

    /// `pt` with the real program at its id.
    pub fn add_to(&self, pt: &mut ProgramTest) {
        let authority = Pubkey::new_unique();
        for (address, account) in
            trust_gate_localnet::externals::upgradeable_program(&self.id, &self.elf(), &authority)
        {
            pt.add_account(address, account);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_missing_build_is_one_line_naming_it() {
        for fixture in [crate::channels::FIXTURE, crate::subscriptions::FIXTURE] {
            let path = std::env::temp_dir().join("no-such-folder-of-trust-gate/program.so");
            let why = fixture.read(&path, "the/shown/path.so").unwrap_err();
            assert!(
                why.starts_with(&format!(
                    "{} fixture missing: the/shown/path.so",
                    fixture.name
                )),
                "{why}"
            );
            assert!(why.contains(fixture.dir_var), "{why}");
            assert!(!why.contains('\n'), "{why}");
        }
    }
}
