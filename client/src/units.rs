//! The compute-unit limit a settlement asks for.
//!
//! The block scheduler reserves the limit a transaction requests before running it (200 000
//! per instruction without a ComputeBudget limit, so 600 000 for a settlement), and all the
//! settlements of one payee share 12 000 000 units a block: a limit just above what the
//! settlement uses is what lets a payee be paid often. Below its use a transaction fails.
//!
//! What a settlement uses, measured on the SBF builds (`bench-cu`, docs/compute-units.md):
//! - our programs and the token transfer, per funding, when no PDA search tries a second bump;
//! - each search for an account that may not exist yet (the payer's and the payee's engine
//!   stats, the payee's acceptance policy, the payment's feedback log) tries bumps from 255
//!   down, [`PDA_TRY`] each: the keys fix the bumps, so the client counts them exactly
//!   (counting all four, whether the account exists or not, can only overestimate);
//! - the registry's `give_feedback` and, for a payee with engine stats, the engine's
//!   `update_stats`: their part when the registry's own search for the payee's stats
//!   (`find_program_address`, the runtime's 1 500 units a bump) succeeds at bump 255, and
//!   [`REGISTRY_PDA_TRY`] for each bump past it, which the same keys fix.
//!
//! A Token-2022 mint with a transfer hook runs the hook's program too, which nothing here
//! can measure: the paying clients request no limit for such a mint (the scheduler's default)
//! unless their caller passes one.
//!
//! The registry's and engine's part was measured on builds of theirs that are not the deployed
//! ones (those are built for size, which usually costs more units), so a client with an RPC
//! sizes its limit by simulating the settlement itself ([`measure`], then [`limit_for_use`]),
//! as wallets estimate units; [`Shape::unit_limit`], for a client without one, keeps a margin
//! in proportion to that external part ([`EXTERNAL_HEADROOM_PERCENT`]).

use crate::error::ClientError;
use crate::ids::ProgramIds;
use crate::settle::{Funding, Settlement, TokenProgram};
use anchor_lang::prelude::Pubkey;
use gate::state::seeds as gate_seeds;
use policy_vault::state::seeds as pv_seeds;
use solana_rpc_client::nonblocking::rpc_client::RpcClient;
use solana_rpc_client_api::config::RpcSimulateTransactionConfig;
use solana_sdk::instruction::Instruction;
use solana_sdk::message::AddressLookupTableAccount;
use trust_gate_program_common::external::seeds as ext_seeds;

/// One more bump tried by an on-chain PDA search (`trust_gate_program_common::pda`).
pub const PDA_TRY: u32 = 340;
/// Our programs' part of a settlement when every search succeeds at bump 255, the largest
/// of the shapes measured (attestations, acceptance policy, rated parties, a policy with
/// every limit and a 256-entry list account: measured 24 893 wallet-funded, 28 426
/// vault-funded, `bench-cu 20`'s least), rounded up.
pub const OURS_WALLET: u32 = 25_400;
pub const OURS_VAULT: u32 = 28_900;
/// A vault's release: the token program's own TransferChecked inside the settlement.
pub const RELEASE: u32 = 6_200;
/// What holding a share back adds to our part (the second transfer's checks, the terms in
/// the decision, the accounts emit_feedback reads, the longer log): measured 3 589 over the
/// costliest unheld shape (`bench-cu 20`: 32 001 against 28 412), rounded up. The held
/// share's own TransferChecked is counted as the payment's.
pub const HELD: u32 = 4_000;
/// The payment's TransferChecked, by token program: SPL Token measured 6 174, Token-2022
/// 1 961 for a mint without extensions (the headroom is for the extensions a policy allows;
/// a transfer hook's program is the caller's to add).
pub const TRANSFER_SPL_TOKEN: u32 = 6_200;
pub const TRANSFER_TOKEN_2022: u32 = 3_000;
/// The registry's `give_feedback` inside emit_feedback when its search for the payee's stats
/// succeeds at bump 255: for a payee without engine stats (measured 23 300), and with them,
/// the engine's `update_stats` included (53 600).
pub const REGISTRY_UNRATED: u32 = 24_000;
pub const REGISTRY_RATED: u32 = 54_500;
/// One more bump tried by the registry's own search for the payee's stats.
pub const REGISTRY_PDA_TRY: u32 = 1_550;
/// Headroom for what varies with the data rather than the shape: the feedback strings'
/// lengths, a ComputeBudget prefix, the engine's branches.
pub const MARGIN: u32 = 4_000;
/// Headroom on the registry's and engine's measured part, in percent, for builds of theirs
/// that cost more than the ones measured.
pub const EXTERNAL_HEADROOM_PERCENT: u32 = 15;
/// The most a transaction may ask for: what a settlement is simulated with.
pub const MAX_UNIT_LIMIT: u32 = 1_400_000;
/// Headroom on a simulated use: a tenth, at least [`MIN_SIMULATED_HEADROOM`], for what the
/// simulation and the execution may see differently (another slot: the engine's branches).
pub const MIN_SIMULATED_HEADROOM: u64 = 2_000;

