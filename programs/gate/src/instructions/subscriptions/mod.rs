//! A gated subscription's instructions: `subscribe` (the authority and the recurring
//! delegation to the gate's delegate, and the gate's record of it), `gate_pull` (one pull
//! under the payer's policy, with its feedback) and `unsubscribe` (the delegation revoked and
//! the record closed, every rent back). The rules are in [`crate::subscription`];
//! docs/subscriptions.md.

mod pull;
mod subscribe;
mod unsubscribe;

pub use pull::*;
pub use subscribe::*;
pub use unsubscribe::*;

use super::helpers::parties::check_mint;
use crate::errors::GateError;
use anchor_lang::prelude::*;
use trust_gate_program_common::token_mint;

/// A mint the gate pulls in: what a settlement's may be (`check_mint`), no transfer hook now
/// or settable (a pull carries no hook accounts), and decimals the feedback can state.
/// Returns the decimals.
fn check_pull_mint(info: &AccountInfo) -> Result<u8> {
    check_mint(info)?;
    let data = info.try_borrow_data()?;
    require!(
        !token_mint::may_call_transfer_hook(info.owner, &data),
        GateError::SubscriptionTransferHook
    );
    let decimals = token_mint::decimals(&data).ok_or(GateError::MintInvalid)?;
    require!(
        decimals <= token_mint::MAX_DECIMALS,
        GateError::MintDecimalsTooLarge
    );
    Ok(decimals)
}
