//! Every refusal the facilitator answers with, one table: its wire string (`errorReason`,
//! `invalidReason`, or an error envelope's `error`) and its HTTP status. The channel schemes'
//! reasons are named as their SVM specifications name them, `upto`'s verbatim from the stock
//! facilitator (2.27) that a stock client and server know. One string may stand for two
//! refusals of different statuses (`transaction_failed`, `policy_mismatch`, `policy_retired`):
//! each is its own variant.

macro_rules! reasons {
    ($($(#[doc = $doc:literal])* $variant:ident = $wire:literal, $status:literal;)*) => {
        /// A refusal's reason: [`Reason::wire`] and [`Reason::status`] are the table's.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Reason {
            $($(#[doc = $doc])* $variant,)*
        }

        impl Reason {
            /// Every reason, in the table's order.
            pub const ALL: &'static [Reason] = &[$(Reason::$variant),*];

            /// The string on the wire.
            pub const fn wire(self) -> &'static str {
                match self {
                    $(Reason::$variant => $wire,)*
                }
            }

            /// The HTTP status it is answered with.
            pub const fn status(self) -> u16 {
                match self {
                    $(Reason::$variant => $status,)*
                }
            }
        }
    };
}

impl Reason {
    /// The reason a wire string names (the first, for a string two refusals share).
    pub fn from_wire(s: &str) -> Option<Reason> {
        Reason::ALL.iter().copied().find(|r| r.wire() == s)
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.wire())
    }
}

/// A reason serializes as its wire string.
impl serde::Serialize for Reason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.wire())
    }
}

/// A reason equals its wire string (what a client compares an answer with).
impl PartialEq<str> for Reason {
    fn eq(&self, other: &str) -> bool {
        self.wire() == other
    }
}

impl PartialEq<&str> for Reason {
    fn eq(&self, other: &&str) -> bool {
        self.wire() == *other
    }
}

impl PartialEq<Reason> for &str {
    fn eq(&self, other: &Reason) -> bool {
        *self == other.wire()
    }
}

impl PartialEq<Reason> for String {
    fn eq(&self, other: &Reason) -> bool {
        self == other.wire()
    }
}

impl PartialEq<Reason> for serde_json::Value {
    fn eq(&self, other: &Reason) -> bool {
        self.as_str() == Some(other.wire())
    }
}

