//! The refusal reasons (`errorReason`) of the channel schemes, one table: the ones x402 gives
//! every scheme, then each scheme's own, named as its SVM specification names them, and
//! trust-gate's additions (documented where they are its own). `upto::reason` and
//! `batch::reason` are the modules below.

pub const UNSUPPORTED_PAYLOAD_TYPE: &str = "unsupported_payload_type";
pub const UNSUPPORTED_SCHEME: &str = "unsupported_scheme";
pub const NETWORK_MISMATCH: &str = "network_mismatch";
pub const DUPLICATE_SETTLEMENT: &str = "duplicate_settlement";
pub const SETTLEMENT_PENDING: &str = "settlement_pending";
pub const TRANSACTION_FAILED: &str = "transaction_failed";

/// `upto`'s reasons, the shared ones included.
pub mod upto {
    pub use super::{
        DUPLICATE_SETTLEMENT, NETWORK_MISMATCH, SETTLEMENT_PENDING, TRANSACTION_FAILED,
        UNSUPPORTED_PAYLOAD_TYPE, UNSUPPORTED_SCHEME,
    };

    pub const FACILITATOR_MISMATCH: &str = "facilitator_mismatch";
    pub const INVALID_REQUIREMENTS: &str = "invalid_upto_svm_payment_requirements";
    pub const UNEXPECTED_VOUCHER: &str = "invalid_upto_svm_payload_unexpected_voucher";
    pub const PAYLOAD_TYPE: &str = "invalid_upto_svm_payload_type";
    pub const RECEIVER_AUTHORIZER: &str = "invalid_upto_svm_payload_receiver_authorizer";
    pub const AMOUNT: &str = "invalid_upto_svm_payload_amount";
    pub const AMOUNT_MISMATCH: &str = "invalid_upto_svm_payload_amount_mismatch";
    pub const DEPOSIT_NOT_CEILING: &str = "invalid_upto_svm_payload_deposit_not_ceiling";
    pub const CHANNEL_SEED: &str = "invalid_upto_svm_payload_channel_seed";
    pub const NOT_YET_ACTIVE: &str = "invalid_upto_svm_payload_not_yet_active";
    pub const EXPIRED: &str = "invalid_upto_svm_payload_expired";
    pub const CHANNEL_LIFETIME_EXCEEDED: &str =
        "invalid_upto_svm_payload_channel_lifetime_exceeded";
    pub const EXPIRES_AT_MISMATCH: &str = "invalid_upto_svm_payload_expires_at_mismatch";
    pub const PAYER_MISMATCH: &str = "invalid_upto_svm_payload_payer_mismatch";
    pub const OPEN_TRANSACTION: &str = "invalid_upto_svm_payload_open_transaction";
    pub const CHANNEL_ID: &str = "invalid_upto_svm_payload_channel_id";
    pub const NONCE: &str = "invalid_upto_svm_payload_nonce";
    pub const SETTLEMENT_EXCEEDS_AMOUNT: &str =
        "invalid_upto_svm_payload_settlement_exceeds_amount";
    pub const MISSING_VOUCHER: &str = "invalid_upto_svm_payload_missing_voucher";
    pub const VOUCHER_SIGNATURE: &str = "invalid_upto_svm_payload_voucher_signature";
    pub const CHANNEL_ALREADY_OPEN: &str = "invalid_upto_svm_channel_already_open";
    pub const SETTLEMENT_SIMULATION: &str = "invalid_upto_svm_settlement_simulation";
    pub const CHANNEL_BROADCAST: &str = "invalid_upto_svm_channel_broadcast";
    pub const CHANNEL_STATE: &str = "invalid_upto_svm_channel_state";
    pub const AUTHORIZER_NOT_CONFIGURED: &str = "invalid_upto_svm_authorizer_not_configured";
    pub const AUTHORIZER_ADDRESS_MISMATCH: &str = "invalid_upto_svm_authorizer_address_mismatch";
    pub const DELEGATED_SETTLE_UNAUTHENTICATED: &str =
        "invalid_upto_svm_delegated_settle_unauthenticated";
    pub const DELEGATED_AUTH_STORE: &str = "invalid_upto_svm_delegated_auth_store";
}

/// `batch`'s reasons, the shared ones included.
pub mod batch {
    pub use super::{
        DUPLICATE_SETTLEMENT, NETWORK_MISMATCH, SETTLEMENT_PENDING, TRANSACTION_FAILED,
        UNSUPPORTED_PAYLOAD_TYPE, UNSUPPORTED_SCHEME,
    };

