//! Solana's payment-channels program for the `channels` suite: its real SBF build from the
//! folder `TRUST_GATE_CHANNELS_DIR` names, else `../shared/fixtures/payment-channels` beside the
//! repository, loaded at its id through the upgradeable loader (as a program dumped from a
//! cluster), beside everything `crate::start` has.

use anchor_lang::prelude::Pubkey;
use solana_program_test::{ProgramTest, ProgramTestContext};
use trust_gate_client::channels::PROGRAM_ID;

/// Names another folder holding `payment_channels.so`.
pub const DIR_VAR: &str = "TRUST_GATE_CHANNELS_DIR";
/// The build's file name.
pub const FILE: &str = "payment_channels.so";

/// The build's path, and how to name it in a message.
pub fn path() -> (std::path::PathBuf, String) {
    match std::env::var_os(DIR_VAR).filter(|d| !d.is_empty()) {
        Some(d) => {
            let p = std::path::PathBuf::from(&d).join(FILE);
            let shown = p.to_string_lossy().into_owned();
            (p, shown)
        }
        None => (
            trust_gate_test_setup::repo_root()
                .join("../shared/fixtures/payment-channels")
                .join(FILE),
            format!("../shared/fixtures/payment-channels/{FILE}"),
        ),
    }
}

/// The bytecode at `path` (shown as `shown`), or one line saying which file is missing.
pub fn read(path: &std::path::Path, shown: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| {
        format!("payment-channels fixture missing: {shown} ({e}); set {DIR_VAR} to its folder")
    })
}

/// The program's bytecode. A missing build fails the test with one line naming it: the suite
/// is meaningless without the real program.
pub fn elf() -> Vec<u8> {
    let (path, shown) = path();
    read(&path, &shown).unwrap_or_else(|why| panic!("{why}"))
}

/// `pt` with the real program at its id.
pub fn add_to(pt: &mut ProgramTest) {
    let authority = Pubkey::new_unique();
    for (address, account) in
        trust_gate_localnet::externals::upgradeable_program(&PROGRAM_ID, &elf(), &authority)
    {
        pt.add_account(address, account);
    }
}

/// A bank with every program trust-gate touches and the real payment-channels program.
pub async fn start() -> ProgramTestContext {
    let mut pt = trust_gate_localnet::native::program_test();
    add_to(&mut pt);
    pt.start_with_context().await
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_missing_build_is_one_line_naming_it() {
        let path = std::env::temp_dir().join("no-such-folder-of-trust-gate/payment_channels.so");
        let why = super::read(&path, "the/shown/path.so").unwrap_err();
        assert!(
            why.starts_with("payment-channels fixture missing: the/shown/path.so"),
            "{why}"
        );
        assert!(!why.contains('\n'), "{why}");
    }
}
