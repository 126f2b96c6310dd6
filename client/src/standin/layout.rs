//! Constants, byte offsets and argument structs of the stand-in that
//! `trust_gate_program_common::external` does not carry.
//!
//! `external` holds the facts of the real registry and engine (ids, seeds, the discriminators
//! and offsets the gate reads). Everything here is either a fact the gate never reads (the
//! discriminators of the other instructions and accounts, computed the Anchor way; the
//! AgentAccount's fields after the counts, in [`agent_tail`]) or a choice of the stand-in
//! (the AtomStats bookkeeping, the localnet-only admin accounts). Tests read these offsets,
//! so they are part of the contract.

use anchor_lang::prelude::*;
use trust_gate_program_common::external::agent_account;

/// Anchor discriminators missing from `external::discriminators`: instruction =
/// sha256("global:<name>")[..8], account = sha256("account:<Name>")[..8].
pub mod discriminators {
    /// Registry `initialize` (localnet-only admin).
    pub const INITIALIZE: [u8; 8] = [175, 175, 109, 31, 13, 152, 155, 237];
    /// Registry `set_agent_wallet`.
    pub const SET_AGENT_WALLET: [u8; 8] = [154, 87, 251, 23, 51, 12, 4, 150];
    /// Engine `initialize_config` (localnet-only admin).
    pub const INITIALIZE_CONFIG: [u8; 8] = [208, 127, 21, 1, 194, 190, 196, 70];
    /// Engine `update_stats` (CPI from the registry only).
    pub const UPDATE_STATS: [u8; 8] = [145, 138, 9, 150, 178, 31, 158, 244];
    /// Engine `update_config` (the config authority; the stand-in only pauses and resumes).
    pub const UPDATE_CONFIG: [u8; 8] = [29, 158, 252, 191, 10, 83, 219, 99];
    /// Engine `set_stats` (localnet-only admin).
    pub const SET_STATS: [u8; 8] = [237, 65, 202, 246, 242, 18, 199, 206];

    pub const ROOT_CONFIG: [u8; 8] = [42, 216, 8, 82, 19, 209, 223, 246];
    pub const REGISTRY_CONFIG: [u8; 8] = [23, 118, 10, 246, 173, 231, 243, 156];
    pub const ATOM_CONFIG: [u8; 8] = [239, 137, 245, 161, 255, 250, 190, 145];
}

/// Registry `RootConfig` (PDA `["root_config"]`).
pub mod root_config {
    /// 8..40: the base collection (a fact of the real registry: the gate and SDK read it).
    pub const BASE_COLLECTION: usize = 8;
    /// 40..72: who ran `initialize` (stand-in choice).
    pub const AUTHORITY: usize = 40;
    /// 72: the PDA bump.
    pub const BUMP: usize = 72;
    pub const LEN: usize = 73;
}

/// Registry `RegistryConfig` (PDA `["registry_config", collection]`). Stand-in layout.
pub mod registry_config {
    pub const COLLECTION: usize = 8;
    pub const AUTHORITY: usize = 40;
    pub const BUMP: usize = 72;
    pub const LEN: usize = 73;
}

/// The collection account created by registry `initialize`. There is no MPL Core on the
/// localnet: the collection is a small account owned by the registry stand-in whose first
/// bytes mimic MPL Core's `CollectionV1` (key byte 5, then the update authority).
pub mod collection {
    /// MPL Core's `Key::CollectionV1`.
    pub const KEY_COLLECTION_V1: u8 = 5;
    pub const KEY: usize = 0;
    /// 1..33: update authority (the payer of `initialize`).
    pub const UPDATE_AUTHORITY: usize = 1;
    /// 33..41: u64 LE, agents registered into this collection (stand-in choice; it is why
    /// `register_with_options` takes the collection writable).
    pub const AGENT_COUNT: usize = 33;
    pub const LEN: usize = 41;
}

