//! The parties of a payment as the gate judges them (the registry's AgentAccount and the live
//! owner of the MPL Core asset), the token accounts and the mint: checks shared by the strict
//! gate and the gated channel open.

use crate::errors::GateError;
use anchor_lang::prelude::*;
use trust_gate_program_common::external::live_agent::{self, LiveAgent, Problem};
use trust_gate_program_common::token_account;
use trust_gate_program_common::token_mint::{self, MintProblem};

/// An agent as the gate judges it: the registry's AgentAccount (its agent wallet) and the
/// live owner of its MPL Core asset. The AgentAccount's own `owner` is a cache that a direct
/// MPL Core transfer leaves stale.
pub(crate) fn agent(account: &AccountInfo, asset: &AccountInfo) -> Result<LiveAgent> {
    live_agent::read(
        &account.try_borrow_data()?,
        asset.key,
        asset.owner,
        &asset.try_borrow_data()?,
    )
    .map_err(|p| {
        error!(match p {
            Problem::AgentAccount => GateError::AgentAccountInvalid,
            Problem::Asset => GateError::AgentAssetInvalid,
        })
    })
}

/// The payer and payee agents, the signer acting for the payer (`PayerSignerMismatch`).
pub(crate) fn signing_parties(
    payer_agent: &AccountInfo,
    payer_asset: &AccountInfo,
    payee_agent: &AccountInfo,
    payee_asset: &AccountInfo,
    signer: &Pubkey,
) -> Result<(LiveAgent, LiveAgent)> {
    let payer = agent(payer_agent, payer_asset)?;
    require!(payer.may_sign(signer), GateError::PayerSignerMismatch);
    Ok((payer, agent(payee_agent, payee_asset)?))
}

/// The payee may not be the payer under another agent: a key of the payer (its live owner or
/// its agent wallet, the signer being one of them) that acts for the payee would rate its own
/// agent through the gate (`SelfDealing`).
pub(crate) fn check_not_self_dealing(payer: &LiveAgent, payee: &LiveAgent) -> Result<()> {
    require!(
        !payer.keys().iter().flatten().any(|k| payee.may_sign(k)),
        GateError::SelfDealing
    );
    Ok(())
}

/// Whether `info` is an initialized SPL Token / Token-2022 account of `mint` whose authority
/// is `owner`.
pub(crate) fn token_account_of(info: &AccountInfo, mint: &Pubkey, owner: &Pubkey) -> Result<bool> {
    let data = info.try_borrow_data()?;
    Ok(
        token_account::read(info.owner, &data)
            .is_some_and(|v| v.mint == *mint && v.owner == *owner),
    )
}

/// A held share's mint (checked by [`check_mint`] first) must let the gate pay the share out
/// later: no transfer hook, now or settable (a payout the gate signs carries no hook
/// accounts: `HoldbackTransferHook`), not Pausable and not making new accounts frozen (a
/// payout may go to a token account created for it: `HoldbackMintLockable`). A freeze
/// authority can still freeze the escrow, as it can any account of the mint.
pub(crate) fn check_holdable_mint(info: &AccountInfo) -> Result<()> {
    let data = info.try_borrow_data()?;
    require!(
        !token_mint::may_call_transfer_hook(info.owner, &data),
        GateError::HoldbackTransferHook
    );
    require!(
        token_mint::vault_lock(info.owner, &data).is_none(),
        GateError::HoldbackMintLockable
    );
    Ok(())
}

/// The mint must deliver exactly `amount` and never take it back. Checked at every
/// settlement, not only when the policy was created: a Token-2022 mint with a close
/// authority can be closed and re-created with other extensions at the same address.
pub(crate) fn check_mint(info: &AccountInfo) -> Result<()> {
    let data = info.try_borrow_data()?;
    token_mint::check(info.owner, &data).map_err(|p| {
        error!(match p {
            MintProblem::NotAMint => GateError::MintInvalid,
            MintProblem::TransferFee => GateError::MintTransferFee,
            MintProblem::PermanentDelegate => GateError::MintPermanentDelegate,
        })
    })
}