/// The facilitator's close of a channel (an `upto` claim, a session's close, the crank's):
/// [the payee's voucher, `settle_and_seal` or `seal`, `distribute`]. Measured on the SBF
/// builds: plain, 22 400 units when no search tries a second bump, 32 900 the most seen;
/// gated, with `gate_channel_close` and the real registry's and engine's feedback for a rated
/// payee, 91 800 to 95 300 (the services suite's `a_channel_close_fits_its_unit_limit`
/// prints them). The payment-channels program's and the registry's address searches try
/// bumps at 1 500 units each, which the channel's keys fix: each limit leaves room for 25
/// more tries than the fewest.
pub const CHANNEL_CLOSE: u32 = 60_000;
pub const GATED_CHANNEL_CLOSE: u32 = 150_000;

/// A gated pull (`gate_pull`, docs/subscriptions.md): the whole transaction measured 39 000 to
/// 48 000 on the SBF builds with the registry's stand-in (`bench-cu`'s largest pull: every
/// rule, both attestations, an approval), the Subscriptions program's address searches making
/// the spread; the real registry and engine add about 55 000 for a rated payee. The limit
/// leaves room for 30 more bump tries than that.
pub const PULL: u32 = 150_000;

/// [`CHANNEL_CLOSE`] or [`GATED_CHANNEL_CLOSE`].
pub fn channel_close(gated: bool) -> u32 {
    if gated {
        GATED_CHANNEL_CLOSE
    } else {
        CHANNEL_CLOSE
    }
}

/// What a settlement's compute units depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub funding: Funding,
    pub token_program: TokenProgram,
    /// The payee has engine stats, so the registry's `give_feedback` calls the engine.
    pub payee_rated: bool,
    /// A share is held back: a second TransferChecked, to the payee's escrow.
    pub held: bool,
    /// The keys that fix the PDA searches' bumps.
    pub payer_asset: Pubkey,
    pub payee_asset: Pubkey,
    pub facilitator: Pubkey,
    pub payment_id_hash: [u8; 32],
}

impl Shape {
    /// The shape of settlement `s` to a payee with engine stats or without.
    pub fn of(s: &Settlement, payee_rated: bool) -> Shape {
        Shape {
            funding: s.funding,
            token_program: s.token_program,
            payee_rated,
            held: s.holdback.is_some_and(|h| h.held != 0),
            payer_asset: s.payer_asset,
            payee_asset: s.payee_asset,
            facilitator: s.facilitator,
            payment_id_hash: s.feedback.payment_id_hash,
        }
    }

    /// The bumps past the first that the settlement's PDA searches try, in this order: the
    /// payer's engine stats, the payee's (which the registry searches for too), the payee's
    /// acceptance policy, the feedback log.
    pub fn extra_bump_tries(&self, ids: &ProgramIds) -> [u32; 4] {
        let searches: [(&[&[u8]], &Pubkey); 4] = [
            (
                &[ext_seeds::ATOM_STATS, self.payer_asset.as_ref()],
                &ids.reputation_engine,
            ),
            (
                &[ext_seeds::ATOM_STATS, self.payee_asset.as_ref()],
                &ids.reputation_engine,
            ),
            (
                &[pv_seeds::ACCEPTANCE, self.payee_asset.as_ref()],
                &ids.policy_vault,
            ),
            (
                &[
                    gate_seeds::FEEDBACK_LOG,
                    self.facilitator.as_ref(),
                    &self.payment_id_hash,
                ],
                &ids.gate,
            ),
        ];
        searches.map(|(seeds, program)| {
            u32::from(u8::MAX - Pubkey::find_program_address(seeds, program).1)
        })
    }

