//! PDA seed prefixes (the SDK derives the same addresses).

use anchor_lang::prelude::{pubkey, Pubkey};

/// `["policy_authority", asset]` -> [`crate::state::PolicyAuthority`]
pub const POLICY_AUTHORITY: &[u8] = b"policy_authority";
/// `["policy", asset, policy_id u32 LE]` -> [`crate::state::PolicyAccount`]
pub const POLICY: &[u8] = b"policy";
/// `["payee_list", asset, policy_id u32 LE]` -> [`crate::state::PayeeList`]
pub const PAYEE_LIST: &[u8] = b"payee_list";
/// `["velocity", asset, policy_id u32 LE]` -> [`crate::state::VelocityLedger`]
pub const VELOCITY: &[u8] = b"velocity";
/// `["killswitch", asset]` -> [`crate::state::KillSwitchState`]
pub const KILLSWITCH: &[u8] = b"killswitch";
/// `["acceptance", asset]` -> [`crate::state::AcceptancePolicy`]
pub const ACCEPTANCE: &[u8] = b"acceptance";
/// `["vault", asset, mint]` -> the agent's vault: a token account of `mint` whose authority
/// is its own address, so that only policy_vault can sign for it (see [`crate::state::vault`]).
pub const VAULT: &[u8] = b"vault";
/// `["authority_guard", asset]` -> [`crate::state::AuthorityGuard`]
pub const AUTHORITY_GUARD: &[u8] = b"authority_guard";
/// `["take_over", asset]` -> [`crate::state::TakeOverRequest`]
pub const TAKE_OVER: &[u8] = b"take_over";
/// `["approval", payer_asset, payee_asset, mint, amount u64 LE, policy_id u32 LE]` ->
/// [`crate::state::PaymentApproval`]
pub const APPROVAL: &[u8] = b"approval";

/// The gate program: the only caller allowed to run `evaluate`. Kept as a constant because
/// the gate depends on this crate (a test asserts it equals `gate::ID`).
pub const GATE_PROGRAM_ID: Pubkey = pubkey!("616ePQS44tJKJiCNZt3ega2qgbMeBtYupPjfcU1Z4Z9g");
/// `["evaluate_signer"]` under the gate program: the PDA the gate signs `evaluate` with.
pub const GATE_EVALUATE_SIGNER: &[u8] = b"evaluate_signer";

/// That PDA's address and bump, derived at compile time: comparing a signer with a constant
/// is free, while deriving it in the program costs 1 500 compute units per bump tried, on
/// both sides of every decision.
const GATE_EVALUATE_SIGNER_PDA: ([u8; 32], u8) =
    anchor_lang::derive_program_address(&[GATE_EVALUATE_SIGNER], &GATE_PROGRAM_ID.to_bytes());
pub const GATE_EVALUATE_SIGNER_ADDRESS: Pubkey = Pubkey::new_from_array(GATE_EVALUATE_SIGNER_PDA.0);
pub const GATE_EVALUATE_SIGNER_BUMP: u8 = GATE_EVALUATE_SIGNER_PDA.1;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_evaluate_signer_constants_are_the_pda() {
        assert_eq!(
            Pubkey::find_program_address(&[GATE_EVALUATE_SIGNER], &GATE_PROGRAM_ID),
            (GATE_EVALUATE_SIGNER_ADDRESS, GATE_EVALUATE_SIGNER_BUMP)
        );
    }
}
