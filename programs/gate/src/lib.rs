//! gate: decides agent-to-agent payments (through policy_vault) and guards their atomic
//! settlement: [gate_payment_strict, TransferChecked, emit_feedback] in one transaction.
//! See [`settlement`] for the rule and why it exists.

#![deny(arithmetic_overflow)]
// Anchor's macros expand to cfgs and patterns this lint set does not know about.
#![allow(unexpected_cfgs)]

use anchor_lang::prelude::*;

pub mod channel;
pub mod errors;
pub mod events;
pub mod holdback;
pub mod instructions;
pub mod settlement;
pub mod state;
pub mod subscription;

use instructions::*;
/// The decision `gate_payment` returns (35-byte wire form: `Decision::from_wire`), for
/// programs that call it.
pub use policy_vault::engine::{Decision, DenyReason};
use settlement::PaymentArgs;
use trust_gate_program_common::subscriptions::RecurringTerms;

declare_id!("616ePQS44tJKJiCNZt3ega2qgbMeBtYupPjfcU1Z4Z9g");

trust_gate_program_common::security_txt!("gate");

#[program]
pub mod gate {
    use super::*;

    // A settlement's two instructions come first: Anchor dispatches by comparing the
    // instruction's discriminator with each instruction's in this order.

    /// The committing gate of a settlement, a top-level instruction only: enforces the
    /// settlement layout, commits the counters on Allow, fails with the reason (code 6000 +
    /// reason for reasons 1..=15, 6100 + reason from 16) on Deny, with `ValidationRequired`
    /// on RequireValidation and `ApprovalRequired` on RequireApproval (a payment above the
    /// payer policy's approval threshold passes with its approval, and that approval's rent
    /// payer, first among the remaining accounts: it is used up). The parties and the mint are its accounts `payer_asset`, `payee_asset` and `mint_account` (a
    /// settlement must fit in one packet; repeating them as arguments would cost 96 bytes).
    /// `deadline`: unix seconds, the x402 challenge's expiry; refused once past or when
    /// further ahead than `settlement::MAX_DEADLINE_AHEAD_SECS`. `holdback_tier`: under a
    /// policy with a holdback schedule, the payee tier the terms were quoted for (a share then
    /// goes to the gate's escrow by a second transfer: docs/holdback.md).
    pub fn gate_payment_strict<'info>(
        ctx: Context<'info, GatePaymentStrict<'info>>,
        amount: u64,
        policy_id: u32,
        deadline: i64,
        holdback_tier: Option<u8>,
    ) -> Result<()> {
        instructions::gate_payment_strict(ctx, amount, policy_id, deadline, holdback_tier)
    }

    /// Records a payment's feedback in the registry (GateAuthority PDA as the client) and its
    /// receipt (FeedbackLog); settled only inside an atomic settlement.
    /// A held settlement (and only a held one) passes [the payer's policy, the escrow, the
    /// payee's token account paid] as remaining accounts.
    pub fn emit_feedback<'info>(
        ctx: Context<'info, EmitFeedback<'info>>,
        args: EmitFeedbackArgs,
    ) -> Result<()> {
        instructions::emit_feedback(ctx, args)
    }

    /// The gated open of a payment channel (Solana's payment-channels program), a top-level
    /// instruction right before the program's `open`: checks that the open deposits `deposit`
    /// from the payer agent's signer, pays 100 % to the payee agent's recipient and is held by
    /// the facilitator; runs and counts the payer's policy and the payee's acceptance policy on
    /// the deposit (failing with the reason as the strict gate does); records the channel
    /// (`ChannelRecord`). Vault-funded policies are refused (`ChannelVaultFunded`).
    pub fn gate_channel_open<'info>(
        ctx: Context<'info, GateChannelOpen<'info>>,
        deposit: u64,
        policy_id: u32,
    ) -> Result<()> {
        instructions::gate_channel_open(ctx, deposit, policy_id)
    }

    /// Closes a channel the gate let open once it is sealed: gives back to the payer's policy
    /// what it refunds of the counted deposit (in the windows that still count it); when it
    /// settled anything, one feedback of value = settled and its receipt (disputable as a
    /// payment's, payment id `channel::payment_id_hash`); closes the record to the
    /// facilitator, which signs.
    pub fn gate_channel_close(ctx: Context<GateChannelClose>, args: FeedbackDetails) -> Result<()> {
        instructions::gate_channel_close(ctx, args)
    }

    /// Closes the record of a channel the payment-channels program already deleted (its
    /// settled amount gone with it): no feedback, nothing given back. Anyone may send it.
    pub fn close_channel_record(ctx: Context<CloseChannelRecord>) -> Result<()> {
        instructions::close_channel_record(ctx)
    }

    /// Read-only decision (what /verify simulates): never fails on a Deny. Return data: the
    /// 35-byte decision; also emitted as a `GateDecision` event. Every account is read-only,
    /// so other programs can ask for a decision by CPI. Remaining accounts: the payment's
    /// approval (policy_vault's PaymentApproval), when it has one.
    pub fn gate_payment<'info>(
        ctx: Context<'info, GatePayment<'info>>,
        args: PaymentArgs,
    ) -> Result<()> {
        instructions::gate_payment(ctx, args)
    }

    /// Disputes a settled payment of this facilitator (once, by its payer's wallet, within
    /// the dispute window): a DisputeRecord and a low-score "dispute" feedback.
    pub fn dispute_payment(ctx: Context<DisputePayment>, args: DisputePaymentArgs) -> Result<()> {
        instructions::dispute_payment(ctx, args)
    }

    /// Closes a payment's FeedbackLog, and its DisputeRecord with it when it was disputed,
    /// once the payment can be neither disputed nor settled again: every lamport back to
    /// whoever paid the rent. Anyone may send it; several fit one transaction.
    pub fn close_payment_records(ctx: Context<ClosePaymentRecords>) -> Result<()> {
        instructions::close_payment_records(ctx)
    }

    /// Opens the holdback escrow of a payee and mint: a token account at
    /// `["holdback_escrow", payee_asset, mint]` whose authority is the gate's holdback
    /// authority. Anyone may; the payer pays its rent.
    pub fn open_holdback_escrow(
        ctx: Context<OpenHoldbackEscrow>,
        payee_asset: Pubkey,
        mint: Pubkey,
    ) -> Result<()> {
        instructions::open_holdback_escrow(ctx, payee_asset, mint)
    }

    /// Releases a held share to a token account of the payee's recipient at settlement once
    /// its hold (or, disputed, its arbitration period) is over. Anyone may send it.
    pub fn release_holdback(ctx: Context<ReleaseHoldback>) -> Result<()> {
        instructions::release_holdback(ctx)
    }

    /// The payee gives a held share back to the payer's wallet, disputed or not.
    pub fn refund_holdback(ctx: Context<RefundHoldback>) -> Result<()> {
        instructions::refund_holdback(ctx)
    }

    /// The policy's arbiter decides a disputed held share within the arbitration period:
    /// `uphold` returns it to the payer, otherwise it goes to the payee. Remaining accounts:
    /// an arbiter set's signing members.
    pub fn arbitrate_holdback<'info>(
        ctx: Context<'info, ArbitrateHoldback<'info>>,
        uphold: bool,
    ) -> Result<()> {
        instructions::arbitrate_holdback(ctx, uphold)
    }

    /// Creates a k-of-n arbiter set, which policies and acceptance policies name by address.
    pub fn create_arbiter_set(
        ctx: Context<CreateArbiterSet>,
        threshold: u8,
        members: Vec<Pubkey>,
    ) -> Result<()> {
        instructions::create_arbiter_set(ctx, threshold, members)
    }

    /// Registers a reputation-enabled agent in the external registry and initializes its
    /// engine stats; the new asset keypair and the owner sign.
    pub fn register_agent_via_cpi(
        ctx: Context<RegisterAgentViaCpi>,
        metadata_uri: String,
    ) -> Result<()> {
        instructions::register_agent_via_cpi(ctx, metadata_uri)
    }

    /// Creates the facilitator's GateAuthority; the facilitator signs.
    pub fn init_authority(ctx: Context<InitAuthority>, facilitator: Pubkey) -> Result<()> {
        instructions::init_authority(ctx, facilitator)
    }

    /// Creates an agent's kill switch through policy_vault.
    pub fn init_killswitch(ctx: Context<InitKillSwitch>, asset: Pubkey) -> Result<()> {
        instructions::init_killswitch(ctx, asset)
    }

    /// Subscribes a payer agent to a payee through Solana's Subscriptions program: the
    /// delegator (the payer agent's live owner or agent wallet) gets its SubscriptionAuthority
    /// for the mint initialized or refreshed and a recurring delegation of `terms` to the
    /// gate's delegate of (payer, payee, facilitator), and the gate records the subscription
    /// with the policy its pulls are counted under. One instruction, so one transaction,
    /// whether the authority existed or not.
    pub fn subscribe(ctx: Context<Subscribe>, policy_id: u32, terms: RecurringTerms) -> Result<()> {
        instructions::subscribe(ctx, policy_id, terms)
    }

    /// One pull of a gated subscription, by its facilitator: the payer's policy decides and
    /// counts `amount` (failing with the reason as the strict gate does; above the approval
    /// threshold, the payment's approval and its rent payer first among the remaining
    /// accounts), the gate signs `transfer_recurring` into the payee's recipient, the payee
    /// gets `feedback` of value = amount, and the pull's receipt is written.
    pub fn gate_pull<'info>(
        ctx: Context<'info, GatePull<'info>>,
        amount: u64,
        feedback: FeedbackDetails,
    ) -> Result<()> {
        instructions::gate_pull(ctx, amount, feedback)
    }

    /// Ends a gated subscription: revokes its delegation when it is still open and closes
    /// the record, both rents back to the delegator, which signs.
    pub fn unsubscribe(ctx: Context<Unsubscribe>) -> Result<()> {
        instructions::unsubscribe(ctx)
    }
}
