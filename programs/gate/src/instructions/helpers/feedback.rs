//! The registry `give_feedback` CPI shared by emit_feedback and dispute_payment.

use crate::errors::GateError;
use crate::state::{seeds, GateAuthority};
use anchor_lang::prelude::*;
use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
use trust_gate_program_common::external::instructions::{
    give_feedback_data, GiveFeedbackArgs, MAX_TAG_LEN, MAX_URI_LEN, MAX_VALUE_DECIMALS,
};
use trust_gate_program_common::external::{addresses, agent_account, atom_stats, ids};
use trust_gate_program_common::{cpi, pda};

/// The payee's registry and engine accounts, all derived from `asset`; the handler ties
/// `asset` to the `payee_asset` argument (a nested Accounts struct cannot read instruction
/// arguments reliably, so the link is checked in [`FeedbackTarget::give_feedback`]).
#[derive(Accounts)]
pub struct FeedbackTarget<'info> {
    /// The payee's AgentAccount (owner enforced, and that it names the asset, which stands
    /// for its seeds: see `agent_account::names`); the registry updates it.
    /// CHECK: verified as described above.
    #[account(
        mut,
        owner = ids::AGENT_REGISTRY @ GateError::AgentAccountInvalid,
        constraint = agent_account::info_is_agent_account(&agent_account) @ GateError::AgentAccountInvalid,
        constraint = agent_account::info_names(&agent_account, asset.key) @ ErrorCode::ConstraintSeeds,
    )]
    pub agent_account: UncheckedAccount<'info>,
    /// CHECK: the payee's asset (must equal the `payee_asset` argument, checked in the handler).
    pub asset: UncheckedAccount<'info>,
    /// CHECK: the agent's collection (compared with the AgentAccount in the handler).
    pub collection: UncheckedAccount<'info>,
    /// CHECK: the engine's AtomConfig PDA (address enforced).
    #[account(address = addresses::ATOM_CONFIG)]
    pub atom_config: UncheckedAccount<'info>,
    /// The payee's AtomStats PDA, which may not exist yet: `give_feedback` checks the address
    /// (see [`PayeeStats`]).
    /// CHECK: verified as described above.
    #[account(mut)]
    pub atom_stats: UncheckedAccount<'info>,
    /// CHECK: the registry's CPI authority PDA (address enforced).
    #[account(address = addresses::ATOM_CPI_AUTHORITY)]
    pub registry_cpi_authority: UncheckedAccount<'info>,
    /// CHECK: the agent registry program (address enforced).
    #[account(address = ids::AGENT_REGISTRY)]
    pub registry_program: UncheckedAccount<'info>,
    /// CHECK: the reputation engine program (address enforced).
    #[account(address = ids::REPUTATION_ENGINE)]
    pub engine_program: UncheckedAccount<'info>,
}

/// The bump of the gate's account `info` that a handler is about to create at the
/// canonical PDA of `seeds` (ConstraintSeeds, as Anchor's `seeds` constraint, for any
/// other address).
pub fn canonical_bump(info: &AccountInfo, seeds: &[&[u8]]) -> Result<u8> {
    match pda::find(seeds, &crate::ID) {
        Some((address, bump)) if address == *info.key => Ok(bump),
        _ => Err(error!(ErrorCode::ConstraintSeeds)),
    }
}

/// Where the payee's AtomStats account must be.
pub enum PayeeStats {
    /// The account the settlement's strict gate was given in this transaction: policy_vault
    /// checked it, so it is not searched for a second time.
    Settled(Pubkey),
    /// No settlement in this transaction: the account that names the asset, else the
    /// canonical PDA (`atom_stats::is_account_of`).
    Derived,
}

/// The feedback a payee gets from an instruction that states the value itself (a channel's
/// close: its settled amount; a pull: its amount), in the mint's decimals.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct FeedbackDetails {
    /// The feedback's score, 0..=100.
    pub score: u8,
    /// The registry's first tag, at most 32 bytes.
    pub tag1: String,
    /// The registry's second tag, at most 32 bytes.
    pub tag2: String,
    /// The paid endpoint, at most 250 bytes.
    pub endpoint: String,
    /// A URI of the feedback's details, at most 250 bytes.
    pub feedback_uri: String,
}

