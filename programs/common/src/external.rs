//! Facts about the external "8004" agent registry and its reputation engine.
//!
//! These programs are not part of trust-gate: the gate reads their accounts and calls them by
//! CPI. Every id, seed, discriminator and offset here must match the deployed programs; the
//! local stand-in (crate `trust-gate-localnet`) is built from the same constants so that the
//! gate's reads and CPIs are exercised against the real byte layouts.

use anchor_lang::prelude::*;

/// Program ids. Build-time feature `mainnet` selects the mainnet ids; the default is devnet
/// (which the embedded localnet also uses, with a local stand-in at those addresses).
pub mod ids {
    use anchor_lang::prelude::{pubkey, Pubkey};

    #[cfg(not(feature = "mainnet"))]
    pub const AGENT_REGISTRY: Pubkey = pubkey!("8oo4J9tBB3Hna1jRQ3rWvJjojqM5DYTDJo5cejUuJy3C");
    #[cfg(not(feature = "mainnet"))]
    pub const REPUTATION_ENGINE: Pubkey = pubkey!("AToMufS4QD6hEXvcvBDg9m1AHeCLpmZQsyfYa5h9MwAF");

    #[cfg(feature = "mainnet")]
    pub const AGENT_REGISTRY: Pubkey = pubkey!("8oo4dC4JvBLwy5tGgiH3WwK4B9PWxL9Z4XjA2jzkQMbQ");
    #[cfg(feature = "mainnet")]
    pub const REPUTATION_ENGINE: Pubkey = pubkey!("AToMw53aiPQ8j7iHVb4fGt6nzUNxUhcPc3tbPBZuzVVb");

    /// MPL Core, the program that owns agent assets (same id on every cluster).
    pub const MPL_CORE: Pubkey = pubkey!("CoREENxT6tW1HoK8ypY1SxRMZTcVPm7R94rH4PZNhX7d");
    /// Solana's payment-channels program, behind x402's `upto` and `batch-settlement` (same id
    /// on mainnet and devnet).
    pub const PAYMENT_CHANNELS: Pubkey = pubkey!("CHNLxYvVA28MJP9PrFuDXccuoGXAx7jBacfLEkahyGsX");
    /// SPL Memo (v2).
    pub const MEMO: Pubkey = pubkey!("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");
}

/// PDA seed prefixes of the registry and the engine.
pub mod seeds {
    pub const ROOT_CONFIG: &[u8] = b"root_config";
    pub const REGISTRY_CONFIG: &[u8] = b"registry_config";
    pub const AGENT: &[u8] = b"agent";
    pub const ATOM_CPI_AUTHORITY: &[u8] = b"atom_cpi_authority";
    pub const ATOM_CONFIG: &[u8] = b"atom_config";
    pub const ATOM_STATS: &[u8] = b"atom_stats";
}

/// Anchor discriminators: accounts = sha256("account:<Name>")[..8], instructions =
/// sha256("global:<name>")[..8].
pub mod discriminators {
    pub const AGENT_ACCOUNT: [u8; 8] = [241, 119, 69, 140, 233, 9, 112, 50];
    pub const ATOM_STATS: [u8; 8] = [190, 187, 50, 59, 203, 39, 136, 244];
    pub const REGISTER_WITH_OPTIONS: [u8; 8] = [177, 175, 96, 41, 59, 166, 13, 6];
    pub const INITIALIZE_STATS: [u8; 8] = [144, 201, 117, 76, 127, 118, 176, 16];
    pub const GIVE_FEEDBACK: [u8; 8] = [145, 136, 123, 3, 215, 165, 98, 41];
    /// Registry `append_response` (permissionless: any signer responds to a feedback).
    pub const APPEND_RESPONSE: [u8; 8] = [162, 210, 186, 50, 180, 4, 47, 104];
}

/// The registry's and the engine's singleton PDAs (address, bump), derived at compile time:
/// the programs compare with a constant instead of spending 1 500 compute units per bump
/// tried to derive them again on every call.
pub mod singletons {
    use super::{ids, seeds};
    use anchor_lang::derive_program_address;

    pub const ROOT_CONFIG: ([u8; 32], u8) =
        derive_program_address(&[seeds::ROOT_CONFIG], &ids::AGENT_REGISTRY.to_bytes());
    pub const ATOM_CPI_AUTHORITY: ([u8; 32], u8) = derive_program_address(
        &[seeds::ATOM_CPI_AUTHORITY],
        &ids::AGENT_REGISTRY.to_bytes(),
    );
    pub const ATOM_CONFIG: ([u8; 32], u8) =
        derive_program_address(&[seeds::ATOM_CONFIG], &ids::REPUTATION_ENGINE.to_bytes());
}

/// Addresses of [`singletons`], for `#[account(address = ...)]`.
pub mod addresses {
    use super::singletons;
    use anchor_lang::prelude::Pubkey;

