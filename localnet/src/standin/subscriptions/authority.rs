//! A user's `SubscriptionAuthority` for a mint: created (or its SPL approval refreshed),
//! closed, revoked. The authority is the one SPL delegate of the user's associated token
//! account, approved for `u64::MAX`; its `init_id` is the slot it was created in.

use super::{
    err, fail_runtime, no_sponsor, require_associated, require_mint, require_owned,
    require_system_program, require_token_account, require_token_program, SubscriptionsError,
};
use crate::standin::{create_account, require_signer, require_writable};
use anchor_lang::prelude::*;
use anchor_lang::solana_program::entrypoint::ProgramResult;
use anchor_lang::solana_program::program::invoke;
use std::result::Result;
use trust_gate_program_common::subscriptions::{at, discriminator, seeds, SubscriptionAuthority};

type E = SubscriptionsError;

/// The canonical address and bump of `user`'s authority for `mint`.
pub fn address(user: &Pubkey, mint: &Pubkey, program_id: &Pubkey) -> (Pubkey, u8) {
    Pubkey::find_program_address(
        &[seeds::SUBSCRIPTION_AUTHORITY, user.as_ref(), mint.as_ref()],
        program_id,
    )
}

/// The authority stored in `account`: 106 bytes (`InvalidAccountData`) with its
/// discriminator (`InvalidAccountDiscriminator`).
pub(crate) fn load(account: &AccountInfo) -> Result<SubscriptionAuthority, ProgramError> {
    let data = account.try_borrow_data()?;
    if data.len() != SubscriptionAuthority::LEN {
        return Err(err(E::InvalidAccountData, "not an authority's size"));
    }
    SubscriptionAuthority::read(&data)
        .ok_or_else(|| err(E::InvalidAccountDiscriminator, "not an authority"))
}

/// The program's check of an authority passed to it: owned by it (else
/// `InvalidSubscriptionAuthorityPda`: a closed authority), its size and discriminator.
pub(crate) fn require_open(account: &AccountInfo, program_id: &Pubkey) -> ProgramResult {
    if account.owner != program_id {
        return Err(err(
            E::InvalidSubscriptionAuthorityPda,
            "the authority is not open",
        ));
    }
    load(account).map(|_| ())
}

/// `initialize_subscription_authority`: user (S,W), authority (W), mint, user's associated
/// token account (W), system program, token program.
pub fn initialize(program_id: &Pubkey, accounts: &[AccountInfo]) -> ProgramResult {
    let [user, authority, mint, user_ata, system, token_program, rest @ ..] = accounts else {
        return Err(err(E::NotEnoughAccountKeys, "six accounts"));
    };
    require_signer::<E>(user, "user")?;
    require_writable::<E>(user, "user")?;
    require_writable::<E>(authority, "subscription_authority")?;
    require_writable::<E>(user_ata, "user_ata")?;
    require_mint(mint, token_program)?;
    require_token_account(user_ata, token_program)?;
    require_token_program(token_program)?;
    require_system_program(system)?;
    no_sponsor(rest)?;

    let (expected, bump) = address(user.key, mint.key, program_id);
    if *authority.key != expected {
        return Err(err(
            E::InvalidSubscriptionAuthorityPda,
            "not the user's authority for the mint",
        ));
    }
    // Created once; initializing it again only refreshes the approval (the same init_id).
    if authority.data_is_empty() {
        let bump_seed = [bump];
        let signer = [
            seeds::SUBSCRIPTION_AUTHORITY,
            user.key.as_ref(),
            mint.key.as_ref(),
            &bump_seed,
        ];
        create_account::<E>(
            user,
            authority,
            system,
            SubscriptionAuthority::LEN,
            program_id,
            &signer,
            "subscription_authority",
        )?;
        let mut data = authority.try_borrow_mut_data()?;
        data[0] = discriminator::SUBSCRIPTION_AUTHORITY;
        data[at::authority::USER..at::authority::USER + 32].copy_from_slice(user.key.as_ref());
        data[at::authority::MINT..at::authority::MINT + 32].copy_from_slice(mint.key.as_ref());
        // The user paid the rent: no sponsor in the stand-in.
        data[at::authority::PAYER..at::authority::PAYER + 32].copy_from_slice(user.key.as_ref());
        data[at::authority::BUMP] = bump;
        let init_id = Clock::get()?.slot as i64;
        data[at::authority::INIT_ID..at::authority::INIT_ID + 8]
            .copy_from_slice(&init_id.to_le_bytes());
    }
    require_owned(user_ata, user.key, mint.key)?;
    require_associated(user_ata, user.key, mint.key, token_program.key)?;
    let approve = super::approve(
        token_program.key,
        user_ata.key,
        authority.key,
        user.key,
        u64::MAX,
    );
    invoke(
        &approve,
        &[
            user_ata.clone(),
            authority.clone(),
            user.clone(),
            token_program.clone(),
        ],
    )
}

