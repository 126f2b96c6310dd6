//! The rules of a gated subscription (docs/subscriptions.md): the gate is the delegatee of a
//! recurring delegation of Solana's Subscriptions program, through a data-less PDA per payer
//! agent, payee agent and facilitator, and signs each pull itself, after the payer's policy
//! allowed and counted it, into the payee's recipient only, with the payee's feedback in the
//! same instruction. Pure logic over the delegation's bytes, unit-tested here.

use crate::errors::GateError;
use crate::state::seeds;
use anchor_lang::prelude::*;
use trust_gate_program_common::subscriptions::RecurringDelegation;

/// The seeds of the delegate the gate signs a subscription's pulls with.
pub fn delegate_seeds<'a>(
    payer_asset: &'a Pubkey,
    payee_asset: &'a Pubkey,
    facilitator: &'a Pubkey,
    bump: &'a [u8; 1],
) -> [&'a [u8]; 5] {
    [
        seeds::PULL_DELEGATE,
        payer_asset.as_ref(),
        payee_asset.as_ref(),
        facilitator.as_ref(),
        bump,
    ]
}

/// The delegation a pull may sign for: a recurring delegation (`data` of an account the
/// Subscriptions program owns) in `mint` naming `delegate` as its delegatee.
pub fn pullable(data: &[u8], mint: &Pubkey, delegate: &Pubkey) -> Result<RecurringDelegation> {
    RecurringDelegation::read(data)
        .filter(|d| d.mint == *mint && d.delegatee == *delegate)
        .ok_or_else(|| error!(GateError::SubscriptionDelegationInvalid))
}

/// The payment id of a pull, its receipt's key: `sha256("trust-gate:pull:" ‖ delegation ‖
/// current_period_start_ts ‖ amount_pulled_in_period)`, both as the delegation holds them
/// before the pull. Every pull moves them forward (a later period, or more pulled in the
/// same one), so each pull has its own id, and a pull built from one reading of the
/// delegation lands once: after it, the delegation names another receipt.
pub fn payment_id_hash(delegation: &Pubkey, d: &RecurringDelegation) -> [u8; 32] {
    solana_sha256_hasher::hashv(&[
        PAYMENT_ID_DOMAIN,
        delegation.as_ref(),
        &d.current_period_start_ts.to_le_bytes(),
        &d.amount_pulled_in_period.to_le_bytes(),
    ])
    .to_bytes()
}
const PAYMENT_ID_DOMAIN: &[u8] = b"trust-gate:pull:";

#[cfg(test)]
mod tests {
    use super::*;
    use trust_gate_program_common::subscriptions::discriminator;

    fn data(mint: &Pubkey, delegatee: &Pubkey, start: i64, pulled: u64) -> Vec<u8> {
        let mut data = vec![0u8; RecurringDelegation::LEN];
        data[0] = discriminator::RECURRING_DELEGATION;
        data[35..67].copy_from_slice(delegatee.as_ref());
        data[139..171].copy_from_slice(mint.as_ref());
        data[171..179].copy_from_slice(&start.to_le_bytes());
        data[179..187].copy_from_slice(&100u64.to_le_bytes());
        data[195..203].copy_from_slice(&1_000u64.to_le_bytes());
        data[203..211].copy_from_slice(&pulled.to_le_bytes());
        data
    }

    fn code(r: Result<RecurringDelegation>) -> u32 {
        match r.unwrap_err() {
            Error::AnchorError(e) => e.error_code_number,
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn only_a_recurring_delegation_in_the_mint_to_the_gates_delegate_is_pulled() {
        let (mint, delegate) = (Pubkey::new_unique(), Pubkey::new_unique());
        assert!(pullable(&data(&mint, &delegate, 0, 0), &mint, &delegate).is_ok());
        let invalid = u32::from(GateError::SubscriptionDelegationInvalid);
        let other = Pubkey::new_unique();
        assert_eq!(
            code(pullable(&data(&other, &delegate, 0, 0), &mint, &delegate)),
            invalid
        );
        assert_eq!(
            code(pullable(&data(&mint, &other, 0, 0), &mint, &delegate)),
            invalid
        );
        // A fixed delegation (discriminator 2, 187 bytes), or any other account.
        let mut fixed = data(&mint, &delegate, 0, 0);
        fixed[0] = 2;
        assert_eq!(code(pullable(&fixed, &mint, &delegate)), invalid);
        assert_eq!(code(pullable(&[], &mint, &delegate)), invalid);
    }

    #[test]
    fn every_pull_of_a_delegation_has_its_own_payment_id() {
        let (mint, delegate, address) = (
            Pubkey::new_unique(),
            Pubkey::new_unique(),
            Pubkey::new_unique(),
        );
        let id = |start, pulled| {
            let d = RecurringDelegation::read(&data(&mint, &delegate, start, pulled)).unwrap();
            payment_id_hash(&address, &d)
        };
        let first = id(1_000, 0);
        assert_eq!(first, id(1_000, 0), "the same reading, the same pull");
        assert_ne!(first, id(1_000, 60), "a second pull in the period");
        assert_ne!(first, id(1_100, 0), "the next period's first pull");
        let d = RecurringDelegation::read(&data(&mint, &delegate, 1_000, 0)).unwrap();
        assert_ne!(first, payment_id_hash(&Pubkey::new_unique(), &d));
        // Domain-separated from a channel's payment id of the same address.
        assert_ne!(first, crate::channel::payment_id_hash(&address));
    }
}