    pub const ROOT_CONFIG: Pubkey = Pubkey::new_from_array(singletons::ROOT_CONFIG.0);
    pub const ATOM_CPI_AUTHORITY: Pubkey = Pubkey::new_from_array(singletons::ATOM_CPI_AUTHORITY.0);
    pub const ATOM_CONFIG: Pubkey = Pubkey::new_from_array(singletons::ATOM_CONFIG.0);
}

pub fn root_config_pda() -> (Pubkey, u8) {
    (addresses::ROOT_CONFIG, singletons::ROOT_CONFIG.1)
}

pub fn registry_config_pda(collection: &Pubkey) -> (Pubkey, u8) {
    Pubkey::find_program_address(
        &[seeds::REGISTRY_CONFIG, collection.as_ref()],
        &ids::AGENT_REGISTRY,
    )
}

pub fn agent_account_pda(asset: &Pubkey) -> (Pubkey, u8) {
    Pubkey::find_program_address(&[seeds::AGENT, asset.as_ref()], &ids::AGENT_REGISTRY)
}

pub fn registry_cpi_authority_pda() -> (Pubkey, u8) {
    (
        addresses::ATOM_CPI_AUTHORITY,
        singletons::ATOM_CPI_AUTHORITY.1,
    )
}

pub fn atom_config_pda() -> (Pubkey, u8) {
    (addresses::ATOM_CONFIG, singletons::ATOM_CONFIG.1)
}

pub fn atom_stats_pda(asset: &Pubkey) -> (Pubkey, u8) {
    Pubkey::find_program_address(
        &[seeds::ATOM_STATS, asset.as_ref()],
        &ids::REPUTATION_ENGINE,
    )
}

/// The engine's `AtomConfig` (PDA `["atom_config"]`, 151 bytes): only the pause flag is read.
pub mod atom_config {
    pub const LEN: usize = 151;
    /// `paused`: while set, the engine refuses every `update_stats`, so the registry every
    /// feedback to an agent it rates.
    pub const PAUSED: usize = 145;
}

/// The engine's per-agent `AtomStats` account (561 bytes).
pub mod atom_stats {
    use super::{discriminators, ids};
    use anchor_lang::prelude::Pubkey;

    pub const LEN: usize = 561;
    pub const COLLECTION: usize = 8;
    pub const ASSET: usize = 40;
    pub const RISK_SCORE: usize = 549;
    /// The engine's trust tier, which the engine keeps equal to [`TIER_CONFIRMED`].
    pub const TIER_IMMEDIATE: usize = 551;
    /// The tier a candidacy is waiting to confirm (0: none). The real engine confirms it only
    /// after 8 engine epochs of 432 000 slots.
    pub const TIER_CANDIDATE: usize = 552;
    pub const TIER_CONFIRMED: usize = 555;
    pub const CONFIDENCE: usize = 557;
    pub const SCHEMA_VERSION: usize = 560;
    /// The only schema version the gate understands (a canary against layout changes).
    pub const SUPPORTED_SCHEMA: u8 = 1;
    pub const MAX_TIER: u8 = 4;

    /// The fields of an agent's reputation that policies look at.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Stats {
        /// The tier the engine holds now, vested or not: the higher of the trust tier (551)
        /// and the candidate tier (552). Gate mode immediate reads it.
        pub tier_immediate: u8,
        pub tier_confirmed: u8,
        /// 0..=255, lower is better.
        pub risk_score: u8,
        /// Basis points, 0..=10000.
        pub confidence: u16,
    }

    /// What reading an agent's stats account yielded.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Reputation {
        /// No account, zero lamports or empty data: the agent has no rating yet.
        Unrated,
        /// The account is not owned by the reputation engine.
        WrongOwner,
        /// Wrong size, discriminator, schema canary, or a tier out of range.
        SchemaMismatch,
        Rated(Stats),
    }

    /// The tier gate mode immediate compares: the higher of the trust tier and the tier a
    /// candidacy waits to confirm. On the real engine the trust tier IS the confirmed tier, so
    /// without the candidate immediate would mean confirmed; with it, a payee the engine
    /// already rates higher counts so before the 8 epochs of vesting have passed.
    pub fn immediate_tier(trust_tier: u8, candidate: u8) -> u8 {
        trust_tier.max(candidate)
    }

    /// Whether an account (its owning program and data) is the engine's AtomStats of
    /// `asset`. The engine creates an AtomStats only at the canonical PDA of
    /// `["atom_stats", asset]` and stores that asset in it, so this is the seeds check of an
    /// existing account without hashing.
    pub fn names(owner: &Pubkey, data: &[u8], asset: &Pubkey) -> bool {
        *owner == ids::REPUTATION_ENGINE
            && data.len() == LEN
            && data[..8] == discriminators::ATOM_STATS
            && data[ASSET..ASSET + 32] == asset.to_bytes()
    }

    /// Whether the account at `key` is where `asset`'s stats are or would be: the one that
    /// [`names`] the asset, else (no stats yet, or an account the engine would not have
    /// written) the canonical PDA itself, searched for. Anything else would let a rated
    /// agent pass as unrated.
    pub fn is_account_of(key: &Pubkey, owner: &Pubkey, data: &[u8], asset: &Pubkey) -> bool {
        names(owner, data, asset)
            || crate::pda::is_canonical(
                key,
                &[super::seeds::ATOM_STATS, asset.as_ref()],
                &ids::REPUTATION_ENGINE,
            )
    }

    /// [`is_account_of`] for an account as Anchor hands it over.
    pub fn info_is_account_of(info: &anchor_lang::prelude::AccountInfo, asset: &Pubkey) -> bool {
        info.try_borrow_data()
            .is_ok_and(|data| is_account_of(info.key, info.owner, &data, asset))
    }

    /// Reads a stats account as the gate sees it. Never fails: every malformed input maps to a
    /// variant so that a simulation always yields a decision.
    pub fn read(owner: &Pubkey, lamports: u64, data: &[u8]) -> Reputation {
        if lamports == 0 || data.is_empty() {
            return Reputation::Unrated;
        }
        if *owner != ids::REPUTATION_ENGINE {
            return Reputation::WrongOwner;
        }
        if data.len() != LEN
            || data[..8] != discriminators::ATOM_STATS
            || data[SCHEMA_VERSION] != SUPPORTED_SCHEMA
        {
            return Reputation::SchemaMismatch;
        }
        let (trust, candidate) = (data[TIER_IMMEDIATE], data[TIER_CANDIDATE]);
        let tier_confirmed = data[TIER_CONFIRMED];
        if trust > MAX_TIER || candidate > MAX_TIER || tier_confirmed > MAX_TIER {
            return Reputation::SchemaMismatch;
        }
        let tier_immediate = immediate_tier(trust, candidate);
        Reputation::Rated(Stats {
            tier_immediate,
            tier_confirmed,
            risk_score: data[RISK_SCORE],
            confidence: u16::from_le_bytes([data[CONFIDENCE], data[CONFIDENCE + 1]]),
        })
    }
}