/// `close_subscription_authority`: user (S,W), authority (W). Its rent back to the user.
pub fn close(program_id: &Pubkey, accounts: &[AccountInfo]) -> ProgramResult {
    let [user, authority, rest @ ..] = accounts else {
        return Err(err(E::NotEnoughAccountKeys, "two accounts"));
    };
    require_signer::<E>(user, "user")?;
    require_writable::<E>(user, "user")?;
    require_writable::<E>(authority, "subscription_authority")?;
    if authority.owner != program_id {
        return Err(fail_runtime(
            ProgramError::InvalidAccountOwner,
            "the authority is not the program's",
        ));
    }
    close_authority(user, authority, rest)
}

/// Closes an open authority to its recorded payer, the user: only the user may.
fn close_authority(
    user: &AccountInfo,
    authority: &AccountInfo,
    rest: &[AccountInfo],
) -> ProgramResult {
    let stored = load(authority)?;
    if stored.user != *user.key {
        return Err(err(E::Unauthorized, "not the authority's user"));
    }
    let canonical = Pubkey::create_program_address(
        &[
            seeds::SUBSCRIPTION_AUTHORITY,
            stored.user.as_ref(),
            stored.mint.as_ref(),
            &[stored.bump],
        ],
        authority.owner,
    )
    .ok();
    if canonical != Some(*authority.key) {
        return Err(err(
            E::InvalidSubscriptionAuthorityPda,
            "not the authority's address",
        ));
    }
    if stored.payer != *user.key {
        // A sponsor's rent would go to the `receiver` account.
        return match rest.first() {
            None => Err(err(E::NotEnoughAccountKeys, "a sponsor's receiver")),
            Some(_) => no_sponsor(rest),
        };
    }
    super::close(authority, user)
}

/// `revoke_subscription_authority`: user (S,W), user's associated token account (W), mint,
/// token program, authority (W). Clears the SPL approval when it is the authority's, then
/// closes the authority when it is open.
pub fn revoke(program_id: &Pubkey, accounts: &[AccountInfo]) -> ProgramResult {
    let [user, user_ata, mint, token_program, authority, rest @ ..] = accounts else {
        return Err(err(E::NotEnoughAccountKeys, "five accounts"));
    };
    require_signer::<E>(user, "user")?;
    require_writable::<E>(user, "user")?;
    require_writable::<E>(user_ata, "user_ata")?;
    require_token_program(token_program)?;
    require_mint(mint, token_program)?;
    require_token_account(user_ata, token_program)?;
    require_writable::<E>(authority, "subscription_authority")?;

    require_owned(user_ata, user.key, mint.key)?;
    let (expected, _) = address(user.key, mint.key, program_id);
    let delegate = delegate_of(user_ata)?;
    require_associated(user_ata, user.key, mint.key, token_program.key)?;
    if delegate == Some(expected) {
        let revoke = super::revoke_delegate(token_program.key, user_ata.key, user.key);
        invoke(
            &revoke,
            &[user_ata.clone(), user.clone(), token_program.clone()],
        )?;
    }
    if *authority.key != expected {
        return Err(err(
            E::InvalidSubscriptionAuthorityPda,
            "not the user's authority for the mint",
        ));
    }
    if authority.owner == program_id && !authority.data_is_empty() {
        close_authority(user, authority, rest)?;
    }
    Ok(())
}

/// A token account's SPL delegate: the option tag at 72, the key at 76.
fn delegate_of(account: &AccountInfo) -> Result<Option<Pubkey>, ProgramError> {
    let data = account.try_borrow_data()?;
    let (Some(tag), Some(key)) = (data.get(72..76), crate::standin::key_at(&data, 76)) else {
        return Err(err(E::InvalidAccountData, "too short for a delegate"));
    };
    Ok(tag.iter().any(|b| *b != 0).then_some(key))
}
