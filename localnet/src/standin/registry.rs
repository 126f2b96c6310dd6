//! The agent registry stand-in (loaded at `ids::AGENT_REGISTRY`). Not the real registry: see
//! the [module docs of `standin`](super).
//!
//! Instructions (Anchor layout: 8-byte discriminator, then Borsh arguments):
//!
//! | instruction | discriminator | accounts |
//! |---|---|---|
//! | `initialize(base_collection: Pubkey)` (localnet-only) | `global:initialize` | payer (S,W), root_config (W), registry_config (W), collection (S,W), system_program |
//! | `register_with_options(agent_uri: String ≤ 250, atom_enabled: bool)` | `global:register_with_options` | root_config, registry_config, agent_account (W), asset (S,W), collection (W), owner (S,W), system_program, mpl_core_program |
//! | `set_agent_wallet(new_wallet: Pubkey, deadline: i64)` | `global:set_agent_wallet` | owner (S, the asset's owner), agent_account (W), asset, instructions sysvar; the instruction right before is the Ed25519 check of the new wallet's signature over `wallet_set_message` |
//! | `give_feedback(GiveFeedbackArgs)` | `global:give_feedback` | client (S,W), agent_account (W), asset, collection, system_program, atom_config, atom_stats (W), engine program, registry CPI authority (the last four every time, an absent one as the registry's id; fewer accounts: 3005 as the real registry) |
//! | `append_response(client_address: Pubkey, feedback_index: u64, response_uri: String ≤ 250, response_hash: [u8; 32], seal_hash: [u8; 32])` | `global:append_response` | responder (S; anyone), agent_account (W, PDA `["agent", asset]`), asset |
//!
//! Accounts:
//! - `RootConfig` (`account:RootConfig`, [`super::layout::root_config`]): 8..40 base
//!   collection, 40..72 authority, 72 bump;
//! - `RegistryConfig` (`account:RegistryConfig`, [`super::layout::registry_config`]): 8..40
//!   collection, 40..72 authority, 72 bump;
//! - the collection ([`super::layout::collection`]), a look-alike owned by this program;
//! - the asset, created by MPL Core's `CreateV2` (the MPL Core stand-in, [`super::core`], or
//!   MPL Core itself): a `BaseAssetV1` in the collection, named "Agent", the agent URI as
//!   its uri;
//! - `AgentAccount` (`account:AgentAccount`), 748 bytes, the real registry's layout: the
//!   offsets of `external::agent_account`, then the tail of [`super::layout::agent_tail`]
//!   (feedback digest and count, response digest and count, the revocation chain, parent and
//!   locks left at their defaults, agent URI, asset name, an empty collection pointer).
//!
//! `give_feedback` forwards the score to the engine (`update_stats(keccak256(client), score)`,
//! signed by the `["atom_cpi_authority"]` PDA) only when the agent is reputation-enabled, the
//! stats account is passed and exists (engine-owned, with data) and a score is given;
//! otherwise the feedback is only recorded on the agent. Either way it folds the feedback into
//! the agent's feedback chain and counts it, as the real registry does
//! ([`super::chains`]).
//!
//! `append_response` is permissionless, as the real registry's: any signer responds to the
//! agent's feedback number `feedback_index`, which must be below the agent's feedback count
//! (12055 InvalidFeedbackIndex), with a URI of at most 250 bytes (12051 ResponseUriTooLong,
//! checked after the index). The response is folded into the agent's response chain and
//! counted; nothing else is checked (the client address and the seal hash are taken as
//! given, as the real registry takes them). Its account checks come first, in Anchor's
//! order: a responder that did not sign 3010, an AgentAccount that is not one 3012, a
//! read-only one 2000, one that is not the asset's PDA 2006.

use super::layout::{
    self, agent_tail, args, collection, discriminators, registry_config, root_config,
};
use super::{
    chains, create_account, decode_args, fail, key_at, require_signer, require_writable,
    split_discriminator, Accounts, StandinError,
};
use anchor_lang::prelude::*;
// The prelude's `Result` is Anchor's single-parameter alias; the programs return `ProgramError`.
use anchor_lang::compat::solana_instructions_sysvar::{
    load_current_index_checked, load_instruction_at_checked, ID as INSTRUCTIONS_SYSVAR_ID,
};
use anchor_lang::solana_program::entrypoint::ProgramResult;
use anchor_lang::solana_program::{
    instruction::{AccountMeta, Instruction},
    program::invoke_signed,
    system_program,
};
use solana_sdk::ed25519_program;
use std::result::Result;
use trust_gate_client::instructions::{wallet_set_message, MAX_WALLET_DEADLINE_SECS};
use trust_gate_program_common::external::{
    self, agent_account, agent_account_pda, atom_config_pda, atom_stats_pda, core_asset, ids,
    instructions::{self as ext_ix, AppendResponseArgs, GiveFeedbackArgs, RegisterWithOptionsArgs},
    registry_config_pda, registry_cpi_authority_pda, root_config_pda, seeds,
};
use trust_gate_program_common::runtime::log;