    /// The compute-unit limit for a settlement of this shape: what it uses at most, from the
    /// measurements above.
    pub fn unit_limit(&self, ids: &ProgramIds) -> u32 {
        let ours = match self.funding {
            Funding::Wallet => OURS_WALLET,
            Funding::Vault => OURS_VAULT + RELEASE,
        };
        let transfer = match self.token_program {
            TokenProgram::SplToken => TRANSFER_SPL_TOKEN,
            TokenProgram::Token2022 => TRANSFER_TOKEN_2022,
        };
        let registry = if self.payee_rated {
            REGISTRY_RATED
        } else {
            REGISTRY_UNRATED
        };
        let registry = registry + registry * EXTERNAL_HEADROOM_PERCENT / 100;
        let (ours, transfer) = if self.held {
            (ours + HELD, transfer * 2)
        } else {
            (ours, transfer)
        };
        let tries = self.extra_bump_tries(ids);
        ours + transfer
            + registry
            + PDA_TRY * tries.iter().sum::<u32>()
            + REGISTRY_PDA_TRY * tries[1]
            + MARGIN
    }
}

/// The limit to ask for a settlement that a simulation saw use `used` units: a tenth more, at
/// least [`MIN_SIMULATED_HEADROOM`], rounded up to a thousand, at most [`MAX_UNIT_LIMIT`].
pub fn limit_for_use(used: u64) -> u32 {
    let headroom = (used / 10).max(MIN_SIMULATED_HEADROOM);
    let limit = used
        .saturating_add(headroom)
        .div_ceil(1_000)
        .saturating_mul(1_000);
    u32::try_from(limit.min(u64::from(MAX_UNIT_LIMIT))).unwrap_or(MAX_UNIT_LIMIT)
}

/// The compute units the settlement `ixs` (composed with a unit limit of [`MAX_UNIT_LIMIT`],
/// or none) uses, by one simulation paid by `fee_payer` with its lookup `tables`: unsigned,
/// on the cluster's latest blockhash, nothing charged. An error when the simulation fails
/// (the settlement would fail too) or reports no units.
pub async fn measure(
    rpc: &RpcClient,
    fee_payer: &Pubkey,
    ixs: &[Instruction],
    tables: &[AddressLookupTableAccount],
) -> Result<u64, ClientError> {
    let blockhash = solana_sdk::hash::Hash::default();
    let tx = crate::settle::transaction(fee_payer, ixs, tables, blockhash, &[])?;
    let sim = rpc
        .simulate_transaction_with_config(
            &tx,
            RpcSimulateTransactionConfig {
                sig_verify: false,
                replace_recent_blockhash: true,
                ..RpcSimulateTransactionConfig::default()
            },
        )
        .await?
        .value;
    if let Some(err) = sim.err {
        let logs = sim.logs.unwrap_or_default();
        let err: solana_sdk::transaction::TransactionError = err.into();
        return Err(ClientError::SimulationFailed {
            named: crate::errors::explain(&err, &logs),
            err: Some(err),
            logs: crate::errors::summarize_logs(&logs),
        });
    }
    sim.units_consumed.ok_or_else(|| ClientError::Decode {
        what: "simulateTransaction".into(),
        reason: "no unitsConsumed in the answer".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_simulated_use_gets_a_tenth_at_least_two_thousand_rounded_up() {
        assert_eq!(limit_for_use(0), 2_000);
        assert_eq!(limit_for_use(15_000), 17_000);
        assert_eq!(limit_for_use(35_425), 39_000);
        assert_eq!(limit_for_use(90_282), 100_000);
        assert_eq!(limit_for_use(2_000_000), MAX_UNIT_LIMIT);
    }
}
