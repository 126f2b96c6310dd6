//! PDA seed prefixes (the SDK derives the same addresses).

use anchor_lang::prelude::{pubkey, Pubkey};

/// `["policy_authority", asset]` -> [`crate::state::PolicyAuthority`]
pub const POLICY_AUTHORITY: &[u8] = b"policy_authority";
/// `["policy", asset, policy_id u32 LE]` -> [`crate::state::PolicyAccount`]
pub const POLICY: &[u8] = b"policy";
/// `["velocity", asset, policy_id u32 LE]` -> [`crate::state::VelocityLedger`]
pub const VELOCITY: &[u8] = b"velocity";
/// `["killswitch", asset]` -> [`crate::state::KillSwitchState`]
pub const KILLSWITCH: &[u8] = b"killswitch";
/// `["acceptance", asset]` -> [`crate::state::AcceptancePolicy`]
pub const ACCEPTANCE: &[u8] = b"acceptance";

/// The gate program: the only caller allowed to run `evaluate`. Kept as a constant because
/// the gate depends on this crate (a test asserts it equals `gate::ID`).
pub const GATE_PROGRAM_ID: Pubkey = pubkey!("616ePQS44tJKJiCNZt3ega2qgbMeBtYupPjfcU1Z4Z9g");
/// `["evaluate_signer"]` under the gate program: the PDA the gate signs `evaluate` with.
pub const GATE_EVALUATE_SIGNER: &[u8] = b"evaluate_signer";
