use crate::errors::PolicyVaultError;
use crate::events::PayeeListEdited;
use crate::state::{seeds, PayeeList, PolicyAccount, PolicyAuthority, MAX_PAYEE_LIST_ENTRIES};
use anchor_lang::prelude::*;
use anchor_lang::system_program;
use trust_gate_program_common::runtime;

/// The arguments of `edit_payee_list`.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, PartialEq, Eq)]
pub struct EditPayeeListArgs {
    /// The agent's MPL Core asset, whose authority's members edit.
    pub asset: Pubkey,
    /// The asset's policy that names the list account.
    pub policy_id: u32,
    /// Payees to add, after the removals (those already listed are skipped).
    pub add: Vec<Pubkey>,
    /// Payees to remove (those not listed are skipped). `add` and `remove` are not both
    /// empty and hold no default key (`PayeeListEditInvalid`).
    pub remove: Vec<Pubkey>,
}

#[derive(Accounts)]
#[instruction(args: EditPayeeListArgs)]
pub struct EditPayeeList<'info> {
    /// A member; pays for the list's growth and receives the rent its shrinking frees.
    /// Further member signers follow as remaining accounts.
    #[account(mut)]
    pub member: Signer<'info>,
    #[account(seeds = [seeds::POLICY_AUTHORITY, args.asset.as_ref()], bump = authority.bump)]
    pub authority: Account<'info, PolicyAuthority>,
    /// The policy that names the list (the asset and id it stores, compared in the handler,
    /// stand for its seeds). The one instruction that names the policy as an `Account`, so
    /// the IDL describes its layout.
    pub policy: Box<Account<'info, PolicyAccount>>,
    /// The policy's PayeeList (the address the policy names, compared in the handler).
    #[account(mut)]
    pub payee_list: Account<'info, PayeeList>,
    pub system_program: Program<'info, System>,
    /// The agent's MPL Core asset: its live owner must be the authority's owner.
    /// CHECK: address and owner checked by `PolicyAuthority::require_threshold`.
    pub agent_asset: UncheckedAccount<'info>,
}

/// Adds and removes payees of a policy's list account; needs `threshold` distinct members.
/// The list's meaning (allow or deny) is the policy's and does not change; the account grows
/// or shrinks to fit its entries, the member paying or receiving the difference in rent.
pub fn edit_payee_list(ctx: Context<EditPayeeList>, args: EditPayeeListArgs) -> Result<()> {
    let EditPayeeListArgs {
        asset,
        policy_id,
        add,
        remove,
    } = args;
    let nothing = add.is_empty() && remove.is_empty();
    let default_key = add.iter().chain(&remove).any(|k| *k == Pubkey::default());
    require!(
        !nothing && !default_key,
        PolicyVaultError::PayeeListEditInvalid
    );
    let a = &ctx.accounts;
    let lead = a.member.key();
    let signers = a
        .authority
        .require_threshold(&a.agent_asset, &lead, ctx.remaining_accounts)?;
    let policy = &a.policy;
    require!(policy.is_for(&asset, policy_id), ErrorCode::ConstraintSeeds);
    require!(!policy.is_retired(), PolicyVaultError::PolicyRetired);
    let rules = policy
        .rules()
        .filter(|r| r.has_list_account())
        .ok_or(PolicyVaultError::PolicyHasNoPayeeList)?;
    require_keys_eq!(
        a.payee_list.key(),
        rules.payee_list,
        PolicyVaultError::PayeeListMismatch
    );

    let list = &mut ctx.accounts.payee_list;
    let (added, removed) = list.edit(&add, &remove);
    let entries = list.payees.len();
    require!(
        entries <= MAX_PAYEE_LIST_ENTRIES,
        PolicyVaultError::PayeeListFull
    );

    // Rent for the new size: the member pays what is missing, or gets back what is freed.
    // Anchor writes the edited list into the resized account on exit.
    let a = &ctx.accounts;
    let info = a.payee_list.to_account_info();
    let space = PayeeList::space(entries);
    let rent = Rent::get()?.minimum_balance(space);
    let held = info.lamports();
    if rent > held {
        system_program::transfer(
            CpiContext::new(
                a.system_program.key(),
                system_program::Transfer {
                    from: a.member.to_account_info(),
                    to: info.clone(),
                },
            ),
            rent - held,
        )?;
    } else if held > rent {
        let member = a.member.to_account_info();
        **info.try_borrow_mut_lamports()? = rent;
        let credited = member
            .lamports()
            .checked_add(held - rent)
            .ok_or(ProgramError::ArithmeticOverflow)?;
        **member.try_borrow_mut_lamports()? = credited;
    }
    info.resize(space)?;

    // Every count is at most 256 (the list's bound) or an edit's, which fits a transaction.
    runtime::emit(&PayeeListEdited {
        asset,
        policy_id,
        added: added as u16,
        removed: removed as u16,
        entries: entries as u16,
        by: lead,
        signers,
    });
    Ok(())
}
