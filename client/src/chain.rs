//! Reading the chain over JSON-RPC: accounts of ours (policy funding and vaults included),
//! the registry's base collection and agent accounts, engine reputation, and attestation
//! lookup.

use crate::decode::{self, EngineReputation, ReputationError, ValidationAttestation};
use crate::error::ClientError;
use crate::ids::ProgramIds;
use crate::pda::Pdas;
use anchor_lang::prelude::Pubkey;
use anchor_lang::{AccountDeserialize, Discriminator};
use solana_address_lookup_table_interface::state::AddressLookupTable;
use solana_rpc_client::nonblocking::rpc_client::RpcClient;
use solana_rpc_client_api::config::{RpcAccountInfoConfig, RpcProgramAccountsConfig};
use solana_rpc_client_api::filter::{Memcmp, RpcFilterType};
use solana_sdk::account::Account;
use solana_sdk::message::AddressLookupTableAccount;
use trust_gate_program_common::external::{
    self,
    agent_account::{self, AgentView},
};

/// `program`'s accounts that pass `filters`, by `getProgramAccounts` in base64 (an account
/// the node does not send decodable is left out).
pub async fn program_accounts(
    rpc: &RpcClient,
    program: &Pubkey,
    filters: Vec<RpcFilterType>,
) -> Result<Vec<(Pubkey, Account)>, ClientError> {
    let config = RpcProgramAccountsConfig {
        filters: Some(filters),
        account_config: RpcAccountInfoConfig {
            encoding: Some(solana_account_decoder_client_types::UiAccountEncoding::Base64),
            ..RpcAccountInfoConfig::default()
        },
        ..RpcProgramAccountsConfig::default()
    };
    Ok(rpc
        .get_program_ui_accounts_with_config(program, config)
        .await?
        .into_iter()
        .filter_map(|(key, ui)| Some((key, ui.decode::<Account>()?)))
        .collect())
}

/// Several accounts in one `getMultipleAccounts` call (chunks of 100, the RPC limit).
pub async fn accounts(
    rpc: &RpcClient,
    keys: &[Pubkey],
) -> Result<Vec<Option<Account>>, ClientError> {
    let mut out = Vec::with_capacity(keys.len());
    for chunk in keys.chunks(100) {
        out.extend(rpc.get_multiple_accounts(chunk).await?);
    }
    Ok(out)
}

/// One account; `None` when it does not exist.
pub async fn account(rpc: &RpcClient, key: &Pubkey) -> Result<Option<Account>, ClientError> {
    Ok(accounts(rpc, std::slice::from_ref(key)).await?.remove(0))
}

/// Whether the reputation engine `config` (its AtomConfig, as read) is paused. `ids` says
/// which engine: the config must be its account.
pub fn engine_paused(ids: &ProgramIds, config: Option<&Account>) -> bool {
    config.is_some_and(|c| {
        c.owner == ids.reputation_engine
            && c.data.len() == external::atom_config::LEN
            && c.data[external::atom_config::PAUSED] != 0
    })
}

/// Whether the engine rates `asset` (the registry calls it for the agent's feedback): the
/// agent is reputation-enabled and its stats exist (engine-owned, with data).
pub async fn rated_by_engine(
    rpc: &RpcClient,
    ids: &ProgramIds,
    asset: &Pubkey,
) -> Result<bool, ClientError> {
    let p = Pdas::new(*ids);
    let found = accounts(rpc, &[p.agent_account(asset), p.atom_stats(asset)]).await?;
    let enabled = found[0]
        .as_ref()
        .and_then(|a| agent_account::read(&a.data))
        .is_some_and(|v| v.reputation_enabled);
    let stats = found[1]
        .as_ref()
        .is_some_and(|s| s.owner == ids.reputation_engine && !s.data.is_empty());
    Ok(enabled && stats)
}

/// The embedded localnet's JSON-RPC method that writes an account outright, for state no
/// real instruction can make in a demo's lifetime (the real engine's tiers). No cluster
/// serves it.
pub const LOCALNET_SET_ACCOUNT: &str = "localnet_setAccount";