reasons! {
    // x402's, every scheme's.
    UnsupportedPayloadType = "unsupported_payload_type", 400;
    UnsupportedScheme = "unsupported_scheme", 400;
    NetworkMismatch = "network_mismatch", 400;
    DuplicateSettlement = "duplicate_settlement", 400;
    SettlementPending = "settlement_pending", 400;
    TransactionFailed = "transaction_failed", 400;
    // `upto`'s.
    #[doc = "`upto`'s reasons, the shared ones included."]
    UptoFacilitatorMismatch = "facilitator_mismatch", 400;
    UptoInvalidRequirements = "invalid_upto_svm_payment_requirements", 400;
    UptoUnexpectedVoucher = "invalid_upto_svm_payload_unexpected_voucher", 400;
    UptoPayloadType = "invalid_upto_svm_payload_type", 400;
    UptoReceiverAuthorizer = "invalid_upto_svm_payload_receiver_authorizer", 400;
    UptoAmount = "invalid_upto_svm_payload_amount", 400;
    UptoAmountMismatch = "invalid_upto_svm_payload_amount_mismatch", 400;
    UptoDepositNotCeiling = "invalid_upto_svm_payload_deposit_not_ceiling", 400;
    UptoChannelSeed = "invalid_upto_svm_payload_channel_seed", 400;
    UptoNotYetActive = "invalid_upto_svm_payload_not_yet_active", 400;
    UptoExpired = "invalid_upto_svm_payload_expired", 400;
    UptoChannelLifetimeExceeded = "invalid_upto_svm_payload_channel_lifetime_exceeded", 400;
    UptoExpiresAtMismatch = "invalid_upto_svm_payload_expires_at_mismatch", 400;
    UptoPayerMismatch = "invalid_upto_svm_payload_payer_mismatch", 400;
    UptoOpenTransaction = "invalid_upto_svm_payload_open_transaction", 400;
    UptoChannelId = "invalid_upto_svm_payload_channel_id", 400;
    UptoNonce = "invalid_upto_svm_payload_nonce", 400;
    UptoSettlementExceedsAmount = "invalid_upto_svm_payload_settlement_exceeds_amount", 400;
    UptoMissingVoucher = "invalid_upto_svm_payload_missing_voucher", 400;
    UptoVoucherSignature = "invalid_upto_svm_payload_voucher_signature", 400;
    UptoChannelAlreadyOpen = "invalid_upto_svm_channel_already_open", 400;
    UptoSettlementSimulation = "invalid_upto_svm_settlement_simulation", 400;
    UptoChannelBroadcast = "invalid_upto_svm_channel_broadcast", 400;
    UptoChannelState = "invalid_upto_svm_channel_state", 400;
    UptoAuthorizerNotConfigured = "invalid_upto_svm_authorizer_not_configured", 400;
    UptoAuthorizerAddressMismatch = "invalid_upto_svm_authorizer_address_mismatch", 400;
    UptoDelegatedSettleUnauthenticated = "invalid_upto_svm_delegated_settle_unauthenticated", 400;
    UptoDelegatedAuthStore = "invalid_upto_svm_delegated_auth_store", 400;
    // `batch-settlement`'s, and the gated variant's.
    #[doc = "`batch`'s reasons, the shared ones included."]
    BatchPayloadType = "invalid_batch_settlement_svm_payload_type", 400;
    BatchPaymentFlow = "invalid_batch_settlement_svm_payment_flow", 400;
    BatchTokenProgram = "invalid_batch_settlement_svm_token_program", 400;
    BatchVoucherSignature = "invalid_batch_settlement_svm_voucher_signature", 400;
    BatchChannelIdMismatch = "invalid_batch_settlement_svm_channel_id_mismatch", 400;
    BatchFeePayerMismatch = "invalid_batch_settlement_svm_fee_payer_mismatch", 400;
    BatchReceiverAuthorizerMismatch = "invalid_batch_settlement_svm_receiver_authorizer_mismatch", 400;
    BatchCloseState = "invalid_batch_settlement_svm_close_state", 400;
    BatchChannelClosing = "invalid_batch_settlement_svm_channel_closing", 400;
    BatchWithdrawDelayMismatch = "invalid_batch_settlement_svm_withdraw_delay_mismatch", 400;
    BatchWithdrawDelayOutOfRange = "invalid_batch_settlement_svm_withdraw_delay_out_of_range", 400;
    BatchCumulativeAmountMismatch = "invalid_batch_settlement_svm_cumulative_amount_mismatch", 400;
    BatchCumulativeExceedsDeposit = "invalid_batch_settlement_svm_cumulative_exceeds_deposit", 400;
    BatchVoucherExpiry = "invalid_batch_settlement_svm_voucher_expiry", 400;
    BatchSetupTransaction = "invalid_batch_settlement_svm_setup_transaction", 400;
    BatchSettlementSimulation = "invalid_batch_settlement_svm_settlement_simulation", 400;
    BatchChannelState = "invalid_batch_settlement_svm_channel_state", 400;
    #[doc = "This facilitator's: a requirement field it cannot read."]
    BatchInvalidRequirements = "invalid_batch_settlement_svm_payment_requirements", 400;
    #[doc = "This facilitator's: server mode (`voucherSigner: \"server\"`, `authorization`, `seal`)."]
    BatchServerModeUnsupported = "invalid_batch_settlement_svm_server_mode_unsupported", 400;
    #[doc = "The gated variant's: the price is above the payer policy's per-payment cap."]
    BatchPriceOverPerPaymentCap = "price_over_per_payment_cap", 400;
    #[doc = "A gated session's policy was retired (as the poller last read it)."]
    BatchPolicyRetired = "policy_retired", 400;
    #[doc = "The gated variant's: the payer's kill switch is paused."]
    BatchPayerPaused = "payer_kill_switch_paused", 400;
    #[doc = "The gated variant's: a voucher above the deposit the gate counted."]
    BatchOverGatedDeposit = "voucher_over_gated_deposit", 400;
    #[doc = "A channel this facilitator does not hold a session of."]
    BatchUnknownChannel = "invalid_batch_settlement_svm_unknown_channel", 400;
    #[doc = "A close authorization missing, malformed, expired, too far ahead, or not the bound receiver authorizer's signature of this exact close."]
    BatchCloseAuthorization = "invalid_batch_settlement_svm_close_authorization", 400;
    #[doc = "The channel's receiver authorizer binding is not known here (no session of it)."]
    BatchReceiverBindingUnavailable = "invalid_batch_settlement_svm_receiver_binding_unavailable", 400;
    #[doc = "A refund that names an amount (only the whole unused escrow goes back)."]
    BatchCloseAmountUnsupported = "invalid_batch_settlement_svm_close_amount_unsupported", 400;
    #[doc = "A refund carrying a payer-signed `request_close`, which this facilitator does not sponsor."]
    BatchRefundTransaction = "invalid_batch_settlement_svm_refund_transaction", 400;
    #[doc = "This facilitator's: a server's payload (`claim`, `settle`, `seal`) from a caller that did not prove to be a trusted service (`X-Service-Authorization`)."]
    BatchServiceUnauthenticated = "service_unauthenticated", 401;
    #[doc = "This facilitator's: a voucher of a session whose open was sent but is not yet seen on chain with its deposit (retry once it lands)."]
    BatchDepositUnconfirmed = "deposit_unconfirmed", 400;
    // trust-gate's exact scheme: the challenge, the transaction, the gate's decision.
    InvalidX402Version = "invalid_x402_version", 400;
    InvalidNetwork = "invalid_network", 400;
    AcceptedRequirementsMismatch = "accepted_requirements_mismatch", 400;
    InvalidPaymentRequirements = "invalid_payment_requirements", 400;
    #[doc = "A trust-gate request that is not an x402 v2 facilitator request."]
    InvalidPayload = "invalid_payload", 400;
    FeePayerNotManaged = "fee_payer_not_managed_by_facilitator", 400;
    GateExtensionMissing = "gate_extension_missing", 400;
    PayToMismatch = "pay_to_mismatch", 400;
    MemoMissing = "memo_missing", 400;
    MemoTooLong = "memo_too_long", 400;
    ResourceMissing = "resource_missing", 400;
    ChallengeUnsigned = "challenge_unsigned", 400;
    ServiceNotTrusted = "service_not_trusted", 400;
    ChallengeSignatureInvalid = "challenge_signature_invalid", 400;
    ChallengeExpired = "challenge_expired", 400;
    ChallengeNotYetValid = "challenge_not_yet_valid", 400;
    InvalidTransactionEncoding = "invalid_transaction_encoding", 400;
    InvalidTransaction = "invalid_transaction", 400;
    TransactionTooLarge = "transaction_too_large", 400;
    GateInstructionsMissing = "gate_instructions_missing", 400;
    UnexpectedInstruction = "unexpected_instruction", 400;
    SettlementLayoutInvalid = "settlement_layout_invalid", 400;
    ComputeBudgetInvalid = "compute_budget_invalid", 400;
    ComputeUnitPriceTooHigh = "compute_unit_price_too_high", 400;
    ComputeUnitLimitTooHigh = "compute_unit_limit_too_high", 400;
    PriorityFeeTooHigh = "priority_fee_too_high", 400;
    FeePayerMismatch = "fee_payer_mismatch", 400;
    FeePayerNotIsolated = "fee_payer_not_isolated", 400;
    LookupTableNotAllowed = "lookup_table_not_allowed", 400;
    TokenProgramMismatch = "token_program_mismatch", 400;
    TransferMissing = "transfer_missing", 400;
    MintMismatch = "mint_mismatch", 400;
    RecipientMismatch = "recipient_mismatch", 400;
    AmountMismatch = "amount_mismatch", 400;
    DecimalsMismatch = "decimals_mismatch", 400;
    PayerMismatch = "payer_mismatch", 400;
    PayeeMismatch = "payee_mismatch", 400;
    #[doc = "The transaction's policy is not the one the requirements name."]
    PolicyMismatch = "policy_mismatch", 400;
    PaymentIdMismatch = "payment_id_mismatch", 400;
    DeadlineMismatch = "deadline_mismatch", 400;
    ApprovalMismatch = "approval_mismatch", 400;
    #[doc = "The settlement's holdback (its tier, the held share's transfer, the escrow) is not the one the challenge states in `extra.gate.holdback`."]
    HoldbackMismatch = "holdback_mismatch", 400;
    #[doc = "The challenge's holdback terms are not the gate's now (the payee's tier moved, or the challenge states none where the payer's policy holds a share back): ask for a fresh challenge."]
    HoldbackTermsStale = "holdback_terms_stale", 409;
    #[doc = "The payee has no escrow in the payment's mint for the held share (`open_holdback_escrow`, anyone)."]
    HoldbackEscrowMissing = "holdback_escrow_missing", 422;
    GateAccountsMismatch = "gate_accounts_mismatch", 400;
    UnexpectedSigner = "unexpected_signer", 400;
    MissingClientSignature = "missing_client_signature", 400;
    InvalidClientSignature = "invalid_client_signature", 400;
    PayerSignerNotAuthorized = "payer_signer_not_authorized", 403;
    PayerAgentInvalid = "payer_agent_invalid", 422;
    PayeeRequiresMemo = "payee_requires_memo", 422;
    BlockhashExpired = "blockhash_expired", 400;
    TransactionSimulationFailed = "transaction_simulation_failed", 402;
    #[doc = "An exact settlement that failed on chain (the channel schemes' is 400, as their specifications say)."]
    GateTransactionFailed = "transaction_failed", 402;
    PaymentAlreadySettled = "payment_already_settled", 409;
    SettlementInProgress = "settlement_in_progress", 409;
    #[doc = "A decision's policy that is not the payer agent's."]
    PolicyNotPayers = "policy_mismatch", 422;
    #[doc = "A decision against a retired policy (a gated session's is [`Reason::BatchPolicyRetired`])."]
    PolicyRetired = "policy_retired", 422;
    PolicyNotFound = "policy_not_found", 400;
    #[doc = "The decision's own simulation failed."]
    SimulationFailed = "simulation_failed", 422;
    // This facilitator's: limits, its store and signer, its other routes.
    #[doc = "The caller's address sent more than RATE_LIMIT_PER_ADDRESS."]
    CallerRateLimited = "caller_rate_limited", 429;
    PayerRateLimited = "payer_rate_limited", 429;
    #[doc = "Too many of the payer's settlements wait for its turn in this process."]
    PayerBusy = "payer_busy", 429;
    #[doc = "The payer has as many sponsored channels open as its bound."]
    PayerChannelsLimit = "payer_channels_limit", 429;
    #[doc = "The rent this facilitator advances is at its bound."]
    RentAdvanceLimit = "rent_advance_limit", 503;
    FeePayerBalanceLow = "fee_payer_balance_low", 503;
    ReputationEnginePaused = "reputation_engine_paused", 503;
    LockStoreUnavailable = "lock_store_unavailable", 503;
    #[doc = "Configured with a public key only."]
    FacilitatorNotSigning = "facilitator_not_signing", 503;
    NetworkUnavailable = "network_unavailable", 400;
    RpcFailure = "rpc_failure", 502;
    #[doc = "A request field that is malformed; the message names it."]
    InputInvalid = "input_invalid", 400;
    NotFound = "not_found", 404;
    Internal = "internal", 500;
    #[doc = "A dispute, to a facilitator configured with a public key only."]
    SignerRequired = "signer_required", 503;
    NotPaymentPayer = "not_payment_payer", 403;
    AlreadyDisputed = "already_disputed", 409;
    DisputeWindowClosed = "dispute_window_closed", 403;
    #[doc = "A dispute's transaction failed."]
    DisputeTransactionFailed = "transaction_failed", 502;
    #[doc = "The gate asks for a capability attestation."]
    RequireValidation = "RequireValidation", 402;
    #[doc = "The gate asks for the payer's owners' approval."]
    RequireApproval = "RequireApproval", 402;
    #[doc = "The gate denied the payment: the answer names the Deny reason (its `reasonName`) in place of this string."]
    Denied = "denied", 402;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn a_string_two_refusals_share_keeps_apart_by_status() {
        let mut seen: HashMap<&str, Vec<Reason>> = HashMap::new();
        for r in Reason::ALL {
            assert!((400..600).contains(&r.status()), "{r:?}");
            seen.entry(r.wire()).or_default().push(*r);
        }
        for (wire, rs) in seen {
            let statuses: std::collections::HashSet<u16> = rs.iter().map(|r| r.status()).collect();
            assert_eq!(statuses.len(), rs.len(), "{wire}: {rs:?} share a status");
        }
        assert_eq!(Reason::from_wire("payer_busy"), Some(Reason::PayerBusy));
        assert_eq!(Reason::UptoAmount, "invalid_upto_svm_payload_amount");
    }
}
