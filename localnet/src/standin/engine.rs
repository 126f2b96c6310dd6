//! The reputation engine stand-in (loaded at `ids::REPUTATION_ENGINE`). Not the real engine:
//! see the [module docs of `standin`](super).
//!
//! Instructions (Anchor layout: 8-byte discriminator, then Borsh arguments):
//!
//! | instruction | discriminator | accounts |
//! |---|---|---|
//! | `initialize_config(authority: Pubkey)` (localnet-only) | `global:initialize_config` | payer (S,W), atom_config (W), system_program |
//! | `initialize_stats()` | `global:initialize_stats` | owner (S,W), asset, collection, atom_config, atom_stats (W), system_program |
//! | `update_config(15 optional parameters)` | `global:update_config` | authority (S), atom_config (W); only `paused` is honoured, any other parameter is refused |
//! | `update_stats(client_hash: [u8; 32], score: u8)` (CPI only) | `global:update_stats` | payer (S), asset, collection, atom_config, atom_stats (W), registry CPI authority (S), system_program; refused while paused (6004) or when the stats were made for another collection (6010) |
//! | `set_stats(tier_immediate: u8, tier_confirmed: u8, risk_score: u8, confidence: u16)` (localnet-only) | `global:set_stats` | authority (S), atom_config, atom_stats (W) |
//!
//! Accounts:
//! - `AtomConfig` (`account:AtomConfig`, PDA `["atom_config"]`, [`super::layout::atom_config`]),
//!   151 bytes as the real one: 8..40 authority (may `update_config` and `set_stats`), 40..72
//!   the registry, 143 bump, 144 version, 145 paused;
//! - `AtomStats` (`account:AtomStats`, PDA `["atom_stats", asset]`, 561 bytes): the offsets of
//!   `external::atom_stats` (collection, asset, risk 549, trust tier 551 = the confirmed tier,
//!   candidate tier 552, the candidacy's engine epoch 553..555, confirmed tier 555, confidence
//!   557, schema 1 at 560) and the stand-in's bookkeeping at 72..549
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
//! - the calculated tier = min(4, distinct clients with ≥ 1 positive feedback): the stand-in's
//!   own measure, far simpler than the real engine's (which weighs quality, risk and
//!   confidence, and keeps a new agent at tier 0 for many feedbacks);
//! - the tiers as the real engine keeps them: a calculated tier below the confirmed one is
//!   confirmed at once; a higher one starts a *candidacy* (552), which a lower calculated tier
//!   lowers and a higher one does not raise, and which the first feedback 8 engine epochs of
//!   432 000 slots later confirms; the trust tier (551) always equals the confirmed tier
//!   (555). Gate mode immediate reads the higher of 551 and 552;
//! - risk = min(100, 10 × negative feedbacks);
//! - confidence = min(10000, 1000 × feedbacks).
//!
//! `set_stats` writes the tiers (`tier_confirmed` confirmed, a higher `tier_immediate` as a
//! candidacy beginning now), risk and confidence, and records them as a *floor*: the
//! calculated tier, the confirmed tier, risk and confidence never go below it. Without
//! `set_stats` the floor is zero; a seeded demo tier never drops because feedback arrives
//! later.

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
    atom_stats_pda, core_asset, ids, registry_cpi_authority_pda, seeds,
};
use trust_gate_program_common::runtime::log;

