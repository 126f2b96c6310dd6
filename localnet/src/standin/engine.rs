//! The reputation engine stand-in (loaded at `ids::REPUTATION_ENGINE`). Not the real engine:
//! see the [module docs of `standin`](super).
//!
//! Instructions (Anchor layout: 8-byte discriminator, then Borsh arguments):
//!
//! | instruction | discriminator | accounts |
//! |---|---|---|
//! | `initialize_config(authority: Pubkey)` (localnet-only) | `global:initialize_config` | payer (S,W), atom_config (W), system_program |
//! | `initialize_stats()` | `global:initialize_stats` | owner (S,W), asset, collection, atom_config, atom_stats (W), system_program |
//! | `update_stats(client_hash: [u8; 32], score: u8)` (CPI only) | `global:update_stats` | registry CPI authority (S), atom_config, atom_stats (W) |
//! | `set_stats(tier_immediate: u8, tier_confirmed: u8, risk_score: u8, confidence: u16)` (localnet-only) | `global:set_stats` | authority (S), atom_config, atom_stats (W) |
//!
//! Accounts:
//! - `AtomConfig` (`account:AtomConfig`, PDA `["atom_config"]`, [`super::layout::atom_config`]):
//!   8..40 authority (may `set_stats`), 40 bump;
//! - `AtomStats` (`account:AtomStats`, PDA `["atom_stats", asset]`, 561 bytes): the offsets of
//!   `external::atom_stats` (collection, asset, risk 549, tier immediate 551, tier confirmed
//!   555, confidence 557, schema 1 at 560) and the stand-in's bookkeeping at 72..549
//!   ([`super::layout::stats_book`]).
//!
//! `initialize_stats` requires the asset to be a stand-in asset (registry-owned, key byte 1),
//! the signer to be its owner (asset bytes 1..33) and the collection to be the asset's.
//!
//! # The tier model
//!
//! Every `update_stats(client_hash, score)` (forwarded by the registry's `give_feedback`):
//! - counts one feedback; a score ≥ 60 is *positive*, a score < 40 is *negative*;
//! - records the client in a table of up to 8 distinct clients (keccak256 of the client key,
//!   its feedbacks and its positive feedbacks). A 9th and later distinct client still counts
//!   in the totals but not in the table: tiers cap at 4, so 8 distinct clients are plenty.
//!
//! The model's values are then
//! - tier immediate = min(4, distinct clients with ≥ 1 positive feedback);
//! - tier confirmed = min(tier immediate, distinct clients with ≥ 2 positive feedbacks);
//! - risk = min(100, 10 × negative feedbacks);
//! - confidence = min(10000, 1000 × feedbacks).
//!
//! `set_stats` writes the four public fields verbatim and also records them as a *floor*;
//! `update_stats` publishes, field by field, max(floor, model). Without `set_stats` the floor
//! is zero and the fields are the model's; a seeded demo tier never drops because feedback
//! arrives later.

use super::layout::{args, asset, atom_config, discriminators, stats_book, tier_model};
use super::{
    create_account, decode_args, fail, key_at, require_signer, require_writable,
    split_discriminator, Accounts, StandinError,
};
use anchor_lang::prelude::*;
// The prelude's `Result` is Anchor's single-parameter alias; the programs return `ProgramError`.
use anchor_lang::solana_program::entrypoint::ProgramResult;
use anchor_lang::solana_program::system_program;
use std::result::Result;
use trust_gate_program_common::external::{
    self, atom_config_pda,
    atom_stats::{self, Stats},
    atom_stats_pda, ids, registry_cpi_authority_pda, seeds,
};
use trust_gate_program_common::runtime::log;

