//! The local stand-in for MPL Core: the agents' assets, created and transferred.
//!
//! **This is not MPL Core.** It is a small native program, loaded at MPL Core's program id
//! wherever the real one is not (see [`crate::native::program_test_on`]), that does the two
//! things trust-gate's world needs of MPL Core, with MPL Core's instruction encoding (a `u8`
//! tag, then Borsh arguments; an absent optional account is MPL Core's own id) and account
//! layout, so that the gate reads a live owner from a real `BaseAssetV1`:
//!
//! | instruction | accounts |
//! |---|---|
//! | `CreateV2` (tag 20): `data_state`, `name`, `uri`, no plugins | asset (S,W), collection (W, opt.), authority (S, opt.), payer (S,W), owner (opt.), update_authority (opt.), system_program, log_wrapper (opt.) |
//! | `TransferV1` (tag 14): no compression proof | asset (W), collection (opt.), payer (S,W), authority (S, opt.), new_owner, system_program (opt.), log_wrapper (opt.) |
//!
//! `CreateV2` writes `BaseAssetV1` — key 1, owner, update authority `Collection(collection)`
//! (or `Address(update_authority)`, else `Address(authority)`), name, uri, no `seq` — to an
//! account it creates owned by MPL Core. `TransferV1` lets the asset's owner (the authority,
//! else the payer) give it to `new_owner`; an asset in a collection needs that collection
//! passed.
//!
//! What it does not check (unverified against MPL Core, which the `externals` suite runs
//! instead where the fixture is present): plugins of any kind (refused), the collection's own
//! update authority and its size counters (the registry stand-in's collection is its own
//! look-alike), frozen assets, delegates. Errors carry MPL Core's codes
//! ([`CoreError`]); the differential tests compare the transfer's with the real program's.

use super::layout::asset;
use anchor_lang::prelude::*;
use anchor_lang::solana_program::entrypoint::ProgramResult;
use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
use anchor_lang::solana_program::{program::invoke, system_instruction, system_program};
use std::result::Result;
use trust_gate_program_common::external::{core_asset, ids};
use trust_gate_program_common::runtime::log;

/// MPL Core's instruction tags (its `MplAssetInstruction` enum, Borsh `u8`).
pub mod tags {
    pub const TRANSFER_V1: u8 = 14;
    pub const CREATE_V2: u8 = 20;
}

/// MPL Core's error codes (`MplCoreError`) for the failures the stand-in can have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum CoreError {
    /// 0: the system program account is not the system program.
    InvalidSystemProgram = 0,
    /// 1: instruction data or an asset that cannot be decoded.
    DeserializationError = 1,
    /// 19: the collection passed is not the asset's.
    InvalidCollection = 19,
    /// 23: what the stand-in does not implement (plugins, other instructions).
    NotAvailable = 23,
    /// 25: the asset is in a collection that was not passed.
    MissingCollection = 25,
    /// 26: nobody who may transfer the asset approved (the signer is not its owner).
    NoApprovals = 26,
}

fn fail(err: CoreError, why: &str) -> ProgramError {
    log(&format!("mpl core stand-in: {err:?}: {why}"));
    ProgramError::Custom(err as u32)
}

/// `CreateV2`'s arguments as the registry sends them: plugins must be absent.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, PartialEq, Eq)]
pub struct CreateV2Args {
    pub data_state: u8,
    pub name: String,
    pub uri: String,
    /// `Option<Vec<PluginAuthorityPair>>`: only `None` (0) is accepted.
    pub plugins: u8,
    /// `Option<Vec<ExternalPluginAdapterInitInfo>>`: only `None` (0) is accepted.
    pub external_plugin_adapters: u8,
}

/// `BaseAssetV1` as MPL Core serializes it, for an asset without plugins.
pub fn asset_data(
    owner: &Pubkey,
    update_authority: (u8, &Pubkey),
    name: &str,
    uri: &str,
) -> Vec<u8> {
    let mut d = vec![core_asset::KEY_ASSET_V1];
    d.extend_from_slice(owner.as_ref());
    d.push(update_authority.0);
    d.extend_from_slice(update_authority.1.as_ref());
    for s in [name, uri] {
        d.extend_from_slice(&(s.len() as u32).to_le_bytes());
        d.extend_from_slice(s.as_bytes());
    }
    d.push(0); // seq: None
    d
}

/// MPL Core's `TransferV1` of `asset` (in `collection`) to `new_owner`, signed by its owner,
/// who also pays; the same instruction for MPL Core and this stand-in.
pub fn transfer_v1(
    asset: &Pubkey,
    collection: &Pubkey,
    owner: &Pubkey,
    new_owner: &Pubkey,
) -> Instruction {
    let absent = AccountMeta::new_readonly(ids::MPL_CORE, false);
    Instruction {
        program_id: ids::MPL_CORE,
        accounts: vec![
            AccountMeta::new(*asset, false),
            AccountMeta::new_readonly(*collection, false),
            AccountMeta::new(*owner, true),
            absent.clone(),
            AccountMeta::new_readonly(*new_owner, false),
            absent.clone(),
            absent,
        ],
        data: vec![tags::TRANSFER_V1, 0],
    }
}

/// MPL Core's `UpdateAuthority::Address` tag.
const UPDATE_AUTHORITY_ADDRESS: u8 = 1;

