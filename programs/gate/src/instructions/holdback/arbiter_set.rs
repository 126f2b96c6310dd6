use crate::errors::GateError;
use crate::instructions::helpers::feedback::canonical_bump;
use crate::state::{seeds, ArbiterSet, MAX_ARBITERS};
use anchor_lang::prelude::*;
use trust_gate_program_common::pda_account;

#[derive(Accounts)]
pub struct CreateArbiterSet<'info> {
    /// Pays the set's rent (a set is never closed: policies may name it for good).
    #[account(mut)]
    pub payer: Signer<'info>,
    /// The set's PDA, `["arbiter_set", ArbiterSet::id(threshold, members)]` (checked in the
    /// handler), created here.
    /// CHECK: verified as described above.
    #[account(mut)]
    pub arbiter_set: UncheckedAccount<'info>,
    pub system_program: Program<'info, System>,
}

/// Creates a k-of-n arbiter set: `threshold` of `members` (1 to 5, ascending) decide
/// together. Anyone may create one; its address names its members and threshold.
pub fn create_arbiter_set(
    ctx: Context<CreateArbiterSet>,
    threshold: u8,
    members: Vec<Pubkey>,
) -> Result<()> {
    require!(
        ArbiterSet::validate(threshold, &members),
        GateError::ArbiterSetInvalid
    );
    let id = ArbiterSet::id(threshold, &members);
    let a = &ctx.accounts;
    let bump = canonical_bump(&a.arbiter_set, &[seeds::ARBITER_SET, &id])?;
    let mut slots = [Pubkey::default(); MAX_ARBITERS];
    slots[..members.len()].copy_from_slice(&members);
    pda_account::init(
        &a.payer,
        &a.arbiter_set,
        8 + ArbiterSet::INIT_SPACE,
        &[seeds::ARBITER_SET, &id, &[bump]],
        &ArbiterSet {
            threshold,
            members: slots,
            bump,
        },
    )
}