/// Writes `account` at `address` on the embedded localnet ([`LOCALNET_SET_ACCOUNT`]). A real
/// cluster refuses it ("Method not found"), and the error names the method.
pub async fn localnet_set_account(
    rpc: &RpcClient,
    address: &Pubkey,
    account: &Account,
) -> Result<(), ClientError> {
    use base64::Engine as _;
    let params = serde_json::json!([
        address.to_string(),
        {
            "lamports": account.lamports,
            "owner": account.owner.to_string(),
            "data": [base64::engine::general_purpose::STANDARD.encode(&account.data), "base64"],
            "executable": account.executable,
        }
    ]);
    let method = solana_rpc_client_api::request::RpcRequest::Custom {
        method: LOCALNET_SET_ACCOUNT,
    };
    rpc.send::<serde_json::Value>(method, params)
        .await
        .map(drop)
        .map_err(|e| ClientError::Rpc(format!("{LOCALNET_SET_ACCOUNT} (localnet only): {e}")))
}

/// The cluster's clock (the Clock sysvar's unix timestamp): what programs check deadlines
/// against, which this machine's clock may not be.
pub async fn unix_time(rpc: &RpcClient) -> Result<i64, ClientError> {
    let clock = solana_sdk::sysvar::clock::ID;
    let acc = account(rpc, &clock)
        .await?
        .ok_or(ClientError::AccountNotFound {
            what: "Clock sysvar",
            address: clock.to_string(),
        })?;
    // slot, epoch start timestamp, epoch, leader schedule epoch, then the unix timestamp.
    let bytes = acc.data.get(32..40).ok_or(ClientError::AccountNotFound {
        what: "Clock sysvar",
        address: clock.to_string(),
    })?;
    Ok(i64::from_le_bytes(bytes.try_into().unwrap_or_default()))
}

/// One of our Anchor accounts, decoded; `None` when it does not exist.
pub async fn anchor_account<T: AccountDeserialize>(
    rpc: &RpcClient,
    what: &str,
    key: &Pubkey,
) -> Result<Option<T>, ClientError> {
    match account(rpc, key).await? {
        None => Ok(None),
        Some(a) => decode::account::<T>(what, &a.data).map(Some),
    }
}

/// The funding policy `policy_id` of `asset` declares; an error when the policy does not
/// exist.
pub async fn policy_funding(
    rpc: &RpcClient,
    ids: &ProgramIds,
    asset: &Pubkey,
    policy_id: u32,
) -> Result<decode::Funding, ClientError> {
    let key = Pdas::new(*ids).policy(asset, policy_id);
    let acc = required_account(rpc, &key, "PolicyAccount").await?;
    let policy = decode::policy(&acc.data)?;
    Ok(decode::Funding::of(&policy.params))
}

/// The approval of a payment of `terms` (`policy_vault::approve_payment`), with its address;
/// `None` when no member has approved those terms (or its payment used it).
pub async fn approval(
    rpc: &RpcClient,
    ids: &ProgramIds,
    terms: &policy_vault::state::ApprovalTerms,
) -> Result<Option<(Pubkey, policy_vault::state::PaymentApproval)>, ClientError> {
    let key = Pdas::new(*ids).approval(terms);
    let approval = anchor_account(rpc, "PaymentApproval", &key).await?;
    Ok(approval.map(|a| (key, a)))
}

/// What a payment of `terms` under `policy` passes to the gate for its approval: the
/// approval on chain when the amount is above the policy's approval threshold and a member
/// approved it (expired or not: the gate judges), else `None` (no read when none is needed).
pub async fn approval_use(
    rpc: &RpcClient,
    ids: &ProgramIds,
    policy: &decode::PolicyAccount,
    terms: &policy_vault::state::ApprovalTerms,
) -> Result<Option<crate::instructions::ApprovalUse>, ClientError> {
    if !policy.needs_approval(terms.amount) {
        return Ok(None);
    }
    Ok(approval(rpc, ids, terms)
        .await?
        .map(|(address, a)| crate::instructions::ApprovalUse {
            address,
            rent_payer: a.rent_payer,
        }))
}

/// [`approval_use`] after reading the payer's policy (none when it does not exist: the gate
/// then denies the payment anyway).
pub async fn approval_use_of(
    rpc: &RpcClient,
    ids: &ProgramIds,
    terms: &policy_vault::state::ApprovalTerms,
) -> Result<Option<crate::instructions::ApprovalUse>, ClientError> {
    match policy(rpc, ids, &terms.payer_asset, terms.policy_id).await? {
        None => Ok(None),
        Some(p) => approval_use(rpc, ids, &p, terms).await,
    }
}

