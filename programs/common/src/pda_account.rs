//! Creating program accounts at PDAs without Anchor's `init`.
//!
//! Anchor 1.2's `init` creates an address that already holds lamports with the system
//! program's `CreateAccountAllowPrefund`, which runtimes without that feature reject. Anyone
//! can send lamports to a predictable PDA, so with `init` a stranger could block an account's
//! creation for good: a payment's feedback log (its address is derived from the payment id),
//! an agent's policy authority, a capability namespace. These helpers top the account up,
//! allocate and assign it instead, which works on every runtime.

use anchor_lang::prelude::*;
use anchor_lang::solana_program::system_instruction;
use anchor_lang::system_program::{self, Allocate, Assign, Transfer};
use anchor_lang::{AccountDeserialize, AccountSerialize};

/// Creates the account `target` (a PDA signed for by `signer_seeds`) with `space` bytes owned
/// by `owner`, paid by `payer`. Fails with `AccountAlreadyInitialized` when the address
/// already holds an account (data, or an owner other than the system program).
pub fn create_pda<'info>(
    payer: &AccountInfo<'info>,
    target: &AccountInfo<'info>,
    owner: &Pubkey,
    space: usize,
    signer_seeds: &[&[u8]],
) -> Result<()> {
    if target.owner != &system_program::ID || !target.data_is_empty() {
        return Err(ProgramError::AccountAlreadyInitialized.into());
    }
    let required = Rent::get()?.minimum_balance(space);
    let signers = [signer_seeds];
    let current = target.lamports();
    if current == 0 {
        let ix = system_instruction::create_account(
            payer.key,
            target.key,
            required,
            space as u64,
            owner,
        );
        // Without `invoke_signed`'s scan of the accounts' RefCells: the caller holds no
        // borrow of either (about 120 compute units less than Anchor's wrapper).
        crate::cpi::invoke_signed(&ix, &[payer, target], &signers)?;
        return Ok(());
    }
    // Pre-funded by someone: keep their lamports, add what rent exemption still needs.
    top_up(payer, target, required)?;
    system_program::allocate(
        CpiContext::new_with_signer(
            system_program::ID,
            Allocate {
                account_to_allocate: target.clone(),
            },
            &signers,
        ),
        space as u64,
    )?;
    system_program::assign(
        CpiContext::new_with_signer(
            system_program::ID,
            Assign {
                account_to_assign: target.clone(),
            },
            &signers,
        ),
        owner,
    )
}

/// Moves every lamport of the program-owned `account` to `to` and gives the emptied account
/// back to the system program (as Anchor's `close` constraint does): the runtime removes it
/// at the end of the transaction, and nothing of it can be read or revived. Returns the
/// lamports moved.
pub fn close(account: &AccountInfo, to: &AccountInfo) -> Result<u64> {
    let lamports = account.lamports();
    let credited = to
        .lamports()
        .checked_add(lamports)
        .ok_or(ProgramError::ArithmeticOverflow)?;
    **to.try_borrow_mut_lamports()? = credited;
    **account.try_borrow_mut_lamports()? = 0;
    account.assign(&system_program::ID);
    account.resize(0)?;
    Ok(lamports)
}

/// Writes `value` (discriminator + Borsh) into `target`'s data.
pub fn store<T: AccountSerialize>(target: &AccountInfo, value: &T) -> Result<()> {
    let mut data = target.try_borrow_mut_data()?;
    value.try_serialize(&mut &mut data[..])
}

/// Stores `value` into the program-owned `target`, first growing it to `space` bytes (`payer`
/// topping its rent up) when an earlier layout left it shorter: how an account whose layout
/// gained trailing fields is replaced without a second version of it.
pub fn store_grown<'info, T: AccountSerialize>(
    payer: &AccountInfo<'info>,
    target: &AccountInfo<'info>,
    space: usize,
    value: &T,
) -> Result<()> {
    if target.data_len() < space {
        top_up(payer, target, Rent::get()?.minimum_balance(space))?;
        target.resize(space)?;
    }
    store(target, value)
}

/// Transfers from `payer` what `target` lacks of `required` lamports, if anything.
fn top_up<'info>(
    payer: &AccountInfo<'info>,
    target: &AccountInfo<'info>,
    required: u64,
) -> Result<()> {
    let missing = required.saturating_sub(target.lamports());
    if missing == 0 {
        return Ok(());
    }
    system_program::transfer(
        CpiContext::new(
            system_program::ID,
            Transfer {
                from: payer.clone(),
                to: target.clone(),
            },
        ),
        missing,
    )
}

/// Creates `target` for `value` (owned by `T`'s program) and stores it.
pub fn init<'info, T: AccountSerialize + Owner>(
    payer: &AccountInfo<'info>,
    target: &AccountInfo<'info>,
    space: usize,
    signer_seeds: &[&[u8]],
    value: &T,
) -> Result<()> {
    create_pda(payer, target, &T::owner(), space, signer_seeds)?;
    store(target, value)
}

/// The account stored at `target` when it exists (owned by `T`'s program), else `None`.
pub fn load<T: AccountDeserialize + Owner>(target: &AccountInfo) -> Result<Option<T>> {
    if target.owner != &T::owner() {
        return Ok(None);
    }
    let data = target.try_borrow_data()?;
    T::try_deserialize(&mut &data[..]).map(Some)
}

/// The account of type `T` at `target`, checked as Anchor's `Account::try_from` checks it
/// (the same errors: not initialized, owned by another program, another discriminator), for a
/// handler that writes what changes back in place rather than have Anchor serialize the
/// whole account again on exit.
pub fn read<T: AccountDeserialize + Owner>(target: &AccountInfo) -> Result<T> {
    check_owner(target, &T::owner())?;
    let data = target.try_borrow_data()?;
    T::try_deserialize(&mut &data[..])
}

/// That `target` is an account of `owner`, as Anchor's `Account` checks it before reading it:
/// `AccountNotInitialized` for an empty address, `AccountOwnedByWrongProgram` otherwise.
pub fn check_owner(target: &AccountInfo, owner: &Pubkey) -> Result<()> {
    if target.owner == &system_program::ID && target.lamports() == 0 {
        return Err(ErrorCode::AccountNotInitialized.into());
    }
    if target.owner != owner {
        return Err(Error::from(ErrorCode::AccountOwnedByWrongProgram)
            .with_pubkeys((*target.owner, *owner)));
    }
    Ok(())
}
