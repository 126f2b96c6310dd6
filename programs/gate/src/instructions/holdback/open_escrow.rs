use crate::errors::GateError;
use crate::holdback::authority;
use crate::instructions::helpers::parties;
use crate::state::seeds;
use anchor_lang::prelude::*;
use anchor_lang::solana_program::program::invoke;
use trust_gate_program_common::{pda_account, token_account};

#[derive(Accounts)]
#[instruction(payee_asset: Pubkey, mint: Pubkey)]
pub struct OpenHoldbackEscrow<'info> {
    /// Pays the escrow's rent (an escrow is never closed: it serves every held payment to
    /// the payee in this mint).
    #[account(mut)]
    pub payer: Signer<'info>,
    /// The escrow's PDA (seeds enforced), created here as a token account of `mint` whose
    /// authority is the gate's holdback authority.
    /// CHECK: verified as described above.
    #[account(mut, seeds = [seeds::HOLDBACK_ESCROW, payee_asset.as_ref(), mint.as_ref()], bump)]
    pub escrow: UncheckedAccount<'info>,
    /// CHECK: the mint (compared with `mint`, parsed in the handler).
    pub mint_account: UncheckedAccount<'info>,
    /// CHECK: the token program that owns the mint (compared in the handler).
    pub token_program: UncheckedAccount<'info>,
    pub system_program: Program<'info, System>,
}

/// Opens the escrow of a payee and mint: the token account a held settlement's second
/// transfer credits (one per payee and mint, so a lookup table can hold it). Anyone may.
pub fn open_holdback_escrow(
    ctx: Context<OpenHoldbackEscrow>,
    payee_asset: Pubkey,
    mint: Pubkey,
) -> Result<()> {
    let a = &ctx.accounts;
    require_keys_eq!(a.mint_account.key(), mint, GateError::MintInvalid);
    require_keys_eq!(
        *a.mint_account.owner,
        a.token_program.key(),
        GateError::MintInvalid
    );
    parties::check_mint(&a.mint_account)?;
    parties::check_holdable_mint(&a.mint_account)?;
    let program = a.token_program.to_account_info();
    let space = token_account::account_size(&program, &a.mint_account)?;
    let bump = [ctx.bumps.escrow];
    let signer: &[&[u8]] = &[
        seeds::HOLDBACK_ESCROW,
        payee_asset.as_ref(),
        mint.as_ref(),
        &bump,
    ];
    pda_account::create_pda(&a.payer, &a.escrow, program.key, space, signer)?;
    invoke(
        &token_account::initialize_account3(program.key, a.escrow.key, &mint, &authority::ADDRESS),
        &[
            a.escrow.to_account_info(),
            a.mint_account.to_account_info(),
            program,
        ],
    )?;
    Ok(())
}