/// The engine stand-in's errors, returned as `ProgramError::Custom(code)`. Numbered from 6100
/// (not Anchor's 6000) so that an engine failure surfacing through the registry's CPI cannot
/// be mistaken for a registry error. The numbering is stable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum EngineError {
    /// 6100: unknown discriminator, or arguments that do not decode.
    InvalidInstructionData = 6100,
    /// 6101: fewer accounts than the instruction needs.
    NotEnoughAccounts = 6101,
    /// 6102: an account that must sign did not (including the registry CPI authority of
    /// `update_stats`, which only the registry can sign for).
    MissingSigner = 6102,
    /// 6103: an account the instruction writes was passed read-only.
    AccountNotWritable = 6103,
    /// 6104: an account is not at its expected address (`atom_config` / `atom_stats` PDA,
    /// system program).
    InvalidAddress = 6104,
    /// 6105: an account the instruction creates already exists.
    AlreadyInitialized = 6105,
    /// 6106: `atom_config` or `atom_stats` is not an initialized engine account.
    InvalidAccountData = 6106,
    /// 6107: the asset is not a registry stand-in asset.
    InvalidAsset = 6107,
    /// 6108: `initialize_stats` signed by someone other than the asset's owner.
    NotAssetOwner = 6108,
    /// 6109: the collection is not the asset's collection.
    CollectionMismatch = 6109,
    /// 6110: `set_stats` signed by someone other than the config authority, or
    /// `update_stats` called with something other than the registry's CPI authority.
    Unauthorized = 6110,
    /// 6111: a tier above 4.
    InvalidTier = 6111,
    /// 6112: a confidence above 10000 basis points.
    InvalidConfidence = 6112,
    /// 6113: an `update_stats` score above 100 (the registry already bounds it; the engine
    /// does not trust its caller's arguments).
    InvalidScore = 6113,
    /// 6114: a counter would overflow.
    Overflow = 6114,
}

impl StandinError for EngineError {
    const PROGRAM: &'static str = "engine";
    const NOT_ENOUGH_ACCOUNTS: Self = Self::NotEnoughAccounts;
    const MISSING_SIGNER: Self = Self::MissingSigner;
    const NOT_WRITABLE: Self = Self::AccountNotWritable;
    const ALREADY_INITIALIZED: Self = Self::AlreadyInitialized;
    const INVALID_INSTRUCTION_DATA: Self = Self::InvalidInstructionData;
    fn code(self) -> u32 {
        self as u32
    }
}

impl From<EngineError> for ProgramError {
    fn from(err: EngineError) -> Self {
        ProgramError::Custom(err as u32)
    }
}

type E = EngineError;

/// The engine stand-in's entrypoint.
pub fn process_instruction(
    _program_id: &Pubkey,
    accounts: &[AccountInfo],
    data: &[u8],
) -> ProgramResult {
    let (discriminator, rest) = split_discriminator::<E>(data)?;
    match discriminator {
        discriminators::INITIALIZE_CONFIG => {
            initialize_config(accounts, decode_args::<E, _>(rest, "initialize_config")?)
        }
        external::discriminators::INITIALIZE_STATS => {
            if !rest.is_empty() {
                return Err(fail(
                    E::InvalidInstructionData,
                    "initialize_stats takes no arguments",
                ));
            }
            initialize_stats(accounts)
        }
        discriminators::UPDATE_STATS => {
            update_stats(accounts, decode_args::<E, _>(rest, "update_stats")?)
        }
        discriminators::SET_STATS => set_stats(accounts, decode_args::<E, _>(rest, "set_stats")?),
        _ => Err(fail(
            E::InvalidInstructionData,
            "unknown instruction discriminator",
        )),
    }
}

fn require_address(account: &AccountInfo, expected: &Pubkey, name: &str) -> ProgramResult {
    if account.key == expected {
        Ok(())
    } else {
        Err(fail(
            E::InvalidAddress,
            &format!("`{name}` is not at {expected}"),
        ))
    }
}

/// Checks `atom_config` and returns its authority.
fn load_config(config: &AccountInfo) -> Result<Pubkey, ProgramError> {
    require_address(config, &atom_config_pda().0, "atom_config")?;
    let d = config.try_borrow_data()?;
    if *config.owner != ids::REPUTATION_ENGINE
        || d.len() != atom_config::LEN
        || d[..8] != discriminators::ATOM_CONFIG
    {
        return Err(fail(
            E::InvalidAccountData,
            "atom_config is not initialized",
        ));
    }
    key_at(&d, atom_config::AUTHORITY)
        .ok_or_else(|| fail(E::InvalidAccountData, "atom_config too short"))
}

