//! Solana's Subscriptions & Allowances program, the recurring delegations a gated
//! subscription pulls (docs/subscriptions.md): its addresses, its accounts as the gate reads
//! them (`RecurringDelegation`, `SubscriptionAuthority`, re-exported from the programs'
//! common crate, which the gate reads them with), and the instructions a delegator sends to
//! it directly. The gate's own instructions (`subscribe`, `gate_pull`, `unsubscribe`) are
//! `Builder`'s. The `subscriptions` test suite holds every builder here to the real bytecode.

use crate::token::TokenProgram;
use anchor_lang::prelude::Pubkey;
use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
use anchor_lang::solana_program::system_program;
pub use trust_gate_program_common::subscriptions::{
    error, seeds, tag, RecurringDelegation, RecurringTerms, SubscriptionAuthority, EVENT_AUTHORITY,
    ID as PROGRAM_ID, MAX_PERIOD_SECS,
};

/// `["SubscriptionAuthority", user, mint]`: the user's one SPL delegate for the mint.
pub fn subscription_authority(user: &Pubkey, mint: &Pubkey) -> Pubkey {
    Pubkey::find_program_address(
        &[seeds::SUBSCRIPTION_AUTHORITY, user.as_ref(), mint.as_ref()],
        &PROGRAM_ID,
    )
    .0
}

/// `["delegation", subscription_authority, delegator, delegatee, nonce]`: a delegation of
/// `delegator`'s authority for `mint` to `delegatee`.
pub fn delegation(delegator: &Pubkey, mint: &Pubkey, delegatee: &Pubkey, nonce: u64) -> Pubkey {
    let authority = subscription_authority(delegator, mint);
    Pubkey::find_program_address(
        &[
            seeds::DELEGATION,
            authority.as_ref(),
            delegator.as_ref(),
            delegatee.as_ref(),
            &nonce.to_le_bytes(),
        ],
        &PROGRAM_ID,
    )
    .0
}

/// `initialize_subscription_authority`: creates (or, when it exists, refreshes the SPL
/// approval of) `user`'s authority for `mint`; the user signs and pays its rent.
pub fn init_subscription_authority(
    user: &Pubkey,
    mint: &Pubkey,
    program: TokenProgram,
) -> Instruction {
    Instruction {
        program_id: PROGRAM_ID,
        accounts: vec![
            AccountMeta::new(*user, true),
            AccountMeta::new(subscription_authority(user, mint), false),
            AccountMeta::new_readonly(*mint, false),
            AccountMeta::new(program.associated_account(user, mint), false),
            AccountMeta::new_readonly(system_program::ID, false),
            AccountMeta::new_readonly(program.id(), false),
        ],
        data: vec![tag::INIT_SUBSCRIPTION_AUTHORITY],
    }
}

/// `create_recurring_delegation` of `terms` to `delegatee`, under the authority's `init_id`;
/// the delegator signs and pays its rent.
pub fn create_recurring_delegation(
    delegator: &Pubkey,
    mint: &Pubkey,
    delegatee: &Pubkey,
    terms: &RecurringTerms,
    init_id: i64,
) -> Instruction {
    Instruction {
        program_id: PROGRAM_ID,
        accounts: vec![
            AccountMeta::new(*delegator, true),
            AccountMeta::new_readonly(subscription_authority(delegator, mint), false),
            AccountMeta::new(delegation(delegator, mint, delegatee, terms.nonce), false),
            AccountMeta::new_readonly(*delegatee, false),
            AccountMeta::new_readonly(system_program::ID, false),
        ],
        data: trust_gate_program_common::subscriptions::create_recurring_delegation_data(
            terms, init_id,
        ),
    }
}

/// `transfer_recurring` of `amount` from `d`'s delegator to `receiver`, signed by `d`'s
/// delegatee (a gated subscription's delegatee is the gate's PDA: pull with `gate_pull`).
pub fn transfer_recurring(
    address: &Pubkey,
    d: &RecurringDelegation,
    receiver: &Pubkey,
    program: TokenProgram,
    amount: u64,
) -> Instruction {
    Instruction {
        program_id: PROGRAM_ID,
        accounts: vec![
            AccountMeta::new(*address, false),
            AccountMeta::new_readonly(d.subscription_authority, false),
            AccountMeta::new(program.associated_account(&d.delegator, &d.mint), false),
            AccountMeta::new(*receiver, false),
            AccountMeta::new_readonly(d.mint, false),
            AccountMeta::new_readonly(program.id(), false),
            AccountMeta::new_readonly(d.delegatee, true),
            AccountMeta::new_readonly(EVENT_AUTHORITY, false),
            AccountMeta::new_readonly(PROGRAM_ID, false),
        ],
        data: trust_gate_program_common::subscriptions::transfer_recurring_data(
            amount,
            &d.delegator,
            &d.mint,
        ),
    }
}

/// `revoke_delegation`: the delegator closes a delegation, its rent back to it.
pub fn revoke_delegation(delegator: &Pubkey, address: &Pubkey) -> Instruction {
    Instruction {
        program_id: PROGRAM_ID,
        accounts: vec![
            AccountMeta::new(*delegator, true),
            AccountMeta::new(*address, false),
        ],
        data: vec![tag::REVOKE_DELEGATION],
    }
}

/// `revoke_subscription_authority`: clears the authority's SPL approval on `user`'s
/// associated token account and closes it (its rent back to the user, who paid it): every
/// delegation under it stops.
pub fn revoke_subscription_authority(
    user: &Pubkey,
    mint: &Pubkey,
    program: TokenProgram,
) -> Instruction {
    Instruction {
        program_id: PROGRAM_ID,
        accounts: vec![
            AccountMeta::new(*user, true),
            AccountMeta::new(program.associated_account(user, mint), false),
            AccountMeta::new_readonly(*mint, false),
            AccountMeta::new_readonly(program.id(), false),
            AccountMeta::new(subscription_authority(user, mint), false),
        ],
        data: vec![tag::REVOKE_SUBSCRIPTION_AUTHORITY],
    }
}

/// `close_subscription_authority`: closes `user`'s authority for `mint` (its rent back to the
/// user, who paid it), leaving the SPL approval in place.
pub fn close_subscription_authority(user: &Pubkey, mint: &Pubkey) -> Instruction {
    Instruction {
        program_id: PROGRAM_ID,
        accounts: vec![
            AccountMeta::new(*user, true),
            AccountMeta::new(subscription_authority(user, mint), false),
        ],
        data: vec![tag::CLOSE_SUBSCRIPTION_AUTHORITY],
    }
}