/// An asset: MPL Core's `BaseAssetV1`, written by the MPL Core stand-in
/// ([`crate::standin::core`]) or by MPL Core itself.
pub mod asset {
    pub use trust_gate_program_common::external::core_asset::{
        KEY, KEY_ASSET_V1, OWNER, UPDATE_AUTHORITY_COLLECTION, UPDATE_AUTHORITY_KIND,
    };
    /// 34..66: the collection, when the update-authority tag is
    /// [`UPDATE_AUTHORITY_COLLECTION`].
    pub const COLLECTION: usize = trust_gate_program_common::external::core_asset::UPDATE_AUTHORITY;
    /// The head that holds the key, the owner and a keyed update authority; the name and
    /// the uri follow.
    pub const HEAD_LEN: usize = COLLECTION + 32;
}

/// The `AgentAccount` after the fields `external::agent_account` reads for the gate (which end
/// with the Borsh `Option<Pubkey>` agent wallet at 138): the real registry's layout, which the
/// stand-in keeps byte for byte.
///
/// The account is allocated at `agent_account::MAX_LEN` (748) bytes and Borsh-packed as
/// Anchor packs it: the wallet option takes 1 byte when `None` and 33 when `Some`, so the tail
/// starts at [`TAIL_WITHOUT_WALLET`] (139) or [`TAIL_WITH_WALLET`] (171). From the tail
/// (absolute offsets without a wallet in brackets; `external::agent_account` names them):
/// - `+0..+32` (139): feedback digest — kept as the real registry computes it
///   ([`crate::standin::chains`]);
/// - `+32..+40` (171): u64 LE feedback count;
/// - `+40..+72` (179): response digest — kept as the real registry computes it;
/// - `+72..+80` (211): u64 LE response count (`append_response`);
/// - `+80..+112` (219): revoke digest, `+112..+120` (251): u64 LE revoke count — **not
///   modelled**: the stand-in has no `revoke_feedback`, they stay zero;
/// - `+120` (259): the parent asset, `Option<Pubkey>` — **not modelled**: always `None` (one
///   zero byte);
/// - `+121` (260) parent lock, `+122` (261) collection-pointer lock — **not modelled**: false;
/// - `+123` (262): the agent URI as a Borsh string (u32 LE length, then ≤ 250 UTF-8 bytes);
/// - then the asset's name as a Borsh string ("Agent", as the real registry and the stand-in
///   name the asset), then the collection pointer, an empty Borsh string (**not modelled**);
/// - the rest of the 748 bytes is zero.
///
/// [`Tail`] is the whole tail, Borsh-encoded as the registry stores it.
pub mod agent_tail {
    use super::agent_account;
    use anchor_lang::prelude::*;

    pub const TAIL_WITHOUT_WALLET: usize = agent_account::AGENT_WALLET + 1;
    pub const TAIL_WITH_WALLET: usize = TAIL_WITHOUT_WALLET + agent_account::WALLET_SHIFT;
    /// Offsets from the tail (the same fields `external::agent_account` places absolutely).
    pub const FEEDBACK_DIGEST: usize = agent_account::FEEDBACK_DIGEST - TAIL_WITHOUT_WALLET;
    pub const FEEDBACK_COUNT: usize = agent_account::FEEDBACK_COUNT - TAIL_WITHOUT_WALLET;
    pub const RESPONSE_DIGEST: usize = agent_account::RESPONSE_DIGEST - TAIL_WITHOUT_WALLET;
    pub const RESPONSE_COUNT: usize = agent_account::RESPONSE_COUNT - TAIL_WITHOUT_WALLET;
    pub const REVOKE_DIGEST: usize = agent_account::REVOKE_DIGEST - TAIL_WITHOUT_WALLET;
    pub const REVOKE_COUNT: usize = agent_account::REVOKE_COUNT - TAIL_WITHOUT_WALLET;
    pub const PARENT_ASSET: usize = agent_account::PARENT_ASSET - TAIL_WITHOUT_WALLET;
    /// Offsets from the tail while no parent asset is set (always, on the stand-in).
    pub const PARENT_LOCKED: usize = PARENT_ASSET + 1;
    pub const COL_LOCKED: usize = PARENT_LOCKED + 1;
    /// The Borsh agent URI.
    pub const AGENT_URI: usize = COL_LOCKED + 1;
    pub use agent_account::{MAX_AGENT_URI_LEN, MAX_COL_LEN, MAX_NFT_NAME_LEN};
    /// The name the registry gives an agent's asset and keeps in `nft_name`.
    pub const NFT_NAME: &str = "Agent";

