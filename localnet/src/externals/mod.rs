//! The REAL external programs, loaded from SBF builds in a folder in place of the stand-ins:
//! the 8004 agent registry, its ATOM reputation engine and (when the folder has it) MPL Core,
//! and Solana's payment-channels and Subscriptions programs when their builds are found
//! ([`CHANNELS_FILE`], [`SUBSCRIPTIONS_FILE`] in the folder, or in the `payment-channels` and
//! `subscriptions` folders beside it, as the fixtures are laid out), at their program ids, as `solana-test-validator --upgradeable-program` loads them. The
//! registry and the engine check their upgrade authority in their one-time initialization, so
//! both are loaded through the upgradeable loader with an upgrade authority the caller holds;
//! [`admin`] builds those initializations.
//!
//! The builds are third-party bytecode (the project's tests take them from
//! `../shared/fixtures/8004`, whose README says where they come from); nothing here copies
//! them anywhere.

// program-test 3.1 flags its whole API as "to become unstable in 4.0"; we pin =3.1.12.
#![allow(deprecated)]

pub mod admin;

use anchor_lang::prelude::Pubkey;
use solana_loader_v3_interface::{get_program_data_address, state::UpgradeableLoaderState};
use solana_program_test::ProgramTest;
use solana_sdk::account::Account;
use solana_sdk::rent::Rent;
use std::path::{Path, PathBuf};
use trust_gate_program_common::external::ids;

/// The registry's build in the folder.
pub const REGISTRY_FILE: &str = "agent_registry_8004.so";
/// The engine's build in the folder.
pub const ENGINE_FILE: &str = "atom_engine.so";
/// MPL Core's build in the folder (optional: without it nothing runs at MPL Core's id).
pub const MPL_CORE_FILE: &str = "mpl_core.so";
/// The payment-channels program's build (optional: without it the localnet serves the
/// stand-in, [`crate::standin::channels`]).
pub const CHANNELS_FILE: &str = "payment_channels.so";
/// The folder beside the registry's that may hold [`CHANNELS_FILE`] instead.
pub const CHANNELS_SIBLING_DIR: &str = "payment-channels";
/// The Subscriptions program's build (optional: without it the localnet serves the
/// stand-in, [`crate::standin::subscriptions`]).
pub const SUBSCRIPTIONS_FILE: &str = "subscriptions_program.so";
/// The folder beside the registry's that may hold [`SUBSCRIPTIONS_FILE`] instead.
pub const SUBSCRIPTIONS_SIBLING_DIR: &str = "subscriptions";

/// A folder of the real programs' SBF builds, checked to hold the registry and the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExternalPrograms {
    pub dir: PathBuf,
    /// Whether the folder has MPL Core too.
    pub mpl_core: bool,
    /// The payment-channels build, if found.
    pub channels: Option<PathBuf>,
    /// The Subscriptions build, if found.
    pub subscriptions: Option<PathBuf>,
}

/// `file` in `dir`, else in the folder `sibling` beside `dir`, if either has it.
fn find_beside(dir: &Path, file: &str, sibling: &str) -> Option<PathBuf> {
    let beside = dir.parent().map(|parent| parent.join(sibling).join(file));
    std::iter::once(dir.join(file))
        .chain(beside)
        .find(|path| path.is_file())
}

impl ExternalPrograms {
    /// The builds in `dir`, or an error naming the first missing file.
    pub fn in_dir(dir: &Path) -> Result<ExternalPrograms, String> {
        for file in [REGISTRY_FILE, ENGINE_FILE] {
            let path = dir.join(file);
            if !path.is_file() {
                return Err(format!("no {file} in {}", dir.display()));
            }
        }
        Ok(ExternalPrograms {
            dir: dir.to_path_buf(),
            mpl_core: dir.join(MPL_CORE_FILE).is_file(),
            channels: find_beside(dir, CHANNELS_FILE, CHANNELS_SIBLING_DIR),
            subscriptions: find_beside(dir, SUBSCRIPTIONS_FILE, SUBSCRIPTIONS_SIBLING_DIR),
        })
    }

    /// One line for logs and start-up banners.
    pub fn describe(&self) -> String {
        let channels = match &self.channels {
            Some(path) => format!(
                "; the real payment-channels program from {}",
                path.display()
            ),
            None => "; the payment-channels stand-in (no payment_channels.so found)".to_string(),
        };
        let subscriptions = match &self.subscriptions {
            Some(path) => format!("; the real Subscriptions program from {}", path.display()),
            None => "; the Subscriptions stand-in (no subscriptions_program.so found)".to_string(),
        };
        format!(
            "the real registry and engine{} from {}{channels}{subscriptions}",
            if self.mpl_core { " and MPL Core" } else { "" },
            self.dir.display()
        )
    }

    /// Adds the programs to `pt` at their devnet ids (MPL Core, payment-channels and
    /// Subscriptions at their one id), each owned by the upgradeable loader with `upgrade_authority` as its upgrade
    /// authority.
    pub fn add_to(&self, pt: &mut ProgramTest, upgrade_authority: &Pubkey) -> Result<(), String> {
        let mut programs = vec![
            (self.dir.join(REGISTRY_FILE), ids::AGENT_REGISTRY),
            (self.dir.join(ENGINE_FILE), ids::REPUTATION_ENGINE),
        ];
        if self.mpl_core {
            programs.push((self.dir.join(MPL_CORE_FILE), ids::MPL_CORE));
        }
        if let Some(path) = &self.channels {
            programs.push((path.clone(), trust_gate_client::channels::PROGRAM_ID));
        }
        if let Some(path) = &self.subscriptions {
            programs.push((path.clone(), trust_gate_client::subscriptions::PROGRAM_ID));
        }
        for (path, id) in programs {
            let elf =
                std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            for (address, account) in upgradeable_program(&id, &elf, upgrade_authority) {
                pt.add_account(address, account);
            }
        }
        Ok(())
    }
}

/// The program account and its ProgramData account, as the upgradeable loader leaves them
/// after a deployment at slot 0 with `authority` as the upgrade authority.
pub fn upgradeable_program(id: &Pubkey, elf: &[u8], authority: &Pubkey) -> [(Pubkey, Account); 2] {
    let rent = Rent::default();
    let loader = solana_sdk_ids::bpf_loader_upgradeable::id();
    let programdata_address = get_program_data_address(id);
    let program = bincode::serialize(&UpgradeableLoaderState::Program {
        programdata_address,
    })
    .expect("a program account serializes");
    let mut programdata = bincode::serialize(&UpgradeableLoaderState::ProgramData {
        slot: 0,
        upgrade_authority_address: Some(*authority),
    })
    .expect("a programdata account serializes");
    programdata.extend_from_slice(elf);
    [
        (
            *id,
            Account {
                lamports: rent.minimum_balance(program.len()),
                data: program,
                owner: loader,
                executable: true,
                rent_epoch: 0,
            },
        ),
        (
            programdata_address,
            Account {
                lamports: rent.minimum_balance(programdata.len()),
                data: programdata,
                owner: loader,
                executable: false,
                rent_epoch: 0,
            },
        ),
    ]
}