/// The registry stand-in's errors, returned as `ProgramError::Custom(code)`, numbered as the
/// real registry answers the same failure: its own errors from 12000 (its enum's explicit
/// values plus Anchor's offset), Anchor's framework errors (101.., 2000.., 3000..) where the
/// real one fails in its generated account checks, and the system program's 0 for an account
/// that exists already. Tests and clients match on them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum RegistryError {
    /// 0: an account the instruction creates already exists (the system program's
    /// AccountAlreadyInUse, as the real registry's `init` fails).
    AlreadyInitialized = 0,
    /// 101: unknown discriminator (Anchor's InstructionFallbackNotFound).
    InstructionFallbackNotFound = 101,
    /// 102: instruction data that does not decode, trailing bytes included (Anchor's
    /// InstructionDidNotDeserialize).
    InvalidInstructionData = 102,
    /// 2000: an account the instruction writes was passed read-only (ConstraintMut).
    AccountNotWritable = 2000,
    /// 2006: an account is not at its expected address (ConstraintSeeds; the stand-in uses it
    /// for the system program, MPL Core and the engine's accounts too).
    InvalidAddress = 2006,
    /// 3005: fewer accounts than the instruction needs, `give_feedback`'s four engine accounts
    /// included (AccountNotEnoughKeys).
    NotEnoughAccounts = 3005,
    /// 3010: an account that must sign did not (AccountNotSigner).
    MissingSigner = 3010,
    /// 3012: an account is not the registry-owned account of the expected kind (owner,
    /// discriminator or length), e.g. an `AgentAccount` that was never registered
    /// (AccountNotInitialized).
    InvalidAccountData = 3012,
    /// 12000: `agent_uri` or `feedback_uri` longer than 250 bytes (UriTooLong).
    UriTooLong = 12000,
    /// 12004: `set_agent_wallet` signed by someone other than the asset's owner
    /// (Unauthorized).
    NotAgentOwner = 12004,
    /// 12005: a counter would overflow (Overflow).
    Overflow = 12005,
    /// 12010: the collection is not the root config's base collection
    /// (`register_with_options`) or not the agent's collection (`give_feedback`)
    /// (InvalidCollection).
    CollectionMismatch = 12010,
    /// 12011: the asset is not the agent's, or not an asset (InvalidAsset).
    InvalidAsset = 12011,
    /// 12050: `score` above 100 (InvalidScore).
    InvalidScore = 12050,
    /// 12051: `append_response`'s `response_uri` longer than 250 bytes (ResponseUriTooLong).
    ResponseUriTooLong = 12051,
    /// 12055: `append_response` to a feedback index at or past the agent's feedback count
    /// (InvalidFeedbackIndex).
    InvalidFeedbackIndex = 12055,
    /// 12056: `tag1` or `tag2` longer than 32 bytes (TagTooLong).
    TagTooLong = 12056,
    /// 12060: `endpoint` longer than 250 bytes (EndpointTooLong).
    EndpointTooLong = 12060,
    /// 12061: `value_decimals` above 18 (InvalidDecimals).
    InvalidValueDecimals = 12061,
    /// 12200: `set_agent_wallet` after its signed deadline (DeadlineExpired).
    DeadlineExpired = 12200,
    /// 12201: a signed deadline more than 300 seconds ahead (DeadlineTooFar).
    DeadlineTooFar = 12201,
    /// 12202: no Ed25519 check right before `set_agent_wallet`
    /// (MissingSignatureVerification).
    MissingSignatureVerification = 12202,
    /// 12203: the Ed25519 check is not one inline signature by the new wallet over the
    /// wallet-set message (InvalidSignature).
    InvalidSignature = 12203,
    /// 12300: the client giving feedback is the agent's owner (SelfFeedbackNotAllowed).
    SelfFeedbackNotAllowed = 12300,
}