/// Checks that `stats` is an initialized AtomStats of this engine.
fn require_stats(stats: &AccountInfo) -> ProgramResult {
    let d = stats.try_borrow_data()?;
    if *stats.owner != ids::REPUTATION_ENGINE
        || d.len() != atom_stats::LEN
        || d[..8] != external::discriminators::ATOM_STATS
    {
        return Err(fail(
            E::InvalidAccountData,
            "atom_stats is not an initialized AtomStats",
        ));
    }
    Ok(())
}

fn initialize_config(accounts: &[AccountInfo], args: args::InitializeConfigArgs) -> ProgramResult {
    let mut it = Accounts::new(accounts);
    let payer = it.next::<E>("payer")?;
    let config = it.next::<E>("atom_config")?;
    let system = it.next::<E>("system_program")?;

    require_signer::<E>(payer, "payer")?;
    require_writable::<E>(payer, "payer")?;
    require_writable::<E>(config, "atom_config")?;
    let (config_key, bump) = atom_config_pda();
    require_address(config, &config_key, "atom_config")?;
    require_address(system, &system_program::ID, "system_program")?;
    create_account::<E>(
        payer,
        config,
        system,
        atom_config::LEN,
        &ids::REPUTATION_ENGINE,
        &[seeds::ATOM_CONFIG, &[bump]],
        "atom_config",
    )?;
    let mut d = config.try_borrow_mut_data()?;
    d[..8].copy_from_slice(&discriminators::ATOM_CONFIG);
    d[atom_config::AUTHORITY..atom_config::AUTHORITY + 32].copy_from_slice(args.authority.as_ref());
    d[atom_config::BUMP] = bump;
    log(&format!(
        "engine stand-in: initialized, authority {}",
        args.authority
    ));
    Ok(())
}

fn initialize_stats(accounts: &[AccountInfo]) -> ProgramResult {
    let mut it = Accounts::new(accounts);
    let owner = it.next::<E>("owner")?;
    let asset_account = it.next::<E>("asset")?;
    let collection = it.next::<E>("collection")?;
    let config = it.next::<E>("atom_config")?;
    let stats = it.next::<E>("atom_stats")?;
    let system = it.next::<E>("system_program")?;

    require_signer::<E>(owner, "owner")?;
    require_writable::<E>(owner, "owner")?;
    require_writable::<E>(stats, "atom_stats")?;
    {
        let d = asset_account.try_borrow_data()?;
        if *asset_account.owner != ids::AGENT_REGISTRY
            || d.len() != asset::LEN
            || d[asset::KEY] != asset::KEY_ASSET_V1
        {
            return Err(fail(
                E::InvalidAsset,
                "the asset is not a registry stand-in asset",
            ));
        }
        if key_at(&d, asset::OWNER) != Some(*owner.key) {
            return Err(fail(
                E::NotAssetOwner,
                "only the asset's owner may initialize its stats",
            ));
        }
        if d[asset::UPDATE_AUTHORITY_KIND] != asset::UPDATE_AUTHORITY_COLLECTION
            || key_at(&d, asset::COLLECTION) != Some(*collection.key)
        {
            return Err(fail(
                E::CollectionMismatch,
                "the collection is not the asset's collection",
            ));
        }
    }
    load_config(config)?;
    let (stats_key, bump) = atom_stats_pda(asset_account.key);
    require_address(stats, &stats_key, "atom_stats")?;
    require_address(system, &system_program::ID, "system_program")?;
    create_account::<E>(
        owner,
        stats,
        system,
        atom_stats::LEN,
        &ids::REPUTATION_ENGINE,
        &[seeds::ATOM_STATS, asset_account.key.as_ref(), &[bump]],
        "atom_stats",
    )?;
    let mut d = stats.try_borrow_mut_data()?;
    d[..8].copy_from_slice(&external::discriminators::ATOM_STATS);
    d[atom_stats::COLLECTION..atom_stats::COLLECTION + 32].copy_from_slice(collection.key.as_ref());
    d[atom_stats::ASSET..atom_stats::ASSET + 32].copy_from_slice(asset_account.key.as_ref());
    d[stats_book::BUMP] = bump;
    d[atom_stats::SCHEMA_VERSION] = atom_stats::SUPPORTED_SCHEMA;
    log(&format!(
        "engine stand-in: stats initialized for asset {}",
        asset_account.key
    ));
    Ok(())
}