    /// The fields from the agent wallet on, in the registry's order.
    #[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, Default, PartialEq, Eq)]
    pub struct Tail {
        pub agent_wallet: Option<Pubkey>,
        pub feedback_digest: [u8; 32],
        pub feedback_count: u64,
        pub response_digest: [u8; 32],
        pub response_count: u64,
        pub revoke_digest: [u8; 32],
        pub revoke_count: u64,
        pub parent_asset: Option<Pubkey>,
        pub parent_locked: bool,
        pub col_locked: bool,
        pub agent_uri: String,
        pub nft_name: String,
        pub col: String,
    }

    impl Tail {
        /// A newly registered agent's tail.
        pub fn registered(agent_uri: &str) -> Tail {
            Tail {
                agent_uri: agent_uri.to_string(),
                nft_name: NFT_NAME.to_string(),
                ..Tail::default()
            }
        }

        /// Whether every string is within the registry's bounds (so the tail fits in the
        /// account).
        pub fn in_bounds(&self) -> bool {
            self.agent_uri.len() <= MAX_AGENT_URI_LEN
                && self.nft_name.len() <= MAX_NFT_NAME_LEN
                && self.col.len() <= MAX_COL_LEN
        }
    }

    /// Where the tail starts, from the wallet tag; `None` when `data` is not an AgentAccount.
    pub fn offset(data: &[u8]) -> Option<usize> {
        Some(TAIL_WITHOUT_WALLET + agent_account::wallet_shift(data)?)
    }

    /// The whole tail; `None` when it does not decode or a string is out of bounds. Bytes
    /// after the collection pointer are ignored, as Anchor ignores them.
    pub fn read(data: &[u8]) -> Option<Tail> {
        agent_account::wallet_shift(data)?;
        let mut rest = &data[agent_account::AGENT_WALLET..];
        Tail::deserialize(&mut rest).ok().filter(Tail::in_bounds)
    }

    /// The agent's feedback count (`external::agent_account::feedback_count`).
    pub fn feedback_count(data: &[u8]) -> Option<u64> {
        agent_account::feedback_count(data)
    }

    /// The responses appended to the agent's feedback.
    pub fn response_count(data: &[u8]) -> Option<u64> {
        agent_account::response_count(data)
    }

    /// The agent URI.
    pub fn agent_uri(data: &[u8]) -> Option<String> {
        read(data).map(|tail| tail.agent_uri)
    }
}

/// Engine `AtomConfig` (PDA `["atom_config"]`), 151 bytes as the real engine's. The stand-in
/// uses the fields below; the real engine's model parameters in between (72..143) stay zero.
pub mod atom_config {
    /// 8..40: the config authority (may `update_config`, and on the stand-in `set_stats`).
    pub const AUTHORITY: usize = 8;
    /// 40..72: the registry whose CPI authority alone may `update_stats`.
    pub const AGENT_REGISTRY: usize = 40;
    /// 143: the PDA bump.
    pub const BUMP: usize = 143;
    /// 144: the config version (1 at initialization, +1 per `update_config`).
    pub const VERSION: usize = 144;
    /// 145: paused (`update_stats` refuses while it is set).
    pub const PAUSED: usize = 145;
    pub const LEN: usize = 151;
}

