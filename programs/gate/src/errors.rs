use anchor_lang::prelude::*;

/// Gate errors. The offset makes the first fifteen codes line up with the deny reasons:
/// `code - 6000` is the reason code (6001 KillSwitchEngaged ... 6015 UnratedTreatmentDeny),
/// which is what `gate_payment_strict` fails with on a Deny. Append new variants at the end.
#[error_code(offset = 6001)]
pub enum GateError {
    #[msg("Deny 1: the payer's kill switch is engaged")]
    KillSwitchEngaged,
    #[msg("Deny 2: amount exceeds the per-transaction cap")]
    SpendingPerTxExceeded,
    #[msg("Deny 3: the daily cap would be exceeded")]
    SpendingDailyExceeded,
    #[msg("Deny 4: the weekly cap would be exceeded")]
    SpendingWeeklyExceeded,
    #[msg("Deny 5: the velocity window cap would be exceeded")]
    VelocityWindowExceeded,
    #[msg("Deny 6: counterparty tier below the minimum")]
    CounterpartyTierBelowMin,
    #[msg("Deny 7: counterparty risk above the maximum")]
    CounterpartyRiskAboveMax,
    #[msg("Deny 8: counterparty confidence below the minimum")]
    CounterpartyConfidenceBelow,
    #[msg("Deny 9: reputation account has the wrong owner")]
    AtomStatsWrongOwner,
    #[msg("Deny 10: reputation account layout or schema mismatch")]
    AtomStatsSchemaMismatch,
    #[msg("Deny 11: the attestation is for another subject or capability")]
    AttestationMissing,
    #[msg("Deny 12: the attestation has expired")]
    AttestationExpired,
    #[msg("Deny 13: the attestation was revoked")]
    AttestationRevoked,
    #[msg("Deny 14: the attestation's attestor is not accepted")]
    AttestationAttestorRejected,
    #[msg("Deny 15: unrated counterparty denied by the policy")]
    UnratedTreatmentDeny,
    // 6016..
    #[msg("RequireValidation: an attestation of the required capability is needed")]
    ValidationRequired,
    #[msg("policy_vault returned no decision")]
    DecisionMissing,
    #[msg("settlement must be [gate_payment_strict, TransferChecked, emit_feedback] at the end of the transaction, after at most two ComputeBudget instructions")]
    SettlementLayoutInvalid,
    #[msg("the instruction after gate_payment_strict is not a TransferChecked of SPL Token or Token-2022")]
    TransferMissing,
    #[msg("the transfer's amount differs from the gated amount")]
    TransferAmountMismatch,
    #[msg("the transfer's mint differs from the gated mint")]
    TransferMintMismatch,
    #[msg("the transfer's destination is not the destination_token account")]
    TransferDestinationMismatch,
    #[msg("the transfer's authority is not payer_signer")]
    TransferAuthorityMismatch,
    #[msg("the last instruction is not gate::emit_feedback")]
    FeedbackMissing,
    #[msg("emit_feedback is for another payee")]
    FeedbackPayeeMismatch,
    #[msg("destination_token is not a token account of the mint owned by the payee's recipient")]
    RecipientMismatch,
    #[msg("agent account is not the registry's AgentAccount for the asset")]
    AgentAccountInvalid,
    #[msg("payer_signer is neither the payer asset's owner nor the agent wallet that owner set")]
    PayerSignerMismatch,
    #[msg("facilitator must equal the signing facilitator")]
    FacilitatorMismatch,
    #[msg("score must be 0..=100")]
    ScoreOutOfRange,
    #[msg("value_decimals must be 0..=18")]
    ValueDecimalsOutOfRange,
    #[msg("tag1 is longer than 32 bytes")]
    Tag1TooLong,
    #[msg("tag2 is longer than 32 bytes")]
    Tag2TooLong,
    #[msg("endpoint is longer than 250 bytes")]
    EndpointTooLong,
    #[msg("feedback_uri is longer than 250 bytes")]
    FeedbackUriTooLong,
    #[msg("metadata_uri is longer than 250 bytes")]
    MetadataUriTooLong,
    #[msg("asset account does not match the asset argument")]
    AssetMismatch,
    #[msg("collection is not the agent's collection")]
    CollectionMismatch,
    #[msg("dispute_reason_hash must be non-zero")]
    DisputeReasonMissing,
    /// No longer raised: every log the gate writes now is of a settled payment.
    #[msg("only a payment settled atomically can be disputed")]
    PaymentNotSettled,
    #[msg("the feedback log is for another payee")]
    FeedbackLogPayeeMismatch,
    #[msg("counter overflow")]
    CounterOverflow,
    // 6043..
    #[msg("amount must be greater than 0")]
    AmountZero,
    #[msg("payer_asset and payee_asset are the same agent")]
    SelfPayment,
    #[msg("the transfer's source is its destination: no value would move")]
    SelfTransfer,
    #[msg("gate_payment_strict must be a top-level instruction of the settlement, not called by another program")]
    StrictGateNotTopLevel,
    #[msg("only ComputeBudget SetComputeUnitLimit and SetComputeUnitPrice, each at most once, may precede the payment")]
    ComputeBudgetPrefixInvalid,
    #[msg("mint is not an initialized mint of SPL Token or Token-2022")]
    MintInvalid,
    #[msg(
        "mint has the Token-2022 transfer-fee extension: the payee would receive less than amount"
    )]
    MintTransferFee,
    #[msg("mint has a Token-2022 permanent delegate: a settled payment could be taken back")]
    MintPermanentDelegate,
    #[msg("only the payer of a settled payment (its transfer authority) may dispute it")]
    NotPaymentPayer,
    #[msg("the dispute window of this payment has closed")]
    DisputeWindowClosed,
    // 6053..: vault-funded settlements
    #[msg("vault, payer_token and token_program come together (a vault-funded settlement) or not at all")]
    VaultAccountsIncomplete,
    #[msg("payer_token is not a token account of the mint owned by payer_signer")]
    PayerTokenMismatch,
    #[msg("the transfer's source is not payer_token, the account the vault's release credits")]
    TransferSourceMismatch,
    // 6056..: live owners
    #[msg("payer_asset or payee_asset is not an MPL Core asset")]
    AgentAssetInvalid,
    // 6057..: the third audit
    #[msg("an account after the transfer's fourth is marked as a signer")]
    TransferExtraSigner,
    #[msg("the payee's recipient is the payer's own key (its signer, owner or agent wallet): the payment would move nothing")]
    PaymentToPayer,
    #[msg("destination_token is its own authority, as a policy vault is: a vault is funded by deposit, not paid")]
    PaymentToVault,
    #[msg("emit_feedback must end a settlement for the same payee: feedback is given only for a payment settled through the gate")]
    FeedbackNotSettled,
    #[msg("the payer and the payee share a key (an owner or an agent wallet): an agent may not pay, and so rate, itself")]
    SelfDealing,
    // 6062..: the fourth audit
    #[msg("the feedback's value and value_decimals must be the settlement's transferred amount and the mint's decimals")]
    FeedbackValueMismatch,
    // 6063..: records that close
    #[msg(
        "the payment's deadline has passed: it can no longer settle (request a fresh challenge)"
    )]
    PaymentExpired,
    #[msg(
        "the payment's deadline is further ahead than the gate allows (MAX_DEADLINE_AHEAD_SECS)"
    )]
    DeadlineTooFar,
    #[msg("the payment can still be disputed or settled: its records close after its deadline and the dispute window")]
    PaymentRecordsOpen,
    #[msg("feedback_log is not a payment log of the gate")]
    PaymentLogInvalid,
    #[msg("the rent recipient is not the account that paid the rent (the log's facilitator, the dispute record's rent payer)")]
    RentRecipientMismatch,
    #[msg("dispute is not the payment's DisputeRecord address")]
    DisputeAddressMismatch,
    // 6068..: channels
    #[msg("a gated channel open is [at most two ComputeBudget, gate_channel_open, the payment-channels program's open, at most two Memo instructions without accounts]")]
    ChannelBundleInvalid,
    #[msg("the channel's open must deposit the evaluated amount of the policy's mint from the payer agent's signer, who signs it")]
    ChannelOpenMismatch,
    #[msg("the channel's distribution must pay 100 % (10000 bps) to the payee agent's recipient")]
    ChannelDistributionInvalid,
    #[msg("the facilitator must be the channel's payee and its rent payer, signing")]
    ChannelFacilitatorMismatch,
    #[msg("a vault-funded policy cannot open a channel: the channel refunds to the signer's own token account, not the vault")]
    ChannelVaultFunded,
    #[msg("the channel is not sealed: its settled amount can still change (seal it first: settle_and_seal, or seal after request_close's grace)")]
    ChannelNotSealed,
    #[msg("channel is not the record's channel as the payment-channels program keeps it (address, owner, layout)")]
    ChannelAccountInvalid,
    #[msg("the channel still exists: its record closes with gate_channel_close, once the channel is sealed")]
    ChannelStillOpen,
    // 6077..: approvals
    #[msg("the amount is above the payer policy's approval threshold: the authority's members approve these terms on chain (policy_vault approve_payment), then the payment passes with the approval among its remaining accounts")]
    ApprovalRequired,
    // 6078..: the fifth audit
    #[msg("the mint has more than 18 decimals: the channel's feedback could never state its value (value_decimals 0..=18), so it could never close through the gate")]
    MintDecimalsTooLarge,
    // 6079..: the holdback (docs/holdback.md)
    #[msg("holdback_tier: the payer's policy holds back by the payee's tier, so the settlement names the tier its terms were quoted for (rebuild it from the challenge)")]
    HoldbackTierMissing,
    #[msg("holdback_tier / the second transfer: the payer's policy has no holdback schedule, so a settlement names no tier and holds nothing back")]
    HoldbackNotInPolicy,
    #[msg("the payee's tier moved since the challenge, and with it the holdback: rebuild the settlement with the new terms")]
    HoldbackTierMoved,
    #[msg("the transfers do not hold back what the payer's policy sets for the payee's tier: [TransferChecked of amount - held to the payee, TransferChecked of held to the escrow] when something is held, one transfer otherwise")]
    HoldbackTransferMismatch,
    #[msg("holdback_escrow: not a token account of the mint whose authority is the gate's holdback authority, or not the second transfer's destination")]
    HoldbackEscrowInvalid,
    #[msg("the policy's arbiter is a key of the payer (its wallet, owner or agent wallet): a payer never arbitrates its own disputes")]
    ArbiterIsPayer,
    #[msg(
        "the mint has a Token-2022 transfer hook, or an authority that can set one: a held share could not be paid out of the escrow"
    )]
    HoldbackTransferHook,
    #[msg("the hold has not ended: the held share is released from hold_until")]
    HoldbackNotDue,
    #[msg("the held share is disputed: it moves only by the payee's refund, the arbiter's decision, or a release once the arbitration period has ended")]
    HoldbackDisputed,
    #[msg("the held share was already paid out")]
    HoldbackPaidOut,
    #[msg("the payer's policy named no arbiter: a dispute ends with the payee's refund, or in its favour once the arbitration period has ended")]
    HoldbackNoArbiter,
    #[msg("the arbitration period has ended: the held share is the payee's (release it)")]
    ArbitrationClosed,
    #[msg("the held share is not disputed: there is nothing to arbitrate")]
    HoldbackNotDisputed,
    #[msg("the payment was not held back: its log records no held share")]
    HoldbackNotHeld,
    #[msg("to: the held share goes to a token account of the mint owned by the payee's recipient at settlement when it goes to the payee, by the payer's wallet when it goes back; a held settlement's emit_feedback passes the payee's token account paid after the escrow")]
    HoldbackRecipientMismatch,
    #[msg(
        "escrow / mint / token_program: not the escrow, mint or token program of the held share"
    )]
    HoldbackEscrowMismatch,
    #[msg("payee_signer: the payee agent's live owner or its agent wallet refunds a held share")]
    NotPaymentPayee,
    #[msg("arbiter: the policy's arbiter must sign, or as many members of its arbiter set as its threshold (the payer's wallet never counts)")]
    ArbiterSignatureMissing,
    #[msg("the held share is still in the escrow: the log closes once it is released, refunded or arbitrated")]
    HoldbackOutstanding,
    #[msg("members: 1 to 5 keys in ascending order, none the default key; threshold: 1 to the number of members")]
    ArbiterSetInvalid,
    #[msg("the dispute's outcome needs the payee's registry accounts (agent_account, payee_asset, gate_authority, registry_program) to answer the dispute's feedback")]
    ResponseAccountsMissing,
    #[msg("the payer's policy holds back a share from this payee, and a channel pays its payee in full: pay with the exact scheme")]
    ChannelHoldback,
    #[msg("the mint is Pausable or makes new accounts frozen: its issuer could lock a held share in the escrow")]
    HoldbackMintLockable,
    #[msg("delegation: not a recurring delegation of the Subscriptions program in this mint naming the gate's delegate of this subscription")]
    SubscriptionDelegationInvalid,
    #[msg("the delegation's delegator is not a key of the payer agent (its live owner, or the agent wallet that owner set): after a sale the seller's delegations are not pulled")]
    SubscriptionDelegatorMismatch,
    #[msg("facilitator: only the facilitator a gated subscription names sends its pulls")]
    SubscriptionFacilitatorMismatch,
    #[msg("the payer's policy is vault-funded: a recurring delegation pulls from the delegator's associated token account, which a vault is not")]
    SubscriptionVaultFunded,
    #[msg("the payer's policy holds back a share from this payee, which a pull cannot: pay with the exact scheme")]
    SubscriptionHoldback,
    #[msg("the mint has a Token-2022 transfer hook, or an authority that can set one: gated pulls carry no hook accounts")]
    SubscriptionTransferHook,
    #[msg("policy: not the payer agent's policy of this id for this mint")]
    SubscriptionPolicyMismatch,
    #[msg("delegator: only the delegator that subscribed unsubscribes")]
    SubscriptionNotDelegator,
    #[msg("feedback_log: not the receipt of a pull from the delegation as it is now (a pull landed since this one was built): build it again")]
    SubscriptionPullStale,
}