/// The registry's per-agent `AgentAccount` (up to 748 bytes).
///
/// Borsh-packed as Anchor stores it: the fields up to the agent wallet sit at fixed offsets;
/// the wallet is an `Option<Pubkey>` (1 byte when absent, 33 when set), so every later field
/// moves by [`WALLET_SHIFT`] (32) once a wallet is set. After the wallet come the registry's
/// three hash chains, each a 32-byte keccak digest then a u64 LE count: the feedback given to
/// the agent, the responses appended to that feedback, the feedback revoked. The offsets
/// below are those without a wallet:
///
/// | field | without a wallet | with one |
/// |---|---|---|
/// | feedback digest | 139..171 | 171..203 |
/// | feedback count | 171..179 | 203..211 |
/// | response digest | 179..211 | 211..243 |
/// | response count | 211..219 | 243..251 |
/// | revoke digest | 219..251 | 251..283 |
/// | revoke count | 251..259 | 283..291 |
/// | parent asset, `Option<Pubkey>` | 259 | 291 |
///
/// Then (each moved by 32 more when a parent asset is set): parent lock and collection-pointer
/// lock (one bool each), the agent URI (Borsh string, ≤ 250 bytes), the asset's name (≤ 32)
/// and the collection pointer (≤ 128); the largest account is [`MAX_LEN`] bytes.
pub mod agent_account {
    use super::discriminators;
    use anchor_lang::prelude::Pubkey;

    pub const MAX_LEN: usize = 748;
    pub const COLLECTION: usize = 8;
    pub const CREATOR: usize = 40;
    /// The asset's owner as cached by the registry.
    pub const OWNER: usize = 72;
    pub const ASSET: usize = 104;
    pub const BUMP: usize = 136;
    pub const REPUTATION_ENABLED: usize = 137;
    /// Borsh `Option<Pubkey>`: one tag byte, then the 32-byte agent wallet when the tag is 1.
    pub const AGENT_WALLET: usize = 138;
    /// The shortest account that holds every field the gate reads (wallet tag included).
    pub const MIN_LEN: usize = AGENT_WALLET + 1;
    /// How far the fields after the wallet move when a wallet is set.
    pub const WALLET_SHIFT: usize = 32;
    /// keccak digest of the feedback chain (without a wallet; see [`wallet_shift`]).
    pub const FEEDBACK_DIGEST: usize = AGENT_WALLET + 1;
    /// u64 LE: feedback given to the agent; the next feedback's index.
    pub const FEEDBACK_COUNT: usize = FEEDBACK_DIGEST + 32;
    /// keccak digest of the response chain.
    pub const RESPONSE_DIGEST: usize = FEEDBACK_COUNT + 8;
    /// u64 LE: responses appended to the agent's feedback.
    pub const RESPONSE_COUNT: usize = RESPONSE_DIGEST + 32;
    /// keccak digest of the revocation chain.
    pub const REVOKE_DIGEST: usize = RESPONSE_COUNT + 8;
    /// u64 LE: feedback revoked.
    pub const REVOKE_COUNT: usize = REVOKE_DIGEST + 32;
    /// Borsh `Option<Pubkey>`: the parent asset.
    pub const PARENT_ASSET: usize = REVOKE_COUNT + 8;
    /// The longest agent URI, asset name and collection pointer the registry stores.
    pub const MAX_AGENT_URI_LEN: usize = 250;
    pub const MAX_NFT_NAME_LEN: usize = 32;
    pub const MAX_COL_LEN: usize = 128;