fn update_stats(accounts: &[AccountInfo], args: args::UpdateStatsArgs) -> ProgramResult {
    let mut it = Accounts::new(accounts);
    let authority = it.next::<E>("registry CPI authority")?;
    let config = it.next::<E>("atom_config")?;
    let stats = it.next::<E>("atom_stats")?;

    if *authority.key != registry_cpi_authority_pda().0 {
        return Err(fail(
            E::Unauthorized,
            "update_stats is only callable by the registry",
        ));
    }
    require_signer::<E>(authority, "registry CPI authority")?;
    require_writable::<E>(stats, "atom_stats")?;
    load_config(config)?;
    require_stats(stats)?;
    let mut d = stats.try_borrow_mut_data()?;
    let published = record_feedback(&mut d, &args.client_hash, args.score)
        .map_err(|e| fail(e, "update_stats"))?;
    log(&format!(
        "engine stand-in: stats now tier {}/{}, risk {}, confidence {}",
        published.tier_immediate,
        published.tier_confirmed,
        published.risk_score,
        published.confidence
    ));
    Ok(())
}

fn set_stats(accounts: &[AccountInfo], args: args::SetStatsArgs) -> ProgramResult {
    let mut it = Accounts::new(accounts);
    let authority = it.next::<E>("authority")?;
    let config = it.next::<E>("atom_config")?;
    let stats = it.next::<E>("atom_stats")?;

    require_signer::<E>(authority, "authority")?;
    require_writable::<E>(stats, "atom_stats")?;
    if load_config(config)? != *authority.key {
        return Err(fail(
            E::Unauthorized,
            "only the config authority may set stats",
        ));
    }
    if args.tier_immediate > atom_stats::MAX_TIER || args.tier_confirmed > atom_stats::MAX_TIER {
        return Err(fail(E::InvalidTier, "tiers range over 0..=4"));
    }
    if args.confidence > tier_model::MAX_CONFIDENCE {
        return Err(fail(
            E::InvalidConfidence,
            "confidence ranges over 0..=10000",
        ));
    }
    require_stats(stats)?;
    let stats_value = Stats {
        tier_immediate: args.tier_immediate,
        tier_confirmed: args.tier_confirmed,
        risk_score: args.risk_score,
        confidence: args.confidence,
    };
    let mut d = stats.try_borrow_mut_data()?;
    write_public(&mut d, &stats_value);
    d[stats_book::FLOOR_TIER_IMMEDIATE] = args.tier_immediate;
    d[stats_book::FLOOR_TIER_CONFIRMED] = args.tier_confirmed;
    d[stats_book::FLOOR_RISK] = args.risk_score;
    d[stats_book::FLOOR_CONFIDENCE..stats_book::FLOOR_CONFIDENCE + 2]
        .copy_from_slice(&args.confidence.to_le_bytes());
    log(&format!("engine stand-in: stats set to {stats_value:?}"));
    Ok(())
}

/// Writes the fields the gate reads.
fn write_public(d: &mut [u8], s: &Stats) {
    d[atom_stats::TIER_IMMEDIATE] = s.tier_immediate;
    d[atom_stats::TIER_CONFIRMED] = s.tier_confirmed;
    d[atom_stats::RISK_SCORE] = s.risk_score;
    d[atom_stats::CONFIDENCE..atom_stats::CONFIDENCE + 2]
        .copy_from_slice(&s.confidence.to_le_bytes());
}

fn read_u64(d: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[at..at + 8]);
    u64::from_le_bytes(b)
}

fn read_u16(d: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([d[at], d[at + 1]])
}

fn add_u64(d: &mut [u8], at: usize, by: u64) -> Result<(), EngineError> {
    let v = read_u64(d, at).checked_add(by).ok_or(E::Overflow)?;
    d[at..at + 8].copy_from_slice(&v.to_le_bytes());
    Ok(())
}

fn add_u16(d: &mut [u8], at: usize, by: u16) -> Result<(), EngineError> {
    let v = read_u16(d, at).checked_add(by).ok_or(E::Overflow)?;
    d[at..at + 2].copy_from_slice(&v.to_le_bytes());
    Ok(())
}