/// The gate's records of the channels a payer agent opened through it that are still open
/// (a record is closed with its channel's close): `getProgramAccounts` of the gate, filtered
/// by the record's discriminator and the payer (offset 40).
pub async fn channel_records_of_payer(
    rpc: &RpcClient,
    ids: &ProgramIds,
    payer_asset: &Pubkey,
) -> Result<Vec<(Pubkey, gate::state::ChannelRecord)>, ClientError> {
    use gate::state::ChannelRecord;
    let filters = vec![
        RpcFilterType::Memcmp(Memcmp::new_raw_bytes(
            0,
            ChannelRecord::DISCRIMINATOR.to_vec(),
        )),
        RpcFilterType::Memcmp(Memcmp::new_raw_bytes(40, payer_asset.to_bytes().to_vec())),
    ];
    program_accounts(rpc, &ids.gate, filters)
        .await?
        .into_iter()
        .map(|(k, a)| decode::account::<ChannelRecord>("ChannelRecord", &a.data).map(|r| (k, r)))
        .collect()
}

/// Every policy of `asset`: `getProgramAccounts` of the policy vault program filtered by the
/// policy's discriminator and the asset (offset 8). Sorted by id.
pub async fn policies_of(
    rpc: &RpcClient,
    ids: &ProgramIds,
    asset: &Pubkey,
) -> Result<Vec<(Pubkey, decode::PolicyAccount)>, ClientError> {
    use decode::PolicyAccount;
    let filters = vec![
        RpcFilterType::Memcmp(Memcmp::new_raw_bytes(
            0,
            PolicyAccount::DISCRIMINATOR.to_vec(),
        )),
        RpcFilterType::Memcmp(Memcmp::new_raw_bytes(8, asset.to_bytes().to_vec())),
    ];
    let mut out: Vec<(Pubkey, PolicyAccount)> = program_accounts(rpc, &ids.policy_vault, filters)
        .await?
        .into_iter()
        .map(|(k, a)| decode::policy(&a.data).map(|p| (k, p)))
        .collect::<Result<_, _>>()?;
    out.retain(|(_, p)| p.asset == *asset);
    out.sort_by_key(|(_, p)| p.policy_id);
    Ok(out)
}

/// The payment logs the gate holds (until they close, after the dispute window) of payments
/// whose transfer `wallet` signed: `getProgramAccounts` of the gate, filtered by the log's
/// discriminator and its payer wallet (offset 104). Newest first.
pub async fn payment_logs_of_wallet(
    rpc: &RpcClient,
    ids: &ProgramIds,
    wallet: &Pubkey,
) -> Result<Vec<(Pubkey, gate::state::FeedbackLog)>, ClientError> {
    use gate::state::FeedbackLog;
    let filters = vec![
        RpcFilterType::Memcmp(Memcmp::new_raw_bytes(
            0,
            FeedbackLog::DISCRIMINATOR.to_vec(),
        )),
        RpcFilterType::Memcmp(Memcmp::new_raw_bytes(104, wallet.to_bytes().to_vec())),
    ];
    let mut out: Vec<(Pubkey, FeedbackLog)> = program_accounts(rpc, &ids.gate, filters)
        .await?
        .into_iter()
        .filter_map(|(k, a)| {
            decode::account::<FeedbackLog>("FeedbackLog", &a.data)
                .ok()
                .map(|l| (k, l))
        })
        .filter(|(_, l)| l.payer_wallet == *wallet)
        .collect();
    out.sort_by_key(|(_, l)| std::cmp::Reverse(l.created_at));
    Ok(out)
}

/// Policy `policy_id` of `asset`; `None` when it does not exist.
pub async fn policy(
    rpc: &RpcClient,
    ids: &ProgramIds,
    asset: &Pubkey,
    policy_id: u32,
) -> Result<Option<decode::PolicyAccount>, ClientError> {
    let key = Pdas::new(*ids).policy(asset, policy_id);
    match account(rpc, &key).await? {
        None => Ok(None),
        Some(a) => decode::policy(&a.data).map(Some),
    }
}

/// The agent's policy vault for `mint`; `None` when it has not been opened (its address may
/// hold lamports someone sent there, which opening keeps).
pub async fn vault(
    rpc: &RpcClient,
    ids: &ProgramIds,
    asset: &Pubkey,
    mint: &Pubkey,
) -> Result<Option<decode::VaultView>, ClientError> {
    let key = Pdas::new(*ids).vault(asset, mint);
    match account(rpc, &key).await? {
        None => Ok(None),
        Some(a) if a.owner == anchor_lang::system_program::ID && a.data.is_empty() => Ok(None),
        Some(a) => decode::vault(&key, &a.owner, &a.data)
            .map(Some)
            .ok_or_else(|| ClientError::Decode {
                what: "policy vault".into(),
                reason: format!("{key} holds an account that is not a vault token account"),
            }),
    }
}