    // Both options set and every string at its longest fill the account exactly.
    const _: () = assert!(
        PARENT_ASSET
            + WALLET_SHIFT
            + 33
            + 2
            + (4 + MAX_AGENT_URI_LEN)
            + (4 + MAX_NFT_NAME_LEN)
            + (4 + MAX_COL_LEN)
            == MAX_LEN
    );

    /// How far the fields after the wallet have moved: 0 without a wallet, [`WALLET_SHIFT`]
    /// with one; `None` when `data` is not an AgentAccount (too short, another discriminator,
    /// a wallet tag other than 0 and 1).
    pub fn wallet_shift(data: &[u8]) -> Option<usize> {
        if data.len() < MIN_LEN || data[..8] != discriminators::AGENT_ACCOUNT {
            return None;
        }
        match data[AGENT_WALLET] {
            0 => Some(0),
            1 => Some(WALLET_SHIFT),
            _ => None,
        }
    }

    fn u64_after_wallet(data: &[u8], offset: usize) -> Option<u64> {
        let at = offset + wallet_shift(data)?;
        let bytes: [u8; 8] = data.get(at..at + 8)?.try_into().ok()?;
        Some(u64::from_le_bytes(bytes))
    }

    fn digest_after_wallet(data: &[u8], offset: usize) -> Option<[u8; 32]> {
        let at = offset + wallet_shift(data)?;
        data.get(at..at + 32)?.try_into().ok()
    }

    /// The agent's feedback count, at 171 without a wallet and 203 with one: the index the
    /// next feedback gets, and the bound of the indices `append_response` accepts. `None`
    /// when `data` is not an AgentAccount. The caller checks the owning program and the PDA.
    pub fn feedback_count(data: &[u8]) -> Option<u64> {
        u64_after_wallet(data, FEEDBACK_COUNT)
    }

    /// The responses appended to the agent's feedback (211 without a wallet, 243 with one).
    pub fn response_count(data: &[u8]) -> Option<u64> {
        u64_after_wallet(data, RESPONSE_COUNT)
    }

    /// The feedback revoked (251 without a wallet, 283 with one).
    pub fn revoke_count(data: &[u8]) -> Option<u64> {
        u64_after_wallet(data, REVOKE_COUNT)
    }

    /// The feedback chain's digest (139 without a wallet, 171 with one).
    pub fn feedback_digest(data: &[u8]) -> Option<[u8; 32]> {
        digest_after_wallet(data, FEEDBACK_DIGEST)
    }

    /// The response chain's digest (179 without a wallet, 211 with one).
    pub fn response_digest(data: &[u8]) -> Option<[u8; 32]> {
        digest_after_wallet(data, RESPONSE_DIGEST)
    }

    /// The fields of an AgentAccount that trust-gate uses.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct AgentView {
        pub collection: Pubkey,
        pub owner: Pubkey,
        pub asset: Pubkey,
        pub reputation_enabled: bool,
        pub agent_wallet: Option<Pubkey>,
    }

    impl AgentView {
        /// The agent wallet, while the owner who set it still owns the asset.
        ///
        /// The registry syncs its cached `owner` whenever a wallet is set (`set_agent_wallet`
        /// checks the live owner and stores it) and clears the wallet whenever it learns of a
        /// new owner (`sync_owner`, `transfer_agent`). A transfer made on MPL Core directly
        /// leaves both stale: the cached owner is then not the live one, and the wallet is
        /// the previous owner's key.
        pub fn wallet(&self, live_owner: &Pubkey) -> Option<Pubkey> {
            self.agent_wallet.filter(|_| self.owner == *live_owner)
        }

        /// Where payments to this agent must go: its agent wallet (see [`Self::wallet`]),
        /// else the asset's live owner.
        pub fn recipient(&self, live_owner: &Pubkey) -> Pubkey {
            self.wallet(live_owner).unwrap_or(*live_owner)
        }

        /// Whether `signer` may act as the agent: the asset's live owner, or the agent wallet
        /// that owner set.
        pub fn may_sign(&self, live_owner: &Pubkey, signer: &Pubkey) -> bool {
            signer == live_owner || self.wallet(live_owner) == Some(*signer)
        }
    }

    fn key_at(data: &[u8], offset: usize) -> Option<Pubkey> {
        let bytes: [u8; 32] = data.get(offset..offset + 32)?.try_into().ok()?;
        Some(Pubkey::new_from_array(bytes))
    }

    /// Parses the account data; `None` when it is not an AgentAccount. The caller checks the
    /// owning program and the PDA.
    pub fn read(data: &[u8]) -> Option<AgentView> {
        if data.len() < MIN_LEN || data[..8] != discriminators::AGENT_ACCOUNT {
            return None;
        }
        let agent_wallet = match data[AGENT_WALLET] {
            0 => None,
            1 => Some(key_at(data, AGENT_WALLET + 1)?),
            _ => return None,
        };
        Some(AgentView {
            collection: key_at(data, COLLECTION)?,
            owner: key_at(data, OWNER)?,
            asset: key_at(data, ASSET)?,
            reputation_enabled: data[REPUTATION_ENABLED] != 0,
            agent_wallet,
        })
    }

    /// Whether an account (its owning program and data) is the registry's AgentAccount of
    /// `asset`. The registry creates an AgentAccount only at the PDA of
    /// `["agent", asset]` and stores that asset in it, so this is the seeds check without
    /// hashing.
    pub fn names(owner: &Pubkey, data: &[u8], asset: &Pubkey) -> bool {
        is_agent_account(owner, data) && data[ASSET..ASSET + 32] == asset.to_bytes()
    }

    /// Whether an account is an AgentAccount of the registry at all (of any asset).
    pub fn is_agent_account(owner: &Pubkey, data: &[u8]) -> bool {
        *owner == super::ids::AGENT_REGISTRY
            && data.len() >= MIN_LEN
            && data[..8] == discriminators::AGENT_ACCOUNT
    }

    /// [`is_agent_account`] for an account as Anchor hands it over.
    pub fn info_is_agent_account(info: &anchor_lang::prelude::AccountInfo) -> bool {
        info.try_borrow_data()
            .is_ok_and(|data| is_agent_account(info.owner, &data))
    }

    /// [`names`] for an account as Anchor hands it over.
    pub fn info_names(info: &anchor_lang::prelude::AccountInfo, asset: &Pubkey) -> bool {
        info.try_borrow_data()
            .is_ok_and(|data| names(info.owner, &data, asset))
    }
}