/// Applies one feedback to an AtomStats' bytes per the tier model of the module docs and
/// returns the published stats. Pure (no accounts, no logging) so that tests can drive the
/// model directly; `data` must be a full 561-byte AtomStats (the caller checked it).
/// On error `data` may be partly updated; the transaction fails, so nothing is persisted.
pub fn record_feedback(
    data: &mut [u8],
    client_hash: &[u8; 32],
    score: u8,
) -> Result<Stats, EngineError> {
    if data.len() != atom_stats::LEN {
        return Err(E::InvalidAccountData);
    }
    if score > external::instructions::MAX_SCORE {
        return Err(E::InvalidScore);
    }
    let positive = score >= tier_model::POSITIVE_MIN_SCORE;
    let negative = score < tier_model::NEGATIVE_BELOW_SCORE;
    add_u64(data, stats_book::FEEDBACK_COUNT, 1)?;
    add_u64(data, stats_book::POSITIVE_COUNT, u64::from(positive))?;
    add_u64(data, stats_book::NEGATIVE_COUNT, u64::from(negative))?;
    add_u64(data, stats_book::SCORE_SUM, u64::from(score))?;

    let used = usize::from(data[stats_book::CLIENT_COUNT]).min(stats_book::MAX_CLIENTS);
    let entry_at = |i: usize| stats_book::CLIENTS + i * stats_book::CLIENT_ENTRY_LEN;
    let hash_of = |d: &[u8], i: usize| -> [u8; 32] {
        let at = entry_at(i) + stats_book::ENTRY_HASH;
        let mut h = [0u8; 32];
        h.copy_from_slice(&d[at..at + 32]);
        h
    };
    let found = (0..used).find(|&i| hash_of(data, i) == *client_hash);
    let slot = match found {
        Some(i) => Some(i),
        None if used < stats_book::MAX_CLIENTS => {
            let at = entry_at(used);
            data[at + stats_book::ENTRY_HASH..at + stats_book::ENTRY_HASH + 32]
                .copy_from_slice(client_hash);
            // `used` < 8, so it fits in a byte.
            data[stats_book::CLIENT_COUNT] = (used + 1) as u8;
            Some(used)
        }
        // The table is full: the feedback counts in the totals only (see the module docs).
        None => None,
    };
    if let Some(i) = slot {
        add_u16(data, entry_at(i) + stats_book::ENTRY_FEEDBACKS, 1)?;
        add_u16(
            data,
            entry_at(i) + stats_book::ENTRY_POSITIVES,
            u16::from(positive),
        )?;
    }

    let used = usize::from(data[stats_book::CLIENT_COUNT]).min(stats_book::MAX_CLIENTS);
    let positives_of = |i: usize| read_u16(data, entry_at(i) + stats_book::ENTRY_POSITIVES);
    let clamp_tier = |n: usize| u8::try_from(n).unwrap_or(u8::MAX).min(atom_stats::MAX_TIER);
    let model_immediate = clamp_tier((0..used).filter(|&i| positives_of(i) >= 1).count());
    let model_confirmed = clamp_tier(
        (0..used)
            .filter(|&i| positives_of(i) >= tier_model::CONFIRMED_MIN_POSITIVES)
            .count(),
    )
    .min(model_immediate);
    // Both values are clamped below their type's maximum, so the casts cannot truncate.
    let model_risk = read_u64(data, stats_book::NEGATIVE_COUNT)
        .saturating_mul(tier_model::RISK_PER_NEGATIVE)
        .min(u64::from(tier_model::MAX_RISK)) as u8;
    let model_confidence = read_u64(data, stats_book::FEEDBACK_COUNT)
        .saturating_mul(tier_model::CONFIDENCE_PER_FEEDBACK)
        .min(u64::from(tier_model::MAX_CONFIDENCE)) as u16;

    let published = Stats {
        tier_immediate: model_immediate.max(data[stats_book::FLOOR_TIER_IMMEDIATE]),
        tier_confirmed: model_confirmed.max(data[stats_book::FLOOR_TIER_CONFIRMED]),
        risk_score: model_risk.max(data[stats_book::FLOOR_RISK]),
        confidence: model_confidence.max(read_u16(data, stats_book::FLOOR_CONFIDENCE)),
    };
    write_public(data, &published);
    Ok(published)
}
