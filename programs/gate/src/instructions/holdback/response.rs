//! The outcome of a held share's dispute, attached to the dispute's feedback in the registry
//! with its permissionless `append_response`. The registry's engine revokes feedback by client
//! in a ring buffer, and every feedback of the gate to a payee has one client (the
//! facilitator's GateAuthority), so a revocation could not target the dispute; a response
//! names the feedback by its index and seal, and changes no score (docs/holdback.md).

use crate::errors::GateError;
use crate::holdback::{authority, HeldShare, HoldState};
use crate::state::{FeedbackLog, GateAuthority, DISPUTE_SCORE, DISPUTE_TAG};
use anchor_lang::prelude::*;
use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
use trust_gate_program_common::cpi;
use trust_gate_program_common::external::instructions::{append_response_data, AppendResponseArgs};
use trust_gate_program_common::external::{agent_account, ids};

/// The payee's registry accounts a dispute's outcome needs (the optional accounts of
/// [`super::payout::HeldPayout`]).
pub struct ResponseAccounts<'a, 'info> {
    pub agent_account: Option<&'a AccountInfo<'info>>,
    pub payee_asset: Option<&'a AccountInfo<'info>>,
    /// The facilitator's GateAuthority: the dispute feedback's client.
    pub gate_authority: Option<&'a AccountInfo<'info>>,
    pub registry_program: Option<&'a AccountInfo<'info>>,
}

impl<'a, 'info> ResponseAccounts<'a, 'info> {
    /// The payee's AgentAccount and asset, checked to be the log's payee's.
    pub fn payee(
        &self,
        log: &FeedbackLog,
    ) -> Result<(&'a AccountInfo<'info>, &'a AccountInfo<'info>)> {
        let (Some(account), Some(asset)) = (self.agent_account, self.payee_asset) else {
            return err!(GateError::ResponseAccountsMissing);
        };
        require_keys_eq!(asset.key(), log.payee_asset, GateError::AssetMismatch);
        require!(
            account.owner == &ids::AGENT_REGISTRY && agent_account::info_is_agent_account(account),
            GateError::AgentAccountInvalid
        );
        require!(
            agent_account::info_names(account, asset.key),
            ErrorCode::ConstraintSeeds
        );
        Ok((account, asset))
    }

    /// Attaches `outcome` to the dispute's feedback: `append_response` signed by the gate's
    /// holdback authority (`responder`), for the facilitator's GateAuthority as the
    /// feedback's client.
    pub fn answer(
        &self,
        log: &FeedbackLog,
        share: &HeldShare,
        outcome: HoldState,
        responder: &AccountInfo<'info>,
    ) -> Result<()> {
        let (account, asset) = self.payee(log)?;
        let (Some(client), Some(registry)) = (self.gate_authority, self.registry_program) else {
            return err!(GateError::ResponseAccountsMissing);
        };
        require_keys_eq!(
            registry.key(),
            ids::AGENT_REGISTRY,
            GateError::ResponseAccountsMissing
        );
        GateAuthority::read_for(client, &log.facilitator)?;
        let args = AppendResponseArgs {
            client_address: client.key(),
            feedback_index: share.dispute_feedback_index,
            response_uri: response_uri(outcome),
            response_hash: response_hash(&log.payment_id_hash, outcome),
            seal_hash: share.dispute_seal_hash,
        };
        let ix = Instruction {
            program_id: ids::AGENT_REGISTRY,
            accounts: vec![
                AccountMeta::new_readonly(authority::ADDRESS, true),
                AccountMeta::new(account.key(), false),
                AccountMeta::new_readonly(asset.key(), false),
            ],
            data: append_response_data(&args),
        };
        let infos = [responder, account, asset, registry];
        cpi::invoke_signed(&ix, &infos, &[&[authority::SEED, &[authority::BUMP]]])?;
        Ok(())
    }
}

/// The outcome as the response's URI: `holdback:<outcome>` (upheld, rejected, refunded or
/// lapsed).
pub fn response_uri(outcome: HoldState) -> String {
    format!("holdback:{}", outcome.name())
}

/// The response's hash: sha256 of the payment's id hash and the outcome's name, so that a
/// response names the payment it decides.
pub fn response_hash(payment_id_hash: &[u8; 32], outcome: HoldState) -> [u8; 32] {
    solana_sha256_hasher::hashv(&[b"holdback", payment_id_hash, outcome.name().as_bytes()])
        .to_bytes()
}

/// The seal hash the registry computes for the dispute's feedback (its "8004_SEAL_V1"
/// digest: value 0, decimals 0, score 0, no file hash, tags "dispute" and "", no endpoint,
/// the dispute's URI), which a response names its feedback by.
pub fn dispute_seal_hash(feedback_uri: &str) -> [u8; 32] {
    let len = |s: &str| (s.len() as u16).to_le_bytes();
    let (t1, t2, endpoint, uri) = (DISPUTE_TAG, "", "", feedback_uri);
    solana_keccak_hasher::hashv(&[
        b"8004_SEAL_V1____",
        &0i128.to_le_bytes(),
        &[0],
        &[1, DISPUTE_SCORE],
        &[0],
        &len(t1),
        t1.as_bytes(),
        &len(t2),
        t2.as_bytes(),
        &len(endpoint),
        endpoint.as_bytes(),
        &len(uri),
        uri.as_bytes(),
    ])
    .to_bytes()
}
