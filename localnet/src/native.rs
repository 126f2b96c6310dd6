//! Our programs loaded into a solana-program-test bank: natively (`processor!`), or the SBF
//! builds that `tools/sbf/build` writes when `SBF_OUT_DIR` names their folder. This is the
//! one place that decides; the registry, engine, payment-channels and Subscriptions
//! stand-ins and the test-only programs are always native, and the REAL external programs
//! ([`crate::externals`]) are always SBF.

// program-test 3.1 flags its whole API as "to become unstable in 4.0"; we pin =3.1.12.
#![allow(deprecated)]

use crate::externals::ExternalPrograms;
use anchor_lang::prelude::Pubkey;
use anchor_lang::solana_program::{account_info::AccountInfo, entrypoint::ProgramResult};
use solana_program_test::{processor, ProgramTest};
use std::path::{Path, PathBuf};
use trust_gate_program_common::external::ids;

/// Adapts an Anchor-generated `entry` to the signature `processor!` expects.
///
/// Anchor's `entry<'info>` ties the program id, the account slice and the data to one
/// lifetime, while the builtin signature gives each its own (anchor#2738). The runtime keeps
/// all three alive for the whole call, so unifying the lifetimes is sound.
macro_rules! native_entry {
    ($name:ident, $entry:path) => {
        pub fn $name(program_id: &Pubkey, accounts: &[AccountInfo], data: &[u8]) -> ProgramResult {
            // SAFETY: see the macro's documentation; only lifetimes change.
            let (program_id, accounts, data): (&Pubkey, &[AccountInfo], &[u8]) =
                unsafe { std::mem::transmute((program_id, accounts, data)) };
            $entry(program_id, accounts, data)
        }
    };
}

native_entry!(policy_vault_entry, policy_vault::entry);
native_entry!(gate_entry, gate::entry);
native_entry!(validation_registry_entry, validation_registry::entry);
native_entry!(gated_escrow_entry, gated_escrow::entry);

/// The environment variable naming the folder of the SBF builds (`<program>.so`), as
/// solana-program-test and `cargo test-sbf` name it.
pub const SBF_OUT_DIR: &str = "SBF_OUT_DIR";

/// The programs `tools/sbf/build` writes, by file stem.
pub const SBF_PROGRAMS: [&str; 4] = [
    "policy_vault",
    "gate",
    "validation_registry",
    "gated_escrow",
];

/// Where `tools/sbf/build` puts `program`'s SBF build in its output folder `dir`.
pub fn sbf_file(dir: &Path, program: &str) -> PathBuf {
    dir.join(format!("{program}.so"))
}

/// Where trust-gate's programs come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Programs {
    /// Compiled into this binary and run by the bank as builtins.
    Native,
    /// The SBF builds (`<program>.so`) in this folder, run by the bank's SBF virtual machine.
    Sbf(PathBuf),
}

impl Programs {
    /// `SBF_OUT_DIR` set (and not empty): the SBF builds in that folder; otherwise native.
    pub fn from_env() -> Programs {
        match std::env::var_os(SBF_OUT_DIR) {
            Some(dir) if !dir.is_empty() => Programs::Sbf(PathBuf::from(dir)),
            _ => Programs::Native,
        }
    }

    /// The SBF builds in `dir` if every program is there, else an error naming the first
    /// missing file.
    pub fn sbf_in(dir: &Path) -> Result<Programs, String> {
        for name in SBF_PROGRAMS {
            let file = sbf_file(dir, name);
            if !file.is_file() {
                return Err(format!("no SBF build at {}", file.display()));
            }
        }
        Ok(Programs::Sbf(dir.to_path_buf()))
    }

    /// One line for logs and start-up banners.
    pub fn describe(&self) -> String {
        match self {
            Programs::Native => "native (compiled into this binary)".to_string(),
            Programs::Sbf(dir) => format!("SBF builds from {}", dir.display()),
        }
    }
}

/// Adds one of our programs: its `.so` from the SBF folder, or its native entry.
macro_rules! add_ours {
    ($programs:expr, $pt:expr, $name:literal, $id:expr, $entry:ident) => {
        match $programs {
            Programs::Native => $pt.add_program($name, $id, processor!($entry)),
            Programs::Sbf(dir) => add_sbf($pt, dir, $name, $id),
        }
    };
}

/// Loads `<dir>/<name>.so` at `id` as a cluster deploys it: through the upgradeable loader
/// (a 36-byte program account, the ELF in its ProgramData account), so that compute units
/// are metered as on a cluster. (Under the non-upgradeable loader the program account holds
/// the whole ELF, and every CPI that passes it as an account pays for its size: about 3 300
/// units for an 820 KB program.) By path, not solana-program-test's search list, which falls
/// back to the working directory: a missing build must fail, not go unnoticed.
fn add_sbf(pt: &mut ProgramTest, dir: &Path, name: &str, id: Pubkey) {
    let file = sbf_file(dir, name);
    let data = std::fs::read(&file).unwrap_or_else(|e| {
        panic!(
            "{SBF_OUT_DIR} is set but {} cannot be read ({e}); build it with tools/sbf/build",
            file.display()
        )
    });
    for (address, account) in
        crate::externals::upgradeable_program(&id, &data, &SBF_UPGRADE_AUTHORITY)
    {
        pt.add_account(address, account);
    }
}

