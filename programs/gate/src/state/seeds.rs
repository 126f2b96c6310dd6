//! PDA seed prefixes (the SDK derives the same addresses).

/// `["gate_authority", facilitator]` -> [`crate::state::GateAuthority`]
pub const GATE_AUTHORITY: &[u8] = b"gate_authority";
/// `["feedback_log", facilitator, payment_id_hash]` -> [`crate::state::FeedbackLog`]
pub const FEEDBACK_LOG: &[u8] = b"feedback_log";
/// `["channel_record", channel]` -> [`crate::state::ChannelRecord`]
pub const CHANNEL_RECORD: &[u8] = b"channel_record";
/// `["dispute", facilitator, payment_id_hash]` -> [`crate::state::DisputeRecord`]
pub const DISPUTE: &[u8] = b"dispute";
/// `["evaluate_signer"]`: the data-less PDA the gate signs policy_vault::evaluate with.
pub const EVALUATE_SIGNER: &[u8] = policy_vault::state::seeds::GATE_EVALUATE_SIGNER;
/// `["holdback_escrow", payee_asset, mint]` -> the canonical escrow token account of a payee
/// and mint (authority: `crate::holdback::authority`).
pub const HOLDBACK_ESCROW: &[u8] = b"holdback_escrow";
/// `["arbiter_set", ArbiterSet::id(threshold, members)]` -> [`crate::state::ArbiterSet`]
pub const ARBITER_SET: &[u8] = b"arbiter_set";
/// `["gated_subscription", delegation]` -> [`crate::state::GatedSubscription`]
pub const GATED_SUBSCRIPTION: &[u8] = b"gated_subscription";
/// `["pull_delegate", payer_asset, payee_asset, facilitator]`: the data-less PDA a gated
/// subscription's recurring delegation names as its delegatee; the gate signs its pulls.
pub const PULL_DELEGATE: &[u8] = b"pull_delegate";