/// One account that must exist; `what` names it in the error.
async fn required_account(
    rpc: &RpcClient,
    key: &Pubkey,
    what: &'static str,
) -> Result<Account, ClientError> {
    account(rpc, key)
        .await?
        .ok_or(ClientError::AccountNotFound {
            what,
            address: key.to_string(),
        })
}

/// The registry's base collection, read from its RootConfig (data 8..40).
pub async fn base_collection(rpc: &RpcClient, ids: &ProgramIds) -> Result<Pubkey, ClientError> {
    let root = Pdas::new(*ids).root_config();
    let acc = required_account(rpc, &root, "registry RootConfig").await?;
    let bytes: [u8; 32] = acc
        .data
        .get(8..40)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| ClientError::Decode {
            what: "registry RootConfig".into(),
            reason: format!("{} bytes, expected at least 40", acc.data.len()),
        })?;
    Ok(Pubkey::new_from_array(bytes))
}

/// The registry's view of an agent (owner, agent wallet, ...).
pub async fn agent(
    rpc: &RpcClient,
    ids: &ProgramIds,
    asset: &Pubkey,
) -> Result<AgentView, ClientError> {
    let key = Pdas::new(*ids).agent_account(asset);
    let acc = required_account(rpc, &key, "registry AgentAccount").await?;
    if acc.owner != ids.agent_registry {
        return Err(ClientError::Decode {
            what: "registry AgentAccount".into(),
            reason: format!("owned by {}, not the registry", acc.owner),
        });
    }
    agent_account::read(&acc.data).ok_or_else(|| ClientError::Decode {
        what: "registry AgentAccount".into(),
        reason: "not an AgentAccount".into(),
    })
}

/// The live owner of an agent's MPL Core asset (the registry's AgentAccount only caches it).
pub async fn asset_owner(rpc: &RpcClient, asset: &Pubkey) -> Result<Pubkey, ClientError> {
    let acc = required_account(rpc, asset, "MPL Core asset").await?;
    trust_gate_program_common::external::core_asset::owner(&acc.owner, &acc.data).ok_or_else(|| {
        ClientError::Decode {
            what: "MPL Core asset".into(),
            reason: format!("{asset} is not an MPL Core asset (owned by {})", acc.owner),
        }
    })
}

/// The engine's reputation block of `asset`; the outer error is an RPC failure, the inner
/// one what the canary/size/tier checks found.
pub async fn engine_reputation(
    rpc: &RpcClient,
    ids: &ProgramIds,
    asset: &Pubkey,
) -> Result<Result<EngineReputation, ReputationError>, ClientError> {
    let key = Pdas::new(*ids).atom_stats(asset);
    Ok(match account(rpc, &key).await? {
        None => Err(ReputationError::Unrated),
        Some(a) => decode::engine_reputation(&ids.reputation_engine, &a.owner, a.lamports, &a.data),
    })
}

/// The best attestation of `capability` about `subject`: from `attestors` when the rule
/// names them (their PDAs), else any attestor's (a `getProgramAccounts` scan with memcmp
/// filters on subject and capability). A valid one (not revoked, not expired at `now`) is
/// preferred; otherwise any, so that the gate reports why it does not count.
pub async fn find_attestation(
    rpc: &RpcClient,
    ids: &ProgramIds,
    subject: &Pubkey,
    capability: &[u8; 32],
    attestors: &[Pubkey],
    now: i64,
) -> Result<Option<Pubkey>, ClientError> {
    let keys = named_attestations(ids, subject, capability, attestors);
    let mut found: Vec<(Pubkey, ValidationAttestation)> = Vec::new();
    if keys.is_empty() {
        for (key, acc) in attestations_about(rpc, ids, subject, Some(capability)).await? {
            found.push((key, acc));
        }
    } else {
        for (key, acc) in keys.iter().zip(accounts(rpc, &keys).await?) {
            if let Some(att) = attestation_in(ids, acc.as_ref()) {
                found.push((*key, att));
            }
        }
    }
    Ok(best_attestation(&found, now))
}

/// The attestation accounts of the attestors a rule names (empty when it names none: any
/// attestor counts, and only a scan finds them).
pub fn named_attestations(
    ids: &ProgramIds,
    subject: &Pubkey,
    capability: &[u8; 32],
    attestors: &[Pubkey],
) -> Vec<Pubkey> {
    let pdas = Pdas::new(*ids);
    attestors
        .iter()
        .filter(|a| **a != Pubkey::default())
        .map(|a| pdas.attestation(subject, capability, a))
        .collect()
}