/// MPL Core's asset account (`BaseAssetV1`): the agent's identity token, whose owner is the
/// agent's live owner. The registry's `AgentAccount.owner` is only a cache of it.
pub mod core_asset {
    use super::ids;
    use anchor_lang::prelude::Pubkey;

    /// MPL Core's `Key::AssetV1`, the first byte of an asset account.
    pub const KEY_ASSET_V1: u8 = 1;
    pub const KEY: usize = 0;
    /// 1..33: the asset's owner.
    pub const OWNER: usize = 1;
    /// 33: the update authority's Borsh tag; 34..66 its key for `Address` and `Collection`.
    pub const UPDATE_AUTHORITY_KIND: usize = 33;
    pub const UPDATE_AUTHORITY: usize = 34;
    /// MPL Core's `UpdateAuthority::Collection` tag (the registry's assets are in its
    /// collection).
    pub const UPDATE_AUTHORITY_COLLECTION: u8 = 2;
    /// The shortest data that holds the owner.
    pub const MIN_LEN: usize = OWNER + 32;

    /// The asset's live owner; `None` unless MPL Core owns the account and it is an AssetV1.
    pub fn owner(program_owner: &Pubkey, data: &[u8]) -> Option<Pubkey> {
        if *program_owner != ids::MPL_CORE || data.first() != Some(&KEY_ASSET_V1) {
            return None;
        }
        let bytes: [u8; 32] = data.get(OWNER..MIN_LEN)?.try_into().ok()?;
        Some(Pubkey::new_from_array(bytes))
    }

    /// MPL Core's `Key::Uninitialized`: what `BurnV1` leaves in a burned asset's one byte.
    pub const KEY_UNINITIALIZED: u8 = 0;

    /// Whether the account at an asset's address says the asset is gone: MPL Core's
    /// `BurnV1` leaves one byte, `Key::Uninitialized`, in an account MPL Core still owns (so
    /// that the address cannot hold an asset again); an account closed outright is an empty
    /// account of the system program. A burned asset has no owner.
    pub fn is_burned(program_owner: &Pubkey, data: &[u8]) -> bool {
        (*program_owner == ids::MPL_CORE && data == [KEY_UNINITIALIZED])
            || (*program_owner == anchor_lang::system_program::ID && data.is_empty())
    }
}

/// An agent as the gate judges it: the registry's AgentAccount of its asset (for the agent
/// wallet) and the live owner of the asset itself, read from the accounts' bytes.
pub mod live_agent {
    use super::{agent_account, core_asset};
    use anchor_lang::prelude::Pubkey;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct LiveAgent {
        pub view: agent_account::AgentView,
        /// The asset's owner now (the AgentAccount's `owner` only caches it).
        pub live_owner: Pubkey,
    }

    impl LiveAgent {
        /// Where payments to the agent must go (see [`agent_account::AgentView::recipient`]).
        pub fn recipient(&self) -> Pubkey {
            self.view.recipient(&self.live_owner)
        }

        /// The keys that may act as the agent: its live owner and, when set for that owner,
        /// its agent wallet.
        pub fn keys(&self) -> [Option<Pubkey>; 2] {
            [Some(self.live_owner), self.view.wallet(&self.live_owner)]
        }

