//! The local stand-in for the external "8004" agent registry and its reputation engine.
//!
//! **This is not the real registry.** It is three small native programs, loaded by
//! [`crate::native::program_test`] at the DEVNET registry and engine program ids and at MPL
//! Core's, and never deployed anywhere, that implement what trust-gate reads and calls with the real account
//! layouts and discriminators (`trust_gate_program_common::external`), so that the gate's
//! account reads and CPIs in tests and in the embedded localnet are real, byte for byte:
//!
//! - [`registry`]: `initialize` (localnet-only), `register_with_options`, `set_agent_wallet`,
//!   `give_feedback` (its nine accounts every time, bounds as the real
//!   one, rejects self-feedback, CPIs the engine's `update_stats`) and `append_response`
//!   (permissionless, the real one's checks); the AgentAccount keeps the real layout and the
//!   real feedback and response hash chains;
//! - [`engine`]: `initialize_config` (localnet-only), `initialize_stats`, `update_config`
//!   (pause and resume), `update_stats` (a simple documented tier model; refused while paused)
//!   and `set_stats` (localnet-only, to seed demo tiers);
//! - [`client`]: instruction builders;
//! - [`layout`]: the constants, offsets and argument structs the stand-in adds to `external`.
//! - [`chains`]: the registry's feedback and response hash chains, computed as the real
//!   registry computes them.
//!
//! - [`core`]: MPL Core's `CreateV2` and `TransferV1` for the agents' assets (real
//!   `BaseAssetV1` accounts owned by MPL Core's id, so the gate reads live owners as on a
//!   cluster); the registry's collection stays a look-alike owned by the registry stand-in
//!   ([`layout::collection`]).
//!
//! - [`channels`]: Solana's payment-channels program (its own stand-in, loaded by
//!   [`crate::native::add_channels`]; see its module docs).
//! - [`subscriptions`]: Solana's Subscriptions program, what a gated subscription uses (its
//!   own stand-in, loaded by [`crate::native::add_subscriptions`]; see its module docs).
//!
//! Errors are `ProgramError::Custom` codes numbered as the real programs answer the same
//! failure: the registry's own from 12000 ([`RegistryError`]), the engine's from 6000
//! ([`EngineError`]), Anchor's framework codes where the real ones fail in their generated
//! account checks. Every failure logs one reason line first. The `externals` suite's
//! differential tests compare them with the real programs'.

pub mod channels;
pub use trust_gate_client::standin::chains;
pub use trust_gate_client::standin::instructions as client;
pub mod core;
pub mod engine;
pub use trust_gate_client::standin::layout;
pub mod registry;
pub mod subscriptions;

pub use engine::EngineError;
pub use layout::{
    agent_tail, args, asset, atom_config, collection, discriminators, registry_config, root_config,
    stats_book, tier_model,
};
pub use registry::RegistryError;

use anchor_lang::prelude::*;
// The prelude's `Result` is Anchor's single-parameter alias; the programs return `ProgramError`.
use anchor_lang::solana_program::entrypoint::ProgramResult;
use anchor_lang::solana_program::{program::invoke_signed, system_instruction, system_program};
use std::result::Result;
use trust_gate_program_common::runtime::log;

/// What both stand-in programs need from their error enums to share the helpers below.
pub(crate) trait StandinError: Copy + std::fmt::Debug {
    /// The program name used in log lines.
    const PROGRAM: &'static str;
    const NOT_ENOUGH_ACCOUNTS: Self;
    const MISSING_SIGNER: Self;
    const NOT_WRITABLE: Self;
    const ALREADY_INITIALIZED: Self;
    const INVALID_INSTRUCTION_DATA: Self;
    fn code(self) -> u32;
}

/// Logs why the instruction fails, then returns the custom error. Logging goes through
/// `runtime::log` because natively `msg!` would print to stdout instead of the transaction
/// log.
pub(crate) fn fail<E: StandinError>(err: E, why: &str) -> ProgramError {
    log(&format!("{} stand-in: {err:?}: {why}", E::PROGRAM));
    ProgramError::Custom(err.code())
}

/// The accounts of an instruction, taken in order with a named error when one is missing.
pub(crate) struct Accounts<'s, 'a> {
    accounts: &'s [AccountInfo<'a>],
    next: usize,
}