/// The stand-in's bookkeeping inside `AtomStats`, bytes 72..549 (the gate reads none of
/// them; the real engine keeps its own state there).
///
/// | bytes | field |
/// |---|---|
/// | 72..80 | u64 LE feedback count (every `update_stats`) |
/// | 80..88 | u64 LE positive feedbacks (score ≥ 60) |
/// | 88..96 | u64 LE negative feedbacks (score < 40) |
/// | 96..104 | u64 LE sum of scores |
/// | 104 | PDA bump |
/// | 105 | floor: tier immediate (from `set_stats`) |
/// | 106 | floor: tier confirmed |
/// | 107 | floor: risk score |
/// | 108..110 | floor: confidence, u16 LE |
/// | 110 | number of client entries in use (0..=8) |
/// | 111..399 | 8 client entries of 36 bytes: keccak256(client) (32), u16 LE feedbacks, u16 LE positive feedbacks |
/// | 399..549 | zero |
pub mod stats_book {
    pub const FEEDBACK_COUNT: usize = 72;
    pub const POSITIVE_COUNT: usize = 80;
    pub const NEGATIVE_COUNT: usize = 88;
    pub const SCORE_SUM: usize = 96;
    pub const BUMP: usize = 104;
    pub const FLOOR_TIER_IMMEDIATE: usize = 105;
    pub const FLOOR_TIER_CONFIRMED: usize = 106;
    pub const FLOOR_RISK: usize = 107;
    pub const FLOOR_CONFIDENCE: usize = 108;
    pub const CLIENT_COUNT: usize = 110;
    pub const CLIENTS: usize = 111;
    pub const CLIENT_ENTRY_LEN: usize = 36;
    /// Offsets inside one client entry.
    pub const ENTRY_HASH: usize = 0;
    pub const ENTRY_FEEDBACKS: usize = 32;
    pub const ENTRY_POSITIVES: usize = 34;
    pub const MAX_CLIENTS: usize = 8;
    pub const END: usize = CLIENTS + MAX_CLIENTS * CLIENT_ENTRY_LEN;

    fn u64_at(data: &[u8], at: usize) -> Option<u64> {
        Some(u64::from_le_bytes(data.get(at..at + 8)?.try_into().ok()?))
    }

    fn u16_at(data: &[u8], at: usize) -> Option<u16> {
        Some(u16::from_le_bytes(data.get(at..at + 2)?.try_into().ok()?))
    }