        /// Whether `signer` may act as the agent (see [`agent_account::AgentView::may_sign`]).
        pub fn may_sign(&self, signer: &Pubkey) -> bool {
            self.view.may_sign(&self.live_owner, signer)
        }
    }

    /// Which of the two accounts is not what it must be.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Problem {
        /// Not an AgentAccount, or one of another asset.
        AgentAccount,
        /// Not an MPL Core asset.
        Asset,
    }

    /// Reads the agent of the asset at `asset_key` (owned by `asset_owner`, holding
    /// `asset_data`) from its AgentAccount's `agent_data`. The caller checks the AgentAccount's
    /// owning program and PDA.
    pub fn read(
        agent_data: &[u8],
        asset_key: &Pubkey,
        asset_owner: &Pubkey,
        asset_data: &[u8],
    ) -> Result<LiveAgent, Problem> {
        let view = agent_account::read(agent_data)
            .filter(|v| v.asset == *asset_key)
            .ok_or(Problem::AgentAccount)?;
        let live_owner = core_asset::owner(asset_owner, asset_data).ok_or(Problem::Asset)?;
        Ok(LiveAgent { view, live_owner })
    }
}

/// Instruction data of the registry and engine instructions trust-gate calls (Anchor layout:
/// discriminator, then the Borsh-encoded arguments in order).
pub mod instructions {
    use super::discriminators;
    use anchor_lang::prelude::*;

    /// Bounds the registry enforces on `give_feedback`.
    pub const MAX_TAG_LEN: usize = 32;
    pub const MAX_URI_LEN: usize = 250;
    pub const MAX_VALUE_DECIMALS: u8 = 18;
    pub const MAX_SCORE: u8 = 100;

    /// Arguments of the registry's `give_feedback`, in wire order.
    #[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, PartialEq, Eq)]
    pub struct GiveFeedbackArgs {
        pub value: i128,
        pub value_decimals: u8,
        pub score: Option<u8>,
        pub feedback_file_hash: Option<[u8; 32]>,
        pub tag1: String,
        pub tag2: String,
        pub endpoint: String,
        pub feedback_uri: String,
    }

    /// Arguments of the registry's `append_response`, in wire order: a response (its URI, at
    /// most [`MAX_URI_LEN`] bytes, and a hash of its content) to the feedback number
    /// `feedback_index` of the agent, given by `client_address` with the seal hash
    /// `seal_hash`. The registry checks only that the index is below the agent's feedback
    /// count and the URI's length; the rest goes into its response chain as given.
    #[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, PartialEq, Eq)]
    pub struct AppendResponseArgs {
        pub client_address: Pubkey,
        pub feedback_index: u64,
        pub response_uri: String,
        pub response_hash: [u8; 32],
        pub seal_hash: [u8; 32],
    }

    /// Arguments of the registry's `register_with_options`, in wire order.
    #[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, PartialEq, Eq)]
    pub struct RegisterWithOptionsArgs {
        pub agent_uri: String,
        pub atom_enabled: bool,
    }

    fn with_discriminator(discriminator: [u8; 8], args: &impl AnchorSerialize) -> Vec<u8> {
        let mut data = discriminator.to_vec();
        // Writing into a Vec cannot fail.
        args.serialize(&mut data).expect("serialize into Vec");
        data
    }

    pub fn give_feedback_data(args: &GiveFeedbackArgs) -> Vec<u8> {
        with_discriminator(discriminators::GIVE_FEEDBACK, args)
    }

    pub fn append_response_data(args: &AppendResponseArgs) -> Vec<u8> {
        with_discriminator(discriminators::APPEND_RESPONSE, args)
    }

    pub fn register_with_options_data(args: &RegisterWithOptionsArgs) -> Vec<u8> {
        with_discriminator(discriminators::REGISTER_WITH_OPTIONS, args)
    }