pub fn process_instruction(
    _program_id: &Pubkey,
    accounts: &[AccountInfo],
    data: &[u8],
) -> ProgramResult {
    match data.split_first() {
        Some((&tags::CREATE_V2, rest)) => process_create_v2(accounts, rest),
        Some((&tags::TRANSFER_V1, rest)) => process_transfer_v1(accounts, rest),
        _ => Err(fail(
            CoreError::NotAvailable,
            "only CreateV2 and TransferV1 are implemented",
        )),
    }
}

/// Account `i`, or `None` when it is absent (MPL Core's id in its place, or missing).
fn optional<'s, 'a>(accounts: &'s [AccountInfo<'a>], i: usize) -> Option<&'s AccountInfo<'a>> {
    accounts.get(i).filter(|a| *a.key != ids::MPL_CORE)
}

fn required<'s, 'a>(
    accounts: &'s [AccountInfo<'a>],
    i: usize,
    name: &str,
) -> Result<&'s AccountInfo<'a>, ProgramError> {
    accounts.get(i).ok_or_else(|| {
        log(&format!("mpl core stand-in: missing account `{name}`"));
        ProgramError::NotEnoughAccountKeys
    })
}

fn signer(account: &AccountInfo, name: &str) -> ProgramResult {
    if account.is_signer {
        return Ok(());
    }
    log(&format!("mpl core stand-in: `{name}` must sign"));
    Err(ProgramError::MissingRequiredSignature)
}

fn process_create_v2(accounts: &[AccountInfo], data: &[u8]) -> ProgramResult {
    let args = CreateV2Args::try_from_slice(data)
        .map_err(|_| fail(CoreError::DeserializationError, "CreateV2 arguments"))?;
    if args.plugins != 0 || args.external_plugin_adapters != 0 {
        return Err(fail(
            CoreError::NotAvailable,
            "the stand-in creates assets without plugins",
        ));
    }
    let asset_account = required(accounts, 0, "asset")?;
    let collection = optional(accounts, 1);
    let authority = optional(accounts, 2);
    let payer = required(accounts, 3, "payer")?;
    let owner = optional(accounts, 4);
    let update_authority = optional(accounts, 5);
    let system = required(accounts, 6, "system_program")?;
    signer(asset_account, "asset")?;
    signer(payer, "payer")?;
    if let Some(a) = authority {
        signer(a, "authority")?;
    }
    if *system.key != system_program::ID {
        return Err(fail(CoreError::InvalidSystemProgram, "system_program"));
    }
    let authority_key = authority.unwrap_or(payer).key;
    let owner_key = owner.map_or(authority_key, |o| o.key);
    let update = match (collection, update_authority) {
        (Some(c), _) => {
            let d = c.try_borrow_data()?;
            if d.first() != Some(&super::layout::collection::KEY_COLLECTION_V1) {
                return Err(fail(CoreError::InvalidCollection, "not a collection"));
            }
            (asset::UPDATE_AUTHORITY_COLLECTION, c.key)
        }
        (None, Some(u)) => (UPDATE_AUTHORITY_ADDRESS, u.key),
        (None, None) => (UPDATE_AUTHORITY_ADDRESS, authority_key),
    };
    let bytes = asset_data(owner_key, update, &args.name, &args.uri);
    let lamports = Rent::get()?.minimum_balance(bytes.len());
    invoke(
        &system_instruction::create_account(
            payer.key,
            asset_account.key,
            lamports,
            bytes.len() as u64,
            &ids::MPL_CORE,
        ),
        &[payer.clone(), asset_account.clone(), system.clone()],
    )?;
    asset_account.try_borrow_mut_data()?.copy_from_slice(&bytes);
    log(&format!(
        "mpl core stand-in: created asset {} owned by {owner_key}",
        asset_account.key
    ));
    Ok(())
}

fn process_transfer_v1(accounts: &[AccountInfo], data: &[u8]) -> ProgramResult {
    if data != [0] {
        return Err(fail(
            CoreError::NotAvailable,
            "TransferV1 takes no compression proof here",
        ));
    }
    let asset_account = required(accounts, 0, "asset")?;
    let collection = optional(accounts, 1);
    let payer = required(accounts, 2, "payer")?;
    let authority = optional(accounts, 3).unwrap_or(payer);
    let new_owner = required(accounts, 4, "new_owner")?;
    signer(payer, "payer")?;
    signer(authority, "authority")?;
    let mut d = asset_account.try_borrow_mut_data()?;
    let owner = core_asset::owner(asset_account.owner, &d)
        .filter(|_| d.len() >= asset::HEAD_LEN)
        .ok_or_else(|| fail(CoreError::DeserializationError, "not an MPL Core asset"))?;
    if d[asset::UPDATE_AUTHORITY_KIND] == asset::UPDATE_AUTHORITY_COLLECTION {
        let Some(c) = collection else {
            return Err(fail(
                CoreError::MissingCollection,
                "the asset is in a collection",
            ));
        };
        if d[asset::COLLECTION..asset::COLLECTION + 32] != c.key.to_bytes() {
            return Err(fail(
                CoreError::InvalidCollection,
                "not the asset's collection",
            ));
        }
    }
    if *authority.key != owner {
        return Err(fail(
            CoreError::NoApprovals,
            "only the asset's owner may transfer it",
        ));
    }
    d[core_asset::OWNER..core_asset::OWNER + 32].copy_from_slice(new_owner.key.as_ref());
    log(&format!(
        "mpl core stand-in: transferred asset {} from {owner} to {}",
        asset_account.key, new_owner.key
    ));
    Ok(())
}