/// The upgrade authority our SBF programs are loaded with in tests: a key nobody holds.
const SBF_UPGRADE_AUTHORITY: Pubkey = Pubkey::new_from_array([7; 32]);

/// [`program_test_with`] the programs [`Programs::from_env`] names.
pub fn program_test() -> ProgramTest {
    program_test_with(&Programs::from_env())
}

/// A ProgramTest with trust-gate's three programs (native or SBF), the registry and engine
/// stand-ins at the external program ids, and (added by ProgramTest itself) SPL Token,
/// Token-2022 and the Associated Token Account program.
pub fn program_test_with(programs: &Programs) -> ProgramTest {
    program_test_on(programs, None)
}

/// As [`program_test_with`], with `externals` (the real programs' builds and the upgrade
/// authority to load them with) at the external program ids instead of the stand-ins.
pub fn program_test_on(
    programs: &Programs,
    externals: Option<(&ExternalPrograms, &Pubkey)>,
) -> ProgramTest {
    let mut pt = ProgramTest::default();
    // ProgramTest::default() turns on debug logs of every instruction; keep a run quiet unless
    // RUST_LOG asks for more.
    agave_logger::setup_with_default("error");
    pt.prefer_bpf(false);
    add_ours!(
        programs,
        &mut pt,
        "policy_vault",
        policy_vault::ID,
        policy_vault_entry
    );
    add_ours!(programs, &mut pt, "gate", gate::ID, gate_entry);
    add_ours!(
        programs,
        &mut pt,
        "validation_registry",
        validation_registry::ID,
        validation_registry_entry
    );
    if let Some((real, upgrade_authority)) = externals {
        real.add_to(&mut pt, upgrade_authority)
            .unwrap_or_else(|e| panic!("the real registry and engine: {e}"));
        return pt;
    }
    pt.add_program(
        "agent_registry_standin",
        ids::AGENT_REGISTRY,
        processor!(crate::standin::registry::process_instruction),
    );
    pt.add_program(
        "reputation_engine_standin",
        ids::REPUTATION_ENGINE,
        processor!(crate::standin::engine::process_instruction),
    );
    pt.add_program(
        "mpl_core_standin",
        ids::MPL_CORE,
        processor!(crate::standin::core::process_instruction),
    );
    pt
}

/// Solana's payment-channels program as the localnet serves it: the stand-in
/// ([`crate::standin::channels`]) unless `externals` found the real build, which
/// [`ExternalPrograms::add_to`] loads at the same id (as the real registry and engine replace
/// their stand-ins).
///
/// Not part of [`program_test_on`]: the `channels` suites load the real bytecode at the
/// program's id on top of [`program_test`], and an account added to a ProgramTest does not
/// replace a builtin registered at the same id (the bank keeps running the builtin's cache
/// entry, and the loader refuses it). So the stand-in is added only where nothing else is.
pub fn add_channels(pt: &mut ProgramTest, externals: Option<&ExternalPrograms>) {
    if externals.is_some_and(|real| real.channels.is_some()) {
        return;
    }
    add_channels_standin(pt);
}

/// The payment-channels stand-in at the program's id.
pub fn add_channels_standin(pt: &mut ProgramTest) {
    pt.add_program(
        "payment_channels_standin",
        trust_gate_client::channels::PROGRAM_ID,
        processor!(crate::standin::channels::process_instruction),
    );
}

/// Solana's Subscriptions program as the localnet serves it: the stand-in
/// ([`crate::standin::subscriptions`]) unless `externals` found the real build, as for
/// [`add_channels`].
pub fn add_subscriptions(pt: &mut ProgramTest, externals: Option<&ExternalPrograms>) {
    if externals.is_some_and(|real| real.subscriptions.is_some()) {
        return;
    }
    add_subscriptions_standin(pt);
}

/// The Subscriptions stand-in at the program's id.
pub fn add_subscriptions_standin(pt: &mut ProgramTest) {
    pt.add_program(
        "subscriptions_standin",
        trust_gate_client::subscriptions::PROGRAM_ID,
        processor!(crate::standin::subscriptions::process_instruction),
    );
}

/// What `trust-gate up` runs: [`program_test_on`], the payment-channels program
/// ([`add_channels`]) and the Subscriptions program ([`add_subscriptions`]).
pub fn localnet_program_test(
    programs: &Programs,
    externals: Option<(&ExternalPrograms, &Pubkey)>,
) -> ProgramTest {
    let mut pt = program_test_on(programs, externals);
    add_channels(&mut pt, externals.map(|(real, _)| real));
    add_subscriptions(&mut pt, externals.map(|(real, _)| real));
    pt
}

/// Adds the CPI example (`programs/examples/gated_escrow`), which asks the gate for decisions
/// by CPI, from the same source as [`program_test`]. Only its tests load it: the localnet and
/// the migrations never deploy it.
pub fn add_cpi_example(pt: &mut ProgramTest) {
    add_ours!(
        &Programs::from_env(),
        pt,
        "gated_escrow",
        gated_escrow::ID,
        gated_escrow_entry
    );
}