impl StandinError for RegistryError {
    const PROGRAM: &'static str = "registry";
    const NOT_ENOUGH_ACCOUNTS: Self = Self::NotEnoughAccounts;
    const MISSING_SIGNER: Self = Self::MissingSigner;
    const NOT_WRITABLE: Self = Self::AccountNotWritable;
    const ALREADY_INITIALIZED: Self = Self::AlreadyInitialized;
    const INVALID_INSTRUCTION_DATA: Self = Self::InvalidInstructionData;
    fn code(self) -> u32 {
        self as u32
    }
}

impl From<RegistryError> for ProgramError {
    fn from(err: RegistryError) -> Self {
        ProgramError::Custom(err as u32)
    }
}

type E = RegistryError;

/// The registry stand-in's entrypoint.
pub fn process_instruction(
    _program_id: &Pubkey,
    accounts: &[AccountInfo],
    data: &[u8],
) -> ProgramResult {
    let (discriminator, rest) = split_discriminator::<E>(data)?;
    match discriminator {
        discriminators::INITIALIZE => {
            initialize(accounts, decode_args::<E, _>(rest, "initialize")?)
        }
        external::discriminators::REGISTER_WITH_OPTIONS => register_with_options(
            accounts,
            decode_args::<E, _>(rest, "register_with_options")?,
        ),
        discriminators::SET_AGENT_WALLET => {
            set_agent_wallet(accounts, decode_args::<E, _>(rest, "set_agent_wallet")?)
        }
        external::discriminators::GIVE_FEEDBACK => {
            give_feedback(accounts, decode_args::<E, _>(rest, "give_feedback")?)
        }
        external::discriminators::APPEND_RESPONSE => {
            append_response(accounts, decode_args::<E, _>(rest, "append_response")?)
        }
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

/// Checks that `account` is a registry-owned account of at least `min_len` bytes starting
/// with `discriminator`.
fn require_registry_account(
    account: &AccountInfo,
    discriminator: &[u8; 8],
    min_len: usize,
    name: &str,
) -> ProgramResult {
    let data = account.try_borrow_data()?;
    if *account.owner != ids::AGENT_REGISTRY
        || data.len() < min_len
        || data.get(..8) != Some(&discriminator[..])
    {
        return Err(fail(
            E::InvalidAccountData,
            &format!("`{name}` is not an initialized registry account"),
        ));
    }
    Ok(())
}

fn initialize(accounts: &[AccountInfo], args: args::InitializeArgs) -> ProgramResult {
    let mut it = Accounts::new(accounts);
    let payer = it.next::<E>("payer")?;
    let root = it.next::<E>("root_config")?;
    let registry_config = it.next::<E>("registry_config")?;
    let collection_account = it.next::<E>("collection")?;
    let system = it.next::<E>("system_program")?;

    require_signer::<E>(payer, "payer")?;
    require_writable::<E>(payer, "payer")?;
    require_signer::<E>(collection_account, "collection")?;
    require_writable::<E>(collection_account, "collection")?;
    require_writable::<E>(root, "root_config")?;
    require_writable::<E>(registry_config, "registry_config")?;
    if *collection_account.key != args.base_collection {
        return Err(fail(
            E::CollectionMismatch,
            "the collection account is not `base_collection`",
        ));
    }
    let (root_key, root_bump) = root_config_pda();
    require_address(root, &root_key, "root_config")?;
    let (config_key, config_bump) = registry_config_pda(collection_account.key);
    require_address(registry_config, &config_key, "registry_config")?;
    require_address(system, &system_program::ID, "system_program")?;

    create_account::<E>(
        payer,
        root,
        system,
        root_config::LEN,
        &ids::AGENT_REGISTRY,
        &[seeds::ROOT_CONFIG, &[root_bump]],
        "root_config",
    )?;
    create_account::<E>(
        payer,
        registry_config,
        system,
        registry_config::LEN,
        &ids::AGENT_REGISTRY,
        &[
            seeds::REGISTRY_CONFIG,
            collection_account.key.as_ref(),
            &[config_bump],
        ],
        "registry_config",
    )?;
    create_account::<E>(
        payer,
        collection_account,
        system,
        collection::LEN,
        &ids::AGENT_REGISTRY,
        &[],
        "collection",
    )?;

    {
        let mut d = root.try_borrow_mut_data()?;
        d[..8].copy_from_slice(&discriminators::ROOT_CONFIG);
        d[root_config::BASE_COLLECTION..root_config::BASE_COLLECTION + 32]
            .copy_from_slice(args.base_collection.as_ref());
        d[root_config::AUTHORITY..root_config::AUTHORITY + 32].copy_from_slice(payer.key.as_ref());
        d[root_config::BUMP] = root_bump;
    }
    {
        let mut d = registry_config.try_borrow_mut_data()?;
        d[..8].copy_from_slice(&discriminators::REGISTRY_CONFIG);
        d[registry_config::COLLECTION..registry_config::COLLECTION + 32]
            .copy_from_slice(collection_account.key.as_ref());
        d[registry_config::AUTHORITY..registry_config::AUTHORITY + 32]
            .copy_from_slice(payer.key.as_ref());
        d[registry_config::BUMP] = config_bump;
    }
    {
        let mut d = collection_account.try_borrow_mut_data()?;
        d[collection::KEY] = collection::KEY_COLLECTION_V1;
        d[collection::UPDATE_AUTHORITY..collection::UPDATE_AUTHORITY + 32]
            .copy_from_slice(payer.key.as_ref());
    }
    log(&format!(
        "registry stand-in: initialized, base collection {}",
        args.base_collection
    ));
    Ok(())
}

fn register_with_options(accounts: &[AccountInfo], args: RegisterWithOptionsArgs) -> ProgramResult {
    let mut it = Accounts::new(accounts);
    let root = it.next::<E>("root_config")?;
    let registry_config = it.next::<E>("registry_config")?;
    let agent = it.next::<E>("agent_account")?;
    let asset_account = it.next::<E>("asset")?;
    let collection_account = it.next::<E>("collection")?;
    let owner = it.next::<E>("owner")?;
    let system = it.next::<E>("system_program")?;
    let mpl_core = it.next::<E>("mpl_core_program")?;

    if args.agent_uri.len() > ext_ix::MAX_URI_LEN {
        return Err(fail(E::UriTooLong, "agent_uri is longer than 250 bytes"));
    }
    require_signer::<E>(asset_account, "asset")?;
    require_signer::<E>(owner, "owner")?;
    for (account, name) in [
        (agent, "agent_account"),
        (asset_account, "asset"),
        (collection_account, "collection"),
        (owner, "owner"),
    ] {
        require_writable::<E>(account, name)?;
    }
    require_address(root, &root_config_pda().0, "root_config")?;
    require_registry_account(
        root,
        &discriminators::ROOT_CONFIG,
        root_config::LEN,
        "root_config",
    )?;
    let base_collection = key_at(&root.try_borrow_data()?, root_config::BASE_COLLECTION)
        .ok_or_else(|| fail(E::InvalidAccountData, "root_config too short"))?;
    if *collection_account.key != base_collection {
        return Err(fail(
            E::CollectionMismatch,
            "the collection is not the base collection",
        ));
    }
    {
        let d = collection_account.try_borrow_data()?;
        if *collection_account.owner != ids::AGENT_REGISTRY
            || d.len() != collection::LEN
            || d[collection::KEY] != collection::KEY_COLLECTION_V1
        {
            return Err(fail(
                E::InvalidAccountData,
                "`collection` is not a stand-in collection",
            ));
        }
    }
    require_address(
        registry_config,
        &registry_config_pda(collection_account.key).0,
        "registry_config",
    )?;
    require_registry_account(
        registry_config,
        &discriminators::REGISTRY_CONFIG,
        registry_config::LEN,
        "registry_config",
    )?;
    let (agent_key, agent_bump) = agent_account_pda(asset_account.key);
    require_address(agent, &agent_key, "agent_account")?;
    require_address(system, &system_program::ID, "system_program")?;
    require_address(mpl_core, &ids::MPL_CORE, "mpl_core_program")?;

    // The asset first, through MPL Core as the real registry does (named "Agent", the agent
    // URI as its uri, the registry config as the collection's authority): a reused asset
    // keypair fails here, before the agent PDA is touched.
    create_asset(
        mpl_core,
        asset_account,
        collection_account,
        registry_config,
        owner,
        system,
        &args.agent_uri,
    )?;
    create_account::<E>(
        owner,
        agent,
        system,
        agent_account::MAX_LEN,
        &ids::AGENT_REGISTRY,
        &[seeds::AGENT, asset_account.key.as_ref(), &[agent_bump]],
        "agent_account",
    )?;
    {
        let mut d = collection_account.try_borrow_mut_data()?;
        let at = collection::AGENT_COUNT;
        let count = u64::from_le_bytes(
            d[at..at + 8]
                .try_into()
                .map_err(|_| fail(E::InvalidAccountData, "collection too short"))?,
        );
        let count = count
            .checked_add(1)
            .ok_or_else(|| fail(E::Overflow, "collection agent count"))?;
        d[at..at + 8].copy_from_slice(&count.to_le_bytes());
    }
    {
        let mut d = agent.try_borrow_mut_data()?;
        d[..8].copy_from_slice(&external::discriminators::AGENT_ACCOUNT);
        d[agent_account::COLLECTION..agent_account::COLLECTION + 32]
            .copy_from_slice(collection_account.key.as_ref());
        d[agent_account::CREATOR..agent_account::CREATOR + 32].copy_from_slice(owner.key.as_ref());
        d[agent_account::OWNER..agent_account::OWNER + 32].copy_from_slice(owner.key.as_ref());
        d[agent_account::ASSET..agent_account::ASSET + 32]
            .copy_from_slice(asset_account.key.as_ref());
        d[agent_account::BUMP] = agent_bump;
        d[agent_account::REPUTATION_ENABLED] = u8::from(args.atom_enabled);
        write_tail(&mut d, &agent_tail::Tail::registered(&args.agent_uri))?;
    }
    log(&format!(
        "registry stand-in: registered agent {} (asset {}, owner {}, atom {})",
        agent.key, asset_account.key, owner.key, args.atom_enabled
    ));
    Ok(())
}

/// MPL Core's `CreateV2` of the agent's asset in the registry's collection, owned and paid
/// by `owner`, signed for by the registry config (the collection's update authority).
fn create_asset<'a>(
    mpl_core: &AccountInfo<'a>,
    asset_account: &AccountInfo<'a>,
    collection_account: &AccountInfo<'a>,
    registry_config: &AccountInfo<'a>,
    owner: &AccountInfo<'a>,
    system: &AccountInfo<'a>,
    uri: &str,
) -> ProgramResult {
    let absent = AccountMeta::new_readonly(ids::MPL_CORE, false);
    let mut data = vec![super::core::tags::CREATE_V2];
    super::core::CreateV2Args {
        data_state: 0,
        name: "Agent".into(),
        uri: uri.into(),
        plugins: 0,
        external_plugin_adapters: 0,
    }
    .serialize(&mut data)
    .map_err(|_| fail(E::InvalidInstructionData, "CreateV2 arguments"))?;
    let ix = Instruction {
        program_id: ids::MPL_CORE,
        accounts: vec![
            AccountMeta::new(*asset_account.key, true),
            AccountMeta::new(*collection_account.key, false),
            AccountMeta::new_readonly(*registry_config.key, true),
            AccountMeta::new(*owner.key, true),
            AccountMeta::new_readonly(*owner.key, false),
            absent.clone(),
            AccountMeta::new_readonly(system_program::ID, false),
            absent,
        ],
        data,
    };
    let bump = registry_config_pda(collection_account.key).1;
    invoke_signed(
        &ix,
        &[
            asset_account.clone(),
            collection_account.clone(),
            registry_config.clone(),
            owner.clone(),
            system.clone(),
            mpl_core.clone(),
        ],
        &[&[
            seeds::REGISTRY_CONFIG,
            collection_account.key.as_ref(),
            &[bump],
        ]],
    )
}

/// Rewrites everything from the wallet option on ([`agent_tail::Tail`]), and zeros up to the
/// end (a shorter option would otherwise leave stale bytes behind).
fn write_tail(d: &mut [u8], tail: &agent_tail::Tail) -> ProgramResult {
    let mut bytes = Vec::with_capacity(agent_account::MAX_LEN - agent_account::AGENT_WALLET);
    tail.serialize(&mut bytes)
        .map_err(|_| fail(E::InvalidAccountData, "cannot encode the agent tail"))?;
    let region = d
        .get_mut(agent_account::AGENT_WALLET..)
        .filter(|r| r.len() >= bytes.len())
        .ok_or_else(|| {
            fail(
                E::InvalidAccountData,
                "agent_account too short for its fields",
            )
        })?;
    region.fill(0);
    region[..bytes.len()].copy_from_slice(&bytes);
    Ok(())
}

/// The fields from the wallet on.
fn read_tail(d: &[u8]) -> Result<agent_tail::Tail, ProgramError> {
    agent_tail::read(d)
        .ok_or_else(|| fail(E::InvalidAccountData, "agent_account fields do not decode"))
}

/// Checks that `agent` is the registered AgentAccount of `asset` and returns its data's view.
fn load_agent(
    agent: &AccountInfo,
    asset_key: &Pubkey,
) -> Result<agent_account::AgentView, ProgramError> {
    require_address(agent, &agent_account_pda(asset_key).0, "agent_account")?;
    require_registry_account(
        agent,
        &external::discriminators::AGENT_ACCOUNT,
        agent_account::MIN_LEN,
        "agent_account",
    )?;
    let d = agent.try_borrow_data()?;
    agent_account::read(&d)
        .ok_or_else(|| fail(E::InvalidAccountData, "agent_account does not decode"))
}

/// The asset's owner as MPL Core records it: the owner the real registry checks, not the
/// AgentAccount's cached one.
fn live_owner(asset_account: &AccountInfo) -> Result<Pubkey, ProgramError> {
    core_asset::owner(asset_account.owner, &asset_account.try_borrow_data()?)
        .ok_or_else(|| fail(E::InvalidAsset, "the asset is not an MPL Core asset"))
}

/// `set_agent_wallet(new_wallet, deadline)`, as the real registry: the asset's owner signs;
/// the new wallet proves it holds its key with an Ed25519 signature over
/// `wallet_set_message` in the instruction right before, valid until `deadline` (at most 300
/// seconds ahead); the wallet is set and the cached owner refreshed. A wallet cannot be
/// cleared this way.
fn set_agent_wallet(accounts: &[AccountInfo], args: args::SetAgentWalletArgs) -> ProgramResult {
    let mut it = Accounts::new(accounts);
    let owner = it.next::<E>("owner")?;
    let agent = it.next::<E>("agent_account")?;
    let asset_account = it.next::<E>("asset")?;
    let sysvar = it.next::<E>("instructions_sysvar")?;

    require_signer::<E>(owner, "owner")?;
    require_writable::<E>(agent, "agent_account")?;
    require_address(sysvar, &INSTRUCTIONS_SYSVAR_ID, "instructions_sysvar")?;
    load_agent(agent, asset_account.key)?;
    if live_owner(asset_account)? != *owner.key {
        return Err(fail(
            E::NotAgentOwner,
            "only the asset's owner may set the agent's wallet",
        ));
    }
    let now = Clock::get()?.unix_timestamp;
    if now > args.deadline {
        return Err(fail(E::DeadlineExpired, "the signed deadline has passed"));
    }
    if args.deadline > now.saturating_add(MAX_WALLET_DEADLINE_SECS) {
        return Err(fail(
            E::DeadlineTooFar,
            "the signed deadline is more than 300 seconds ahead",
        ));
    }
    let message = wallet_set_message(
        asset_account.key,
        &args.new_wallet,
        owner.key,
        args.deadline,
    );
    check_wallet_signature(sysvar, &args.new_wallet, &message)?;

    let mut d = agent.try_borrow_mut_data()?;
    let tail = read_tail(&d)?;
    write_tail(
        &mut d,
        &agent_tail::Tail {
            agent_wallet: Some(args.new_wallet),
            ..tail
        },
    )?;
    d[agent_account::OWNER..agent_account::OWNER + 32].copy_from_slice(owner.key.as_ref());
    log(&format!(
        "registry stand-in: agent wallet of {} set to {}",
        asset_account.key, args.new_wallet
    ));
    Ok(())
}

/// The Ed25519 precompile instruction right before this one must carry, inline, one
/// signature by `wallet` over exactly `message` (the precompile itself verified it).
fn check_wallet_signature(sysvar: &AccountInfo, wallet: &Pubkey, message: &[u8]) -> ProgramResult {
    let missing = || {
        fail(
            E::MissingSignatureVerification,
            "no Ed25519 check right before",
        )
    };
    let invalid = |why: &str| fail(E::InvalidSignature, why);
    let current = load_current_index_checked(sysvar).map_err(|_| missing())?;
    let before = usize::from(current.checked_sub(1).ok_or_else(missing)?);
    let ix = load_instruction_at_checked(before, sysvar).map_err(|_| missing())?;
    if ix.program_id != ed25519_program::ID {
        return Err(missing());
    }
    let d = &ix.data;
    let u16_at = |at: usize| usize::from(u16::from_le_bytes([d[at], d[at + 1]]));
    if d.len() < 16 || d[0] != 1 {
        return Err(invalid("not one Ed25519 signature"));
    }
    if [u16_at(4), u16_at(8), u16_at(14)] != [usize::from(u16::MAX); 3] {
        return Err(invalid("the signature, key and message must be inline"));
    }
    let (signature_at, key_at_, message_at, size) = (u16_at(2), u16_at(6), u16_at(10), u16_at(12));
    if key_at_ + 32 > d.len() || message_at + size > d.len() || signature_at + 64 > d.len() {
        return Err(invalid("offsets out of bounds"));
    }
    if d[key_at_..key_at_ + 32] != wallet.to_bytes() {
        return Err(invalid("signed by another key than the new wallet"));
    }
    if d[message_at..message_at + size] != *message {
        return Err(invalid("not the wallet-set message"));
    }
    Ok(())
}

fn give_feedback(accounts: &[AccountInfo], args: GiveFeedbackArgs) -> ProgramResult {
    let mut it = Accounts::new(accounts);
    let client = it.next::<E>("client")?;
    let agent = it.next::<E>("agent_account")?;
    let asset_account = it.next::<E>("asset")?;
    let collection_account = it.next::<E>("collection")?;
    let system = it.next::<E>("system_program")?;
    // The four engine accounts are Anchor optional accounts in the real registry, which is
    // built without `allow-missing-optionals`: all four must be there every time, an absent
    // one passed as the registry's own id (Anchor's encoding of `None`), or the instruction
    // fails with Anchor's 3005 before anything else is looked at.
    let [config, stats, engine, authority] = match it.rest() {
        [config, stats, engine, authority, ..] => {
            [config, stats, engine, authority].map(|a| (a.key != &ids::AGENT_REGISTRY).then_some(a))
        }
        _ => {
            return Err(fail(
                E::NotEnoughAccounts,
                "give_feedback takes its four engine accounts every time (absent ones as the \
                 registry's id)",
            ));
        }
    };

    if args.value_decimals > ext_ix::MAX_VALUE_DECIMALS {
        return Err(fail(E::InvalidValueDecimals, "value_decimals above 18"));
    }
    if args.score.is_some_and(|s| s > ext_ix::MAX_SCORE) {
        return Err(fail(E::InvalidScore, "score above 100"));
    }
    if args.tag1.len() > ext_ix::MAX_TAG_LEN || args.tag2.len() > ext_ix::MAX_TAG_LEN {
        return Err(fail(E::TagTooLong, "tag longer than 32 bytes"));
    }
    if args.feedback_uri.len() > ext_ix::MAX_URI_LEN {
        return Err(fail(E::UriTooLong, "feedback_uri longer than 250 bytes"));
    }
    if args.endpoint.len() > ext_ix::MAX_URI_LEN {
        return Err(fail(E::EndpointTooLong, "endpoint longer than 250 bytes"));
    }
    require_signer::<E>(client, "client")?;
    require_writable::<E>(client, "client")?;
    require_writable::<E>(agent, "agent_account")?;
    let view = load_agent(agent, asset_account.key)?;
    if view.collection != *collection_account.key {
        return Err(fail(
            E::CollectionMismatch,
            "the collection is not the agent's collection",
        ));
    }
    require_address(system, &system_program::ID, "system_program")?;
    // Judged against the asset's live owner, as the real registry does, not the cached one.
    if live_owner(asset_account)? == *client.key {
        return Err(fail(
            E::SelfFeedbackNotAllowed,
            "an agent's owner cannot give it feedback",
        ));
    }
    if let Some(config) = config {
        require_address(config, &atom_config_pda().0, "atom_config")?;
    }
    if let Some(stats) = stats {
        require_address(stats, &atom_stats_pda(asset_account.key).0, "atom_stats")?;
        require_writable::<E>(stats, "atom_stats")?;
    }
    if let Some(engine) = engine {
        require_address(engine, &ids::REPUTATION_ENGINE, "engine program")?;
    }
    if let Some(authority) = authority {
        require_address(
            authority,
            &registry_cpi_authority_pda().0,
            "registry CPI authority",
        )?;
    }

    let count = {
        let slot = Clock::get()?.slot;
        let mut d = agent.try_borrow_mut_data()?;
        let tail = read_tail(&d)?;
        let index = tail.feedback_count;
        let count = index
            .checked_add(1)
            .ok_or_else(|| fail(E::Overflow, "agent feedback count"))?;
        let feedback_digest = chains::next_feedback_digest(
            &tail.feedback_digest,
            asset_account.key,
            client.key,
            index,
            &args,
            slot,
        );
        write_tail(
            &mut d,
            &agent_tail::Tail {
                feedback_digest,
                feedback_count: count,
                ..tail
            },
        )?;
        count
    };
    // The engine rates the agent only when it is reputation-enabled, its stats exist (owned
    // by the engine, with data: a balance alone at the address is not stats) and the feedback
    // has a score, as the real registry decides.
    let stats_exist =
        stats.is_some_and(|s| *s.owner == ids::REPUTATION_ENGINE && !s.data_is_empty());
    let rated = view.reputation_enabled && stats_exist && args.score.is_some();
    // Says whether the engine was called, so tests can check when it is.
    log(&format!(
        "registry stand-in: feedback #{count} for asset {} from {} ({})",
        asset_account.key,
        client.key,
        if rated {
            "engine updated"
        } else {
            "engine skipped"
        }
    ));
    let (Some(score), true) = (args.score, rated) else {
        return Ok(());
    };
    let (Some(config), Some(stats), Some(engine), Some(authority)) =
        (config, stats, engine, authority)
    else {
        return Err(fail(
            E::InvalidAddress,
            "rating needs atom_config, the engine program and the CPI authority",
        ));
    };
    let client_hash = super::client::client_hash(client.key);
    let mut data = layout::discriminators::UPDATE_STATS.to_vec();
    args::UpdateStatsArgs { client_hash, score }
        .serialize(&mut data)
        .map_err(|_| fail(E::InvalidInstructionData, "cannot encode update_stats"))?;
    let ix = Instruction {
        program_id: ids::REPUTATION_ENGINE,
        accounts: vec![
            AccountMeta::new(*client.key, true),
            AccountMeta::new_readonly(*asset_account.key, false),
            AccountMeta::new_readonly(*collection_account.key, false),
            AccountMeta::new_readonly(*config.key, false),
            AccountMeta::new(*stats.key, false),
            AccountMeta::new_readonly(*authority.key, true),
            AccountMeta::new_readonly(system_program::ID, false),
        ],
        data,
    };
    let bump = registry_cpi_authority_pda().1;
    invoke_signed(
        &ix,
        &[
            client.clone(),
            asset_account.clone(),
            collection_account.clone(),
            config.clone(),
            stats.clone(),
            authority.clone(),
            system.clone(),
            engine.clone(),
        ],
        &[&[seeds::ATOM_CPI_AUTHORITY, &[bump]]],
    )
}

/// `append_response(client_address, feedback_index, response_uri, response_hash, seal_hash)`,
/// as the real registry: the accounts in Anchor's order (responder signs; the AgentAccount is
/// one, writable, at the asset's PDA), then the index below the feedback count, then the URI's
/// length; the response is folded into the response chain and counted.
fn append_response(accounts: &[AccountInfo], args: AppendResponseArgs) -> ProgramResult {
    let mut it = Accounts::new(accounts);
    let responder = it.next::<E>("responder")?;
    require_signer::<E>(responder, "responder")?;
    let agent = it.next::<E>("agent_account")?;
    require_registry_account(
        agent,
        &external::discriminators::AGENT_ACCOUNT,
        agent_account::MIN_LEN,
        "agent_account",
    )?;
    let asset_account = it.next::<E>("asset")?;
    require_writable::<E>(agent, "agent_account")?;
    require_address(
        agent,
        &agent_account_pda(asset_account.key).0,
        "agent_account",
    )?;
    let mut d = agent.try_borrow_mut_data()?;
    let view = agent_account::read(&d)
        .ok_or_else(|| fail(E::InvalidAccountData, "agent_account does not decode"))?;
    if view.asset != *asset_account.key {
        return Err(fail(E::InvalidAsset, "the asset is not the agent's"));
    }
    let tail = read_tail(&d)?;
    if args.feedback_index >= tail.feedback_count {
        return Err(fail(
            E::InvalidFeedbackIndex,
            &format!(
                "feedback #{} does not exist (the agent has {})",
                args.feedback_index, tail.feedback_count
            ),
        ));
    }
    if args.response_uri.len() > ext_ix::MAX_URI_LEN {
        return Err(fail(
            E::ResponseUriTooLong,
            "response_uri longer than 250 bytes",
        ));
    }
    let slot = Clock::get()?.slot;
    let response_count = tail
        .response_count
        .checked_add(1)
        .ok_or_else(|| fail(E::Overflow, "agent response count"))?;
    let response_digest = chains::next_response_digest(
        &tail.response_digest,
        asset_account.key,
        responder.key,
        &args,
        slot,
    );
    write_tail(
        &mut d,
        &agent_tail::Tail {
            response_digest,
            response_count,
            ..tail
        },
    )?;
    log(&format!(
        "registry stand-in: response #{response_count} for asset {} to feedback #{} by {}",
        asset_account.key, args.feedback_index, responder.key
    ));
    Ok(())
}