    /// One distinct client the engine has seen.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct ClientEntry {
        pub client_hash: [u8; 32],
        pub feedbacks: u16,
        pub positives: u16,
    }

    /// The bookkeeping decoded (for tests and tooling).
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Book {
        pub feedback_count: u64,
        pub positive_count: u64,
        pub negative_count: u64,
        pub score_sum: u64,
        pub floor_tier_immediate: u8,
        pub floor_tier_confirmed: u8,
        pub floor_risk: u8,
        pub floor_confidence: u16,
        pub clients: Vec<ClientEntry>,
    }

    /// Decodes the bookkeeping of a 561-byte AtomStats; `None` when `data` is too short.
    pub fn read(data: &[u8]) -> Option<Book> {
        if data.len() < END {
            return None;
        }
        let n = usize::from(data[CLIENT_COUNT]).min(MAX_CLIENTS);
        let clients = (0..n)
            .map(|i| {
                let at = CLIENTS + i * CLIENT_ENTRY_LEN;
                Some(ClientEntry {
                    client_hash: data
                        .get(at + ENTRY_HASH..at + ENTRY_HASH + 32)?
                        .try_into()
                        .ok()?,
                    feedbacks: u16_at(data, at + ENTRY_FEEDBACKS)?,
                    positives: u16_at(data, at + ENTRY_POSITIVES)?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Book {
            feedback_count: u64_at(data, FEEDBACK_COUNT)?,
            positive_count: u64_at(data, POSITIVE_COUNT)?,
            negative_count: u64_at(data, NEGATIVE_COUNT)?,
            score_sum: u64_at(data, SCORE_SUM)?,
            floor_tier_immediate: data[FLOOR_TIER_IMMEDIATE],
            floor_tier_confirmed: data[FLOOR_TIER_CONFIRMED],
            floor_risk: data[FLOOR_RISK],
            floor_confidence: u16_at(data, FLOOR_CONFIDENCE)?,
            clients,
        })
    }
}

/// The constants of the stand-in engine's tier model (see the `engine` module docs).
pub mod tier_model {
    /// A feedback with at least this score is positive.
    pub const POSITIVE_MIN_SCORE: u8 = 60;
    /// A feedback with a score below this is negative.
    pub const NEGATIVE_BELOW_SCORE: u8 = 40;
    /// Slots of one engine epoch (the real engine's: 432 000, from its clock's slot).
    pub const EPOCH_SLOTS: u64 = 432_000;
    /// Engine epochs a candidacy waits before a feedback confirms it (the real engine's 8).
    pub const CONFIRM_EPOCHS: u16 = 8;
    /// 553..555 of AtomStats: the engine epoch the candidacy began (u16 LE).
    pub const CANDIDATE_EPOCH: usize = 553;
    pub const RISK_PER_NEGATIVE: u64 = 10;
    pub const MAX_RISK: u8 = 100;
    pub const CONFIDENCE_PER_FEEDBACK: u64 = 1_000;
    pub const MAX_CONFIDENCE: u16 = 10_000;
}

/// Arguments of the stand-in-only instructions, in wire order (Borsh after the
/// discriminator).
pub mod args {
    use super::*;

    /// Registry `initialize(base_collection)`.
    #[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, PartialEq, Eq)]
    pub struct InitializeArgs {
        pub base_collection: Pubkey,
    }

    /// Registry `set_agent_wallet(new_wallet, deadline)`.
    #[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, PartialEq, Eq)]
    pub struct SetAgentWalletArgs {
        pub new_wallet: Pubkey,
        pub deadline: i64,
    }

    /// Engine `initialize_config(authority)`.
    #[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, PartialEq, Eq)]
    pub struct InitializeConfigArgs {
        pub authority: Pubkey,
    }

    /// Engine `update_stats(client_hash, score)`.
    #[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, PartialEq, Eq)]
    pub struct UpdateStatsArgs {
        pub client_hash: [u8; 32],
        pub score: u8,
    }

    /// Engine `update_config(...)`: the real engine's fifteen optional parameters in order;
    /// the stand-in honours `paused` and refuses the others.
    #[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, Default, PartialEq, Eq)]
    pub struct UpdateConfigArgs {
        pub alpha_fast: Option<u16>,
        pub alpha_slow: Option<u16>,
        pub alpha_volatility: Option<u16>,
        pub alpha_arrival: Option<u16>,
        pub weight_sybil: Option<u8>,
        pub weight_burst: Option<u8>,
        pub weight_stagnation: Option<u8>,
        pub weight_shock: Option<u8>,
        pub weight_volatility: Option<u8>,
        pub weight_arrival: Option<u8>,
        pub diversity_threshold: Option<u8>,
        pub burst_threshold: Option<u8>,
        pub shock_threshold: Option<u16>,
        pub volatility_threshold: Option<u16>,
        pub paused: Option<bool>,
    }

    impl UpdateConfigArgs {
        /// Whether anything but `paused` is set.
        pub fn sets_model_parameters(&self) -> bool {
            *self
                != UpdateConfigArgs {
                    paused: self.paused,
                    ..Default::default()
                }
        }
    }

    /// Engine `set_stats(tier_immediate, tier_confirmed, risk_score, confidence)`.
    #[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, PartialEq, Eq)]
    pub struct SetStatsArgs {
        pub tier_immediate: u8,
        pub tier_confirmed: u8,
        pub risk_score: u8,
        pub confidence: u16,
    }
}
