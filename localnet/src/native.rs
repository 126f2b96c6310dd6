//! Our programs loaded natively (`processor!`) into a solana-program-test bank.

// program-test 3.1 flags its whole API as "to become unstable in 4.0"; we pin =3.1.12.
#![allow(deprecated)]

use anchor_lang::prelude::Pubkey;
use anchor_lang::solana_program::{account_info::AccountInfo, entrypoint::ProgramResult};
use solana_program_test::{processor, ProgramTest};
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

/// A ProgramTest with trust-gate's three programs, the registry and engine stand-ins at the
/// external program ids, and (added by ProgramTest itself) SPL Token, Token-2022 and the
/// Associated Token Account program.
pub fn program_test() -> ProgramTest {
    let mut pt = ProgramTest::default();
    // ProgramTest::default() turns on debug logs of every instruction; keep a run quiet unless
    // RUST_LOG asks for more.
    agave_logger::setup_with_default("error");
    pt.prefer_bpf(false);
    pt.add_program(
        "policy_vault",
        policy_vault::ID,
        processor!(policy_vault_entry),
    );
    pt.add_program("gate", gate::ID, processor!(gate_entry));
    pt.add_program(
        "validation_registry",
        validation_registry::ID,
        processor!(validation_registry_entry),
    );
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
    pt
}

/// Adds the CPI example (`programs/examples/gated_escrow`), which asks the gate for decisions
/// by CPI. Only its tests load it: the localnet and the migrations never deploy it.
pub fn add_cpi_example(pt: &mut ProgramTest) {
    pt.add_program(
        "gated_escrow",
        gated_escrow::ID,
        processor!(gated_escrow_entry),
    );
}