impl<'s, 'a> Accounts<'s, 'a> {
    pub(crate) fn new(accounts: &'s [AccountInfo<'a>]) -> Self {
        Self { accounts, next: 0 }
    }

    pub(crate) fn next<E: StandinError>(
        &mut self,
        name: &str,
    ) -> Result<&'s AccountInfo<'a>, ProgramError> {
        let account = self
            .accounts
            .get(self.next)
            .ok_or_else(|| fail(E::NOT_ENOUGH_ACCOUNTS, &format!("missing account `{name}`")))?;
        self.next += 1;
        Ok(account)
    }

    /// The accounts not taken yet.
    pub(crate) fn rest(&self) -> &'s [AccountInfo<'a>] {
        self.accounts.get(self.next..).unwrap_or(&[])
    }
}

pub(crate) fn require_signer<E: StandinError>(account: &AccountInfo, name: &str) -> ProgramResult {
    if account.is_signer {
        Ok(())
    } else {
        Err(fail(E::MISSING_SIGNER, &format!("`{name}` must sign")))
    }
}

pub(crate) fn require_writable<E: StandinError>(
    account: &AccountInfo,
    name: &str,
) -> ProgramResult {
    if account.is_writable {
        Ok(())
    } else {
        Err(fail(E::NOT_WRITABLE, &format!("`{name}` must be writable")))
    }
}

/// Splits Anchor instruction data into its discriminator and the Borsh arguments.
pub(crate) fn split_discriminator<E: StandinError>(
    data: &[u8],
) -> Result<([u8; 8], &[u8]), ProgramError> {
    match data.split_first_chunk::<8>() {
        Some((discriminator, rest)) => Ok((*discriminator, rest)),
        None => Err(fail(
            E::INVALID_INSTRUCTION_DATA,
            "instruction data shorter than a discriminator",
        )),
    }
}

/// Decodes Borsh arguments; trailing bytes are an error, as in Anchor.
pub(crate) fn decode_args<E: StandinError, T: AnchorDeserialize>(
    rest: &[u8],
    name: &str,
) -> Result<T, ProgramError> {
    T::try_from_slice(rest).map_err(|_| {
        fail(
            E::INVALID_INSTRUCTION_DATA,
            &format!("cannot decode the arguments of `{name}`"),
        )
    })
}

/// Creates `target` with `space` zeroed bytes owned by `owner`, rent-exempt, paid by `payer`.
/// `seeds` sign for a PDA target (empty for a keypair target, which signs the transaction).
///
/// A target that already holds lamports but is still an empty system account (someone sent
/// it lamports to block `create_account`) is topped up, allocated and assigned instead, as
/// Anchor's `init` does; anything else counts as already initialized.
pub(crate) fn create_account<'a, E: StandinError>(
    payer: &AccountInfo<'a>,
    target: &AccountInfo<'a>,
    system: &AccountInfo<'a>,
    space: usize,
    owner: &Pubkey,
    seeds: &[&[u8]],
    name: &str,
) -> ProgramResult {
    if *target.owner != system_program::ID || !target.data_is_empty() {
        return Err(fail(
            E::ALREADY_INITIALIZED,
            &format!("`{name}` already exists"),
        ));
    }
    let required = Rent::get()?.minimum_balance(space);
    let signer_seeds: &[&[&[u8]]] = if seeds.is_empty() { &[] } else { &[seeds] };
    let current = target.lamports();
    if current == 0 {
        let ix = system_instruction::create_account(
            payer.key,
            target.key,
            required,
            space as u64,
            owner,
        );
        return invoke_signed(
            &ix,
            &[payer.clone(), target.clone(), system.clone()],
            signer_seeds,
        );
    }
    if let Some(top_up) = required.checked_sub(current).filter(|l| *l > 0) {
        let ix = system_instruction::transfer(payer.key, target.key, top_up);
        invoke_signed(&ix, &[payer.clone(), target.clone(), system.clone()], &[])?;
    }
    let ix = system_instruction::allocate(target.key, space as u64);
    invoke_signed(&ix, &[target.clone(), system.clone()], signer_seeds)?;
    let ix = system_instruction::assign(target.key, owner);
    invoke_signed(&ix, &[target.clone(), system.clone()], signer_seeds)
}

/// The 32 bytes at `at`; callers check the length first.
pub(crate) fn key_at(data: &[u8], at: usize) -> Option<Pubkey> {
    let bytes: [u8; 32] = data.get(at..at.checked_add(32)?)?.try_into().ok()?;
    Some(Pubkey::new_from_array(bytes))
}