/// The engine stand-in's errors, returned as `ProgramError::Custom(code)`, numbered as the
/// real engine answers the same failure: its own errors from 6000 (Anchor's offset; the
/// registry's start at 12000, so the two never collide), Anchor's framework errors where the
/// real one fails in its generated account checks, and the system program's 0 for an account
/// that exists already. The localnet-only `set_stats` has no real counterpart: its own
/// refusals are numbered from 6100. Tests and clients match on them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum EngineError {
    /// 0: an account the instruction creates already exists (AccountAlreadyInUse).
    AlreadyInitialized = 0,
    /// 101: unknown discriminator (InstructionFallbackNotFound).
    InstructionFallbackNotFound = 101,
    /// 102: arguments that do not decode (InstructionDidNotDeserialize).
    InvalidInstructionData = 102,
    /// 2000: an account the instruction writes was passed read-only (ConstraintMut).
    AccountNotWritable = 2000,
    /// 2003: `update_config` signed by someone other than the config's authority
    /// (ConstraintRaw, the real engine's constraint without an error of its own).
    NotConfigAuthority = 2003,
    /// 2006: an account is not at its expected address (`atom_config` / `atom_stats` PDA,
    /// system program) (ConstraintSeeds).
    InvalidAddress = 2006,
    /// 3005: fewer accounts than the instruction needs (AccountNotEnoughKeys).
    NotEnoughAccounts = 3005,
    /// 3010: an account that must sign did not (AccountNotSigner).
    MissingSigner = 3010,
    /// 3012: `atom_config` or `atom_stats` is not an initialized engine account
    /// (AccountNotInitialized).
    InvalidAccountData = 3012,
    /// 6000: an `update_stats` score above 100 (InvalidScore; the registry already bounds it,
    /// the engine does not trust its caller's arguments).
    InvalidScore = 6000,
    /// 6001: `set_stats` signed by someone other than the config authority (Unauthorized).
    Unauthorized = 6001,
    /// 6002: `update_stats` called with something other than the registry's CPI authority
    /// (UnauthorizedCaller).
    UnauthorizedCaller = 6002,
    /// 6004: `update_stats` while the engine is paused (Paused).
    Paused = 6004,
    /// 6006: `initialize_stats` signed by someone other than the asset's owner
    /// (NotAssetOwner).
    NotAssetOwner = 6006,
    /// 6007: the asset is not a registry stand-in asset (InvalidAsset).
    InvalidAsset = 6007,
    /// 6010: the collection is not the asset's collection (`initialize_stats`), or not the one
    /// the stats were made for (`update_stats`) (CollectionMismatch).
    CollectionMismatch = 6010,
    /// 6100: a tier above 4 (`set_stats`, localnet-only).
    InvalidTier = 6100,
    /// 6101: a confidence above 10000 basis points (`set_stats`, localnet-only).
    InvalidConfidence = 6101,
    /// 6102: a counter would overflow (the real engine saturates instead).
    Overflow = 6102,
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
        discriminators::UPDATE_CONFIG => {
            update_config(accounts, decode_args::<E, _>(rest, "update_config")?)
        }
        discriminators::SET_STATS => set_stats(accounts, decode_args::<E, _>(rest, "set_stats")?),
        _ => Err(fail(
            E::InstructionFallbackNotFound,
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

/// What the stand-in reads of `AtomConfig`.
struct Config {
    authority: Pubkey,
    paused: bool,
}

/// Checks `atom_config` and reads it.
fn load_config(config: &AccountInfo) -> Result<Config, ProgramError> {
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
    let authority = key_at(&d, atom_config::AUTHORITY)
        .ok_or_else(|| fail(E::InvalidAccountData, "atom_config too short"))?;
    Ok(Config {
        authority,
        paused: d[atom_config::PAUSED] != 0,
    })
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
    d[atom_config::AGENT_REGISTRY..atom_config::AGENT_REGISTRY + 32]
        .copy_from_slice(ids::AGENT_REGISTRY.as_ref());
    d[atom_config::BUMP] = bump;
    d[atom_config::VERSION] = 1;
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
        let live_owner = core_asset::owner(asset_account.owner, &d)
            .filter(|_| d.len() >= asset::HEAD_LEN)
            .ok_or_else(|| fail(E::InvalidAsset, "the asset is not an MPL Core asset"))?;
        if live_owner != *owner.key {
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

/// `update_config`: pauses or resumes the engine. The real engine also tunes its model's
/// parameters here; the stand-in has none of them and refuses to pretend it applied them.
fn update_config(accounts: &[AccountInfo], args: args::UpdateConfigArgs) -> ProgramResult {
    let mut it = Accounts::new(accounts);
    let authority = it.next::<E>("authority")?;
    let config = it.next::<E>("atom_config")?;

    require_signer::<E>(authority, "authority")?;
    require_writable::<E>(config, "atom_config")?;
    if load_config(config)?.authority != *authority.key {
        return Err(fail(
            E::NotConfigAuthority,
            "only the config authority may update the config",
        ));
    }
    if args.sets_model_parameters() {
        return Err(fail(
            E::InvalidInstructionData,
            "the stand-in has no model parameters: only `paused` can be updated",
        ));
    }
    let mut d = config.try_borrow_mut_data()?;
    if let Some(paused) = args.paused {
        d[atom_config::PAUSED] = u8::from(paused);
    }
    d[atom_config::VERSION] = d[atom_config::VERSION].wrapping_add(1);
    log(&format!(
        "engine stand-in: config updated, paused {}",
        d[atom_config::PAUSED] != 0
    ));
    Ok(())
}

/// `update_stats`, through the registry's CPI only, with the real engine's accounts: payer
/// (the feedback's client), asset, collection, atom_config, atom_stats, the registry's CPI
/// authority (signing) and the system program.
fn update_stats(accounts: &[AccountInfo], args: args::UpdateStatsArgs) -> ProgramResult {
    let mut it = Accounts::new(accounts);
    let payer = it.next::<E>("payer")?;
    let asset_account = it.next::<E>("asset")?;
    let collection = it.next::<E>("collection")?;
    let config = it.next::<E>("atom_config")?;
    let stats = it.next::<E>("atom_stats")?;
    let authority = it.next::<E>("registry CPI authority")?;
    let system = it.next::<E>("system_program")?;

    require_signer::<E>(payer, "payer")?;
    require_writable::<E>(stats, "atom_stats")?;
    require_address(system, &system_program::ID, "system_program")?;
    if *authority.key != registry_cpi_authority_pda().0 {
        return Err(fail(
            E::UnauthorizedCaller,
            "update_stats is only callable by the registry",
        ));
    }
    require_signer::<E>(authority, "registry CPI authority")?;
    if args.score > external::instructions::MAX_SCORE {
        return Err(fail(E::InvalidScore, "score above 100"));
    }
    if load_config(config)?.paused {
        return Err(fail(E::Paused, "the engine is paused"));
    }
    require_stats(stats)?;
    require_address(stats, &atom_stats_pda(asset_account.key).0, "atom_stats")?;
    {
        let d = stats.try_borrow_data()?;
        if key_at(&d, atom_stats::COLLECTION) != Some(*collection.key) {
            return Err(fail(
                E::CollectionMismatch,
                "the stats were made for another collection",
            ));
        }
    }
    let mut d = stats.try_borrow_mut_data()?;
    let epoch = engine_epoch(Clock::get()?.slot);
    let published = record_feedback(&mut d, &args.client_hash, args.score, epoch)
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
    if load_config(config)?.authority != *authority.key {
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
    // As the real engine would hold them: `tier_confirmed` confirmed, a higher
    // `tier_immediate` a candidacy beginning now.
    let pending = args.tier_immediate > args.tier_confirmed;
    write_tiers(
        &mut d,
        Tiers {
            confirmed: args.tier_confirmed,
            candidate: if pending { args.tier_immediate } else { 0 },
            since: engine_epoch(Clock::get()?.slot),
        },
    );
    d[stats_book::FLOOR_TIER_IMMEDIATE] = args.tier_immediate;
    d[stats_book::FLOOR_TIER_CONFIRMED] = args.tier_confirmed;
    d[stats_book::FLOOR_RISK] = args.risk_score;
    d[stats_book::FLOOR_CONFIDENCE..stats_book::FLOOR_CONFIDENCE + 2]
        .copy_from_slice(&args.confidence.to_le_bytes());
    log(&format!("engine stand-in: stats set to {stats_value:?}"));
    Ok(())
}

/// Writes the risk and confidence the gate reads (the tiers: [`write_tiers`]).
fn write_public(d: &mut [u8], s: &Stats) {
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
    epoch: u16,
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
    let calculated = clamp_tier((0..used).filter(|&i| positives_of(i) >= 1).count())
        .max(data[stats_book::FLOOR_TIER_IMMEDIATE]);
    // Both values are clamped below their type's maximum, so the casts cannot truncate.
    let model_risk = read_u64(data, stats_book::NEGATIVE_COUNT)
        .saturating_mul(tier_model::RISK_PER_NEGATIVE)
        .min(u64::from(tier_model::MAX_RISK)) as u8;
    let model_confidence = read_u64(data, stats_book::FEEDBACK_COUNT)
        .saturating_mul(tier_model::CONFIDENCE_PER_FEEDBACK)
        .min(u64::from(tier_model::MAX_CONFIDENCE)) as u16;

    let tiers = next_tiers(data, calculated, epoch);
    write_tiers(data, tiers);
    let published = Stats {
        tier_immediate: atom_stats::immediate_tier(tiers.confirmed, tiers.candidate),
        tier_confirmed: tiers.confirmed,
        risk_score: model_risk.max(data[stats_book::FLOOR_RISK]),
        confidence: model_confidence.max(read_u16(data, stats_book::FLOOR_CONFIDENCE)),
    };
    write_public(data, &published);
    Ok(published)
}

/// The engine's tiers as the real engine keeps them: the confirmed tier (555, also the trust
/// tier at 551), the tier a candidacy waits to confirm (552) and the engine epoch it began
/// (553..555).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Tiers {
    confirmed: u8,
    candidate: u8,
    since: u16,
}

/// The tier update of the real engine's model, around the stand-in's own `calculated` tier:
/// a lower tier is confirmed at once (never below the `set_stats` floor); a higher one starts
/// a candidacy, which only a lower tier lowers (a higher one does not raise it), and which a
/// feedback confirms once [`tier_model::CONFIRM_EPOCHS`] engine epochs have passed since it
/// began; an equal tier ends any candidacy.
fn next_tiers(data: &[u8], calculated: u8, epoch: u16) -> Tiers {
    let floor = data[stats_book::FLOOR_TIER_CONFIRMED];
    let mut t = Tiers {
        confirmed: data[atom_stats::TIER_CONFIRMED].max(floor),
        candidate: data[atom_stats::TIER_CANDIDATE],
        since: read_u16(data, tier_model::CANDIDATE_EPOCH),
    };
    if calculated <= t.confirmed {
        t.confirmed = calculated.max(floor);
        t.candidate = 0;
        return t;
    }
    if t.candidate == 0 || calculated < t.candidate {
        t.candidate = calculated;
        t.since = epoch;
    }
    if epoch.saturating_sub(t.since) >= tier_model::CONFIRM_EPOCHS {
        t.confirmed = t.candidate;
        t.candidate = if calculated > t.confirmed {
            calculated
        } else {
            0
        };
        t.since = epoch;
    }
    t
}

fn write_tiers(d: &mut [u8], t: Tiers) {
    d[atom_stats::TIER_CONFIRMED] = t.confirmed;
    d[atom_stats::TIER_IMMEDIATE] = t.confirmed;
    d[atom_stats::TIER_CANDIDATE] = t.candidate;
    d[tier_model::CANDIDATE_EPOCH..tier_model::CANDIDATE_EPOCH + 2]
        .copy_from_slice(&t.since.to_le_bytes());
}

/// The engine epoch of `slot` (the real engine counts 432 000-slot epochs from its clock's
/// slot, whatever the cluster's epoch schedule).
pub fn engine_epoch(slot: u64) -> u16 {
    u16::try_from(slot / tier_model::EPOCH_SLOTS).unwrap_or(u16::MAX)
}