    pub fn initialize_stats_data() -> Vec<u8> {
        discriminators::INITIALIZE_STATS.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::atom_stats::{self, Reputation, Stats};
    use super::*;

    #[test]
    fn the_singleton_constants_are_the_pdas() {
        let find = |seed: &[u8], program: &Pubkey| Pubkey::find_program_address(&[seed], program);
        assert_eq!(
            root_config_pda(),
            find(seeds::ROOT_CONFIG, &ids::AGENT_REGISTRY)
        );
        assert_eq!(
            registry_cpi_authority_pda(),
            find(seeds::ATOM_CPI_AUTHORITY, &ids::AGENT_REGISTRY)
        );
        assert_eq!(
            atom_config_pda(),
            find(seeds::ATOM_CONFIG, &ids::REPUTATION_ENGINE)
        );
    }

    fn stats_bytes(tier_i: u8, tier_c: u8, risk: u8, conf: u16) -> Vec<u8> {
        let mut d = vec![0u8; atom_stats::LEN];
        d[..8].copy_from_slice(&discriminators::ATOM_STATS);
        d[atom_stats::TIER_IMMEDIATE] = tier_i;
        d[atom_stats::TIER_CONFIRMED] = tier_c;
        d[atom_stats::RISK_SCORE] = risk;
        d[atom_stats::CONFIDENCE..atom_stats::CONFIDENCE + 2].copy_from_slice(&conf.to_le_bytes());
        d[atom_stats::SCHEMA_VERSION] = 1;
        d
    }

    #[test]
    fn reads_rated_stats_at_the_documented_offsets() {
        let d = stats_bytes(3, 2, 17, 7_500);
        assert_eq!(
            atom_stats::read(&ids::REPUTATION_ENGINE, 1, &d),
            Reputation::Rated(Stats {
                tier_immediate: 3,
                tier_confirmed: 2,
                risk_score: 17,
                confidence: 7_500
            })
        );
    }

    #[test]
    fn unrated_wrong_owner_and_schema_mismatch() {
        let d = stats_bytes(1, 1, 0, 0);
        assert_eq!(
            atom_stats::read(&ids::REPUTATION_ENGINE, 0, &d),
            Reputation::Unrated
        );
        assert_eq!(
            atom_stats::read(&ids::REPUTATION_ENGINE, 5, &[]),
            Reputation::Unrated
        );
        assert_eq!(
            atom_stats::read(&Pubkey::default(), 5, &d),
            Reputation::WrongOwner
        );
        let mut bad = d.clone();
        bad[atom_stats::SCHEMA_VERSION] = 2;
        assert_eq!(
            atom_stats::read(&ids::REPUTATION_ENGINE, 5, &bad),
            Reputation::SchemaMismatch
        );
        let mut short = d.clone();
        short.pop();
        assert_eq!(
            atom_stats::read(&ids::REPUTATION_ENGINE, 5, &short),
            Reputation::SchemaMismatch
        );
        for (i, c) in [(5, 0), (0, 5)] {
            let t = stats_bytes(i, c, 0, 0);
            assert_eq!(
                atom_stats::read(&ids::REPUTATION_ENGINE, 5, &t),
                Reputation::SchemaMismatch
            );
        }
        let mut disc = d;
        disc[0] ^= 1;
        assert_eq!(
            atom_stats::read(&ids::REPUTATION_ENGINE, 5, &disc),
            Reputation::SchemaMismatch
        );
    }

    #[test]
    fn agent_account_reader_and_recipient() {
        let owner = Pubkey::new_unique();
        let wallet = Pubkey::new_unique();
        let mut d = vec![0u8; agent_account::AGENT_WALLET + 33];
        d[..8].copy_from_slice(&discriminators::AGENT_ACCOUNT);
        d[agent_account::OWNER..agent_account::OWNER + 32].copy_from_slice(owner.as_ref());
        let view = agent_account::read(&d).unwrap();
        assert_eq!(view.recipient(&owner), owner);
        d[agent_account::AGENT_WALLET] = 1;
        d[agent_account::AGENT_WALLET + 1..].copy_from_slice(wallet.as_ref());
        let view = agent_account::read(&d).unwrap();
        assert_eq!(view.recipient(&owner), wallet);
        assert!(view.may_sign(&owner, &wallet) && view.may_sign(&owner, &owner));
        // Transferred on MPL Core without a sync: the wallet is the previous owner's.
        let buyer = Pubkey::new_unique();
        assert_eq!(view.wallet(&buyer), None);
        assert_eq!(view.recipient(&buyer), buyer);
        assert!(view.may_sign(&buyer, &buyer));
        assert!(!view.may_sign(&buyer, &wallet) && !view.may_sign(&buyer, &owner));
        d[agent_account::AGENT_WALLET] = 7;
        assert!(agent_account::read(&d).is_none());
        d[0] ^= 1;
        assert!(agent_account::read(&d).is_none());
    }

    #[test]
    fn agent_account_counts_follow_the_wallet_option() {
        assert_eq!(
            [
                agent_account::FEEDBACK_DIGEST,
                agent_account::FEEDBACK_COUNT,
                agent_account::RESPONSE_DIGEST,
                agent_account::RESPONSE_COUNT,
                agent_account::REVOKE_DIGEST,
                agent_account::REVOKE_COUNT,
                agent_account::PARENT_ASSET,
            ],
            [139, 171, 179, 211, 219, 251, 259]
        );
        let mut d = vec![0u8; agent_account::MAX_LEN];
        d[..8].copy_from_slice(&discriminators::AGENT_ACCOUNT);
        let put =
            |d: &mut Vec<u8>, at: usize, v: u64| d[at..at + 8].copy_from_slice(&v.to_le_bytes());
        put(&mut d, 171, 7);
        put(&mut d, 211, 3);
        put(&mut d, 251, 1);
        d[139] = 0xf1;
        d[179] = 0xe2;
        assert_eq!(agent_account::feedback_count(&d), Some(7));
        assert_eq!(agent_account::response_count(&d), Some(3));
        assert_eq!(agent_account::revoke_count(&d), Some(1));
        assert_eq!(agent_account::feedback_digest(&d).unwrap()[0], 0xf1);
        assert_eq!(agent_account::response_digest(&d).unwrap()[0], 0xe2);
        // A wallet moves them all by 32.
        d[agent_account::AGENT_WALLET] = 1;
        put(&mut d, 203, 9);
        put(&mut d, 243, 4);
        assert_eq!(agent_account::feedback_count(&d), Some(9));
        assert_eq!(agent_account::response_count(&d), Some(4));
        assert_eq!(
            agent_account::feedback_digest(&d).unwrap()[..8],
            7u64.to_le_bytes()
        );
        // Not an AgentAccount: another wallet tag, another discriminator, too short.
        d[agent_account::AGENT_WALLET] = 2;
        assert_eq!(agent_account::feedback_count(&d), None);
        d[agent_account::AGENT_WALLET] = 0;
        assert_eq!(agent_account::feedback_count(&d[..178]), None);
        assert_eq!(agent_account::feedback_count(&d[..179]), Some(7));
        d[0] ^= 1;
        assert_eq!(agent_account::feedback_count(&d), None);
    }

    #[test]
    fn a_live_agent_needs_its_own_agent_account_and_an_mpl_core_asset() {
        let (asset, owner) = (Pubkey::new_unique(), Pubkey::new_unique());
        let mut agent = vec![0u8; agent_account::MIN_LEN];
        agent[..8].copy_from_slice(&discriminators::AGENT_ACCOUNT);
        agent[agent_account::ASSET..agent_account::ASSET + 32].copy_from_slice(asset.as_ref());
        let mut core = vec![0u8; core_asset::MIN_LEN];
        core[core_asset::KEY] = core_asset::KEY_ASSET_V1;
        core[core_asset::OWNER..core_asset::MIN_LEN].copy_from_slice(owner.as_ref());
        let read =
            |asset: &Pubkey, program: &Pubkey| live_agent::read(&agent, asset, program, &core);
        let live = read(&asset, &ids::MPL_CORE).unwrap();
        assert_eq!((live.live_owner, live.recipient()), (owner, owner));
        assert!(live.may_sign(&owner));
        assert_eq!(
            read(&Pubkey::new_unique(), &ids::MPL_CORE),
            Err(live_agent::Problem::AgentAccount)
        );
        assert_eq!(
            read(&asset, &ids::AGENT_REGISTRY),
            Err(live_agent::Problem::Asset)
        );
    }

    #[test]
    fn core_asset_owner_needs_mpl_core_and_an_asset_v1() {
        let owner = Pubkey::new_unique();
        let mut d = vec![0u8; 66];
        d[core_asset::KEY] = core_asset::KEY_ASSET_V1;
        d[core_asset::OWNER..core_asset::OWNER + 32].copy_from_slice(owner.as_ref());
        assert_eq!(core_asset::owner(&ids::MPL_CORE, &d), Some(owner));
        assert_eq!(core_asset::owner(&ids::AGENT_REGISTRY, &d), None);
        assert_eq!(core_asset::owner(&ids::MPL_CORE, &d[..32]), None);
        d[core_asset::KEY] = 5; // CollectionV1
        assert_eq!(core_asset::owner(&ids::MPL_CORE, &d), None);
    }

    #[test]
    fn a_burned_asset_is_mpl_cores_one_uninitialized_byte_or_an_empty_system_account() {
        let system = anchor_lang::system_program::ID;
        assert!(core_asset::is_burned(&ids::MPL_CORE, &[0]));
        assert!(core_asset::is_burned(&system, &[]));
        // Not burned: an asset, another byte, more bytes, another owner, a system account
        // holding data.
        let mut asset = vec![0u8; 66];
        asset[core_asset::KEY] = core_asset::KEY_ASSET_V1;
        assert!(!core_asset::is_burned(&ids::MPL_CORE, &asset));
        assert!(!core_asset::is_burned(&ids::MPL_CORE, &[1]));
        assert!(!core_asset::is_burned(&ids::MPL_CORE, &[0, 0]));
        assert!(!core_asset::is_burned(&ids::MPL_CORE, &[]));
        assert!(!core_asset::is_burned(&ids::AGENT_REGISTRY, &[0]));
        assert!(!core_asset::is_burned(&ids::AGENT_REGISTRY, &[]));
        assert!(!core_asset::is_burned(&system, &[0]));
    }

    #[test]
    fn discriminators_match_their_names() {
        use sha2::{Digest, Sha256};
        let d = |s: &str| -> [u8; 8] { Sha256::digest(s.as_bytes())[..8].try_into().unwrap() };
        assert_eq!(discriminators::AGENT_ACCOUNT, d("account:AgentAccount"));
        assert_eq!(discriminators::ATOM_STATS, d("account:AtomStats"));
        assert_eq!(
            discriminators::REGISTER_WITH_OPTIONS,
            d("global:register_with_options")
        );
        assert_eq!(
            discriminators::INITIALIZE_STATS,
            d("global:initialize_stats")
        );
        assert_eq!(discriminators::GIVE_FEEDBACK, d("global:give_feedback"));
        assert_eq!(discriminators::APPEND_RESPONSE, d("global:append_response"));
    }
}