/// The attestation an account holds, when it is one of the validation registry's.
pub fn attestation_in(ids: &ProgramIds, acc: Option<&Account>) -> Option<ValidationAttestation> {
    let acc = acc.filter(|a| a.owner == ids.validation_registry)?;
    decode::account::<ValidationAttestation>("ValidationAttestation", &acc.data).ok()
}

/// Which of `found` a gate should see: the first valid one (not revoked, not expired at
/// `now`), else the first, so that the gate reports why it does not count.
pub fn best_attestation(found: &[(Pubkey, ValidationAttestation)], now: i64) -> Option<Pubkey> {
    found
        .iter()
        .find(|(_, a)| !a.revoked && !a.is_expired(now))
        .or(found.first())
        .map(|(k, _)| *k)
}

/// Every attestation about `subject` (of `capability` when given), by `getProgramAccounts`
/// with a size filter and memcmp filters on the subject (offset 8) and capability (40).
pub async fn attestations_about(
    rpc: &RpcClient,
    ids: &ProgramIds,
    subject: &Pubkey,
    capability: Option<&[u8; 32]>,
) -> Result<Vec<(Pubkey, ValidationAttestation)>, ClientError> {
    use anchor_lang::Space;
    let mut filters = vec![
        RpcFilterType::DataSize((8 + ValidationAttestation::INIT_SPACE) as u64),
        RpcFilterType::Memcmp(Memcmp::new_raw_bytes(
            0,
            ValidationAttestation::DISCRIMINATOR.to_vec(),
        )),
        RpcFilterType::Memcmp(Memcmp::new_raw_bytes(8, subject.to_bytes().to_vec())),
    ];
    if let Some(c) = capability {
        filters.push(RpcFilterType::Memcmp(Memcmp::new_raw_bytes(40, c.to_vec())));
    }
    let mut out = Vec::new();
    for (key, acc) in program_accounts(rpc, &ids.validation_registry, filters).await? {
        if let Ok(att) =
            decode::account::<ValidationAttestation>("ValidationAttestation", &acc.data)
        {
            out.push((key, att));
        }
    }
    Ok(out)
}

/// What the clients read of a mint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mint {
    pub token_program: crate::token::TokenProgram,
    pub decimals: u8,
    /// The program a Token-2022 mint's transfers call, if it has a transfer hook.
    pub transfer_hook: Option<Pubkey>,
}

/// A mint's token program, decimals and transfer hook; `None` when the account does not
/// exist. `field` names the mint in errors (owned by neither token program, too short to be a
/// mint).
pub async fn mint(
    rpc: &RpcClient,
    field: &str,
    mint: &Pubkey,
) -> Result<Option<Mint>, ClientError> {
    let Some(acc) = account(rpc, mint).await? else {
        return Ok(None);
    };
    let token_program = crate::token::TokenProgram::of_owner(&acc.owner, field)?;
    // `decimals` is byte 44 of a mint in both token programs.
    let decimals = *acc
        .data
        .get(44)
        .ok_or_else(|| ClientError::input(field, format!("{mint} is not a mint")))?;
    Ok(Some(Mint {
        token_program,
        decimals,
        transfer_hook: trust_gate_program_common::token_mint::transfer_hook_program(
            &acc.owner, &acc.data,
        ),
    }))
}

/// The address lookup tables whose authority is `authority` (a facilitator's), by
/// `getProgramAccounts` with a memcmp filter on the authority (offset 22 of the table's
/// metadata: type u32, deactivation slot u64, last extended slot u64, start index u8,
/// authority option tag u8).
pub async fn lookup_tables(
    rpc: &RpcClient,
    authority: &Pubkey,
) -> Result<Vec<AddressLookupTableAccount>, ClientError> {
    let filters = vec![
        RpcFilterType::Memcmp(Memcmp::new_raw_bytes(21, vec![1])),
        RpcFilterType::Memcmp(Memcmp::new_raw_bytes(22, authority.to_bytes().to_vec())),
    ];
    let program = solana_address_lookup_table_interface::program::ID;
    let mut out = Vec::new();
    for (key, acc) in program_accounts(rpc, &program, filters).await? {
        if let Ok(table) = AddressLookupTable::deserialize(&acc.data) {
            if table.meta.deactivation_slot == u64::MAX {
                out.push(AddressLookupTableAccount {
                    key,
                    addresses: table.addresses.to_vec(),
                });
            }
        }
    }
    Ok(out)
}