/// Validates the feedback strings and numbers against the registry's bounds, naming the field.
pub fn validate_feedback_fields(
    score: u8,
    value_decimals: u8,
    tag1: &str,
    tag2: &str,
    endpoint: &str,
    feedback_uri: &str,
) -> Result<()> {
    require!(score <= 100, GateError::ScoreOutOfRange);
    require!(
        value_decimals <= MAX_VALUE_DECIMALS,
        GateError::ValueDecimalsOutOfRange
    );
    require!(tag1.len() <= MAX_TAG_LEN, GateError::Tag1TooLong);
    require!(tag2.len() <= MAX_TAG_LEN, GateError::Tag2TooLong);
    require!(endpoint.len() <= MAX_URI_LEN, GateError::EndpointTooLong);
    require!(
        feedback_uri.len() <= MAX_URI_LEN,
        GateError::FeedbackUriTooLong
    );
    Ok(())
}

impl<'info> FeedbackTarget<'info> {
    /// Calls the registry's give_feedback with the GateAuthority PDA as the signing client,
    /// always with the four engine accounts: the registry declares them as Anchor optional
    /// accounts and is built without `allow-missing-optionals`, so a shorter list fails
    /// (3005, AccountNotEnoughKeys) even for a payee it would not rate. Whether the engine is
    /// called is the registry's decision (reputation enabled, stats owned by the engine and
    /// holding data, a score), made from these same accounts.
    /// The asset is checked first, so that another agent's accounts are named as such, then
    /// the stats account as `stats` says.
    pub fn give_feedback(
        &self,
        payee_asset: &Pubkey,
        stats: PayeeStats,
        gate_authority: (&AccountInfo<'info>, &GateAuthority),
        system_program: &AccountInfo<'info>,
        args: &GiveFeedbackArgs,
    ) -> Result<()> {
        require_keys_eq!(self.asset.key(), *payee_asset, GateError::AssetMismatch);
        let stats_ok = match stats {
            PayeeStats::Settled(key) => self.atom_stats.key() == key,
            PayeeStats::Derived => atom_stats::info_is_account_of(&self.atom_stats, payee_asset),
        };
        require!(stats_ok, ErrorCode::ConstraintSeeds);
        let view = {
            let data = self.agent_account.try_borrow_data()?;
            agent_account::read(&data).ok_or(GateError::AgentAccountInvalid)?
        };
        require_keys_eq!(view.asset, self.asset.key(), GateError::AgentAccountInvalid);
        require_keys_eq!(
            view.collection,
            self.collection.key(),
            GateError::CollectionMismatch
        );

        let (client, authority) = gate_authority;
        let metas = vec![
            AccountMeta::new(client.key(), true),
            AccountMeta::new(self.agent_account.key(), false),
            AccountMeta::new_readonly(self.asset.key(), false),
            AccountMeta::new_readonly(self.collection.key(), false),
            AccountMeta::new_readonly(system_program.key(), false),
            AccountMeta::new_readonly(self.atom_config.key(), false),
            AccountMeta::new(self.atom_stats.key(), false),
            AccountMeta::new_readonly(self.engine_program.key(), false),
            AccountMeta::new_readonly(self.registry_cpi_authority.key(), false),
        ];
        let infos: [&AccountInfo<'info>; 10] = [
            client,
            &self.agent_account,
            &self.asset,
            &self.collection,
            system_program,
            &self.atom_config,
            &self.atom_stats,
            &self.engine_program,
            &self.registry_cpi_authority,
            &self.registry_program,
        ];
        let ix = Instruction {
            program_id: ids::AGENT_REGISTRY,
            accounts: metas,
            data: give_feedback_data(args),
        };
        let bump = [authority.bump];
        let signer: &[&[u8]] = &[seeds::GATE_AUTHORITY, authority.facilitator.as_ref(), &bump];
        // Without `invoke_signed`'s scan of every meta against every account info, the infos
        // by reference: nothing here holds an account's data borrowed across the call.
        cpi::invoke_signed(&ix, &infos, &[signer])?;
        Ok(())
    }
}