    pub const PAYLOAD_TYPE: &str = "invalid_batch_settlement_svm_payload_type";
    pub const PAYMENT_FLOW: &str = "invalid_batch_settlement_svm_payment_flow";
    pub const TOKEN_PROGRAM: &str = "invalid_batch_settlement_svm_token_program";
    pub const VOUCHER_SIGNATURE: &str = "invalid_batch_settlement_svm_voucher_signature";
    pub const CHANNEL_ID_MISMATCH: &str = "invalid_batch_settlement_svm_channel_id_mismatch";
    pub const FEE_PAYER_MISMATCH: &str = "invalid_batch_settlement_svm_fee_payer_mismatch";
    pub const RECEIVER_AUTHORIZER_MISMATCH: &str =
        "invalid_batch_settlement_svm_receiver_authorizer_mismatch";
    pub const CLOSE_STATE: &str = "invalid_batch_settlement_svm_close_state";
    pub const CHANNEL_CLOSING: &str = "invalid_batch_settlement_svm_channel_closing";
    pub const WITHDRAW_DELAY_MISMATCH: &str =
        "invalid_batch_settlement_svm_withdraw_delay_mismatch";
    pub const WITHDRAW_DELAY_OUT_OF_RANGE: &str =
        "invalid_batch_settlement_svm_withdraw_delay_out_of_range";
    pub const CUMULATIVE_AMOUNT_MISMATCH: &str =
        "invalid_batch_settlement_svm_cumulative_amount_mismatch";
    pub const CUMULATIVE_EXCEEDS_DEPOSIT: &str =
        "invalid_batch_settlement_svm_cumulative_exceeds_deposit";
    pub const VOUCHER_EXPIRY: &str = "invalid_batch_settlement_svm_voucher_expiry";
    pub const SETUP_TRANSACTION: &str = "invalid_batch_settlement_svm_setup_transaction";
    pub const SETTLEMENT_SIMULATION: &str = "invalid_batch_settlement_svm_settlement_simulation";
    pub const CHANNEL_STATE: &str = "invalid_batch_settlement_svm_channel_state";
    /// This facilitator's: a requirement field it cannot read.
    pub const INVALID_REQUIREMENTS: &str = "invalid_batch_settlement_svm_payment_requirements";
    /// This facilitator's: server mode (`voucherSigner: "server"`, `authorization`, `seal`).
    pub const SERVER_MODE_UNSUPPORTED: &str =
        "invalid_batch_settlement_svm_server_mode_unsupported";
    /// The gated variant's: the price is above the payer policy's per-payment cap.
    pub const PRICE_OVER_PER_PAYMENT_CAP: &str = "price_over_per_payment_cap";
    /// A gated session's policy was retired (as the poller last read it).
    pub const POLICY_RETIRED: &str = "policy_retired";
    /// The gated variant's: the payer's kill switch is paused.
    pub const PAYER_PAUSED: &str = "payer_kill_switch_paused";
    /// The gated variant's: a voucher above the deposit the gate counted.
    pub const OVER_GATED_DEPOSIT: &str = "voucher_over_gated_deposit";
    /// A channel this facilitator does not hold a session of.
    pub const UNKNOWN_CHANNEL: &str = "invalid_batch_settlement_svm_unknown_channel";
    /// A close authorization missing, malformed, expired, too far ahead, or not the bound
    /// receiver authorizer's signature of this exact close.
    pub const CLOSE_AUTHORIZATION: &str = "invalid_batch_settlement_svm_close_authorization";
    /// The channel's receiver authorizer binding is not known here (no session of it).
    pub const RECEIVER_BINDING_UNAVAILABLE: &str =
        "invalid_batch_settlement_svm_receiver_binding_unavailable";
    /// A refund that names an amount (only the whole unused escrow goes back).
    pub const CLOSE_AMOUNT_UNSUPPORTED: &str =
        "invalid_batch_settlement_svm_close_amount_unsupported";
    /// A refund carrying a payer-signed `request_close`, which this facilitator does not
    /// sponsor.
    pub const REFUND_TRANSACTION: &str = "invalid_batch_settlement_svm_refund_transaction";
    /// This facilitator's: a server's payload (`claim`, `settle`, `seal`) from a caller that
    /// did not prove to be a trusted service (`X-Service-Authorization`).
    pub const SERVICE_UNAUTHENTICATED: &str = "service_unauthenticated";
    /// This facilitator's: a voucher of a session whose open was sent but is not yet seen
    /// on chain with its deposit (retry once it lands).
    pub const DEPOSIT_UNCONFIRMED: &str = "deposit_unconfirmed";
}
