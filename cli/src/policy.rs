//! `trust-gate policy`: create a spending policy from a JSON file, show one, and edit a
//! policy's payee list account. The JSON is `gate_init_policy`'s `policy` argument (see
//! docs/mcp.md), checked by the same code with errors that name the field.

use anchor_lang::prelude::Pubkey;
use clap::{Args, Subcommand};
use serde::Serialize;
use solana_sdk::instruction::Instruction;
use solana_sdk::signature::{read_keypair_file, Keypair};
use solana_sdk::signer::Signer;
use std::str::FromStr;
use trust_gate_client::decode::{PayeeList, PolicyAccount};
use trust_gate_client::json::Key;
use trust_gate_client::{chain, settle, Builder, Network, Overrides, ProgramIds};
use trust_gate_mcp::envelope::ToolError;
use trust_gate_mcp::policy_input::{self, PolicyInput};
use trust_gate_mcp::views::PolicyView;
use trust_gate_migrations::DemoWorld;

#[derive(Subcommand)]
pub enum PolicyCommand {
    /// Create a policy from a JSON file (immutable once created). Its limits are payee_list,
    /// validity, monthly_cap, lifetime_cap and payee_daily_cap (none: a policy without limits).
    Create(CreateArgs),
    /// Print a policy and its payee list as JSON.
    Show(ShowArgs),
    /// Add or remove payees of a policy's list account (the authority's threshold signs).
    EditList(EditListArgs),
}

#[derive(Args)]
pub struct Cluster {
    #[arg(long, env = "RPC_URL", default_value = "http://127.0.0.1:8899")]
    pub(crate) rpc_url: String,
    /// The cluster's network (its program ids; *_PROGRAM_ID overrides apply).
    #[arg(long, env = "NETWORK", default_value = "solana-localnet")]
    pub(crate) network: String,
}

#[derive(Args)]
pub struct Target {
    /// The paying agent (its MPL Core asset, base58).
    #[arg(long)]
    asset: String,
    #[arg(long, default_value_t = 1)]
    policy_id: u32,
}

#[derive(Args)]
pub struct Members {
    /// A member of the agent's policy authority (keypair JSON file); repeat it up to the
    /// authority's threshold. The first pays the fees and the rent. On the localnet the demo
    /// agent's owner is used when omitted.
    #[arg(long = "keypair", value_name = "FILE")]
    pub(crate) keypairs: Vec<String>,
}

#[derive(Args)]
pub struct CreateArgs {
    #[command(flatten)]
    cluster: Cluster,
    #[command(flatten)]
    target: Target,
    #[command(flatten)]
    members: Members,
    /// The policy as JSON (`-` reads standard input), for example
    /// {"kinds": 3, "mint": "...", "spending": {"daily": "20000000"}, "monthly_cap": "200000000",
    /// "payee_list": {"mode": "allow", "account": true}}.
    #[arg(long, value_name = "FILE")]
    file: String,
    /// A vault-funded policy's spender (usually the agent's hot key): required with
    /// "funding": "vault"; the vault is opened when missing.
    #[arg(long, value_name = "PUBKEY")]
    spender: Option<String>,
}

#[derive(Args)]
pub struct ShowArgs {
    #[command(flatten)]
    cluster: Cluster,
    #[command(flatten)]
    target: Target,
}

#[derive(Args)]
pub struct EditListArgs {
    #[command(flatten)]
    cluster: Cluster,
    #[command(flatten)]
    target: Target,
    #[command(flatten)]
    members: Members,
    /// A payee agent (asset, base58) to add; repeatable.
    #[arg(long, value_name = "PUBKEY")]
    add: Vec<String>,
    /// A payee agent to remove; repeatable.
    #[arg(long, value_name = "PUBKEY")]
    remove: Vec<String>,
}

pub async fn run(c: PolicyCommand) -> Result<(), String> {
    match c {
        PolicyCommand::Create(a) => create(a).await,
        PolicyCommand::Show(a) => show(a).await,
        PolicyCommand::EditList(a) => edit_list(a).await,
    }
}

fn key(flag: &str, s: &str) -> Result<Pubkey, String> {
    Pubkey::from_str(s.trim()).map_err(|_| format!("{flag}: {s:?} is not a base58 public key"))
}

fn tool_error(e: ToolError) -> String {
    match e.hint {
        Some(hint) => format!("{} ({hint})", e.message),
        None => e.message,
    }
}

/// The cluster, its builder and the target's address.
struct Session {
    rpc: solana_rpc_client::nonblocking::rpc_client::RpcClient,
    b: Builder,
    network: Network,
    asset: Pubkey,
    policy_id: u32,
}

fn session(cluster: &Cluster, target: &Target) -> Result<Session, String> {
    let network = Network::from_str(&cluster.network).map_err(|e| format!("--network: {e}"))?;
    let overrides = Overrides::from_env().map_err(|e| e.to_string())?;
    let b = Builder::new(ProgramIds::for_network(network).with_overrides(overrides))
        .map_err(|e| e.to_string())?;
    Ok(Session {
        rpc: trust_gate_migrations::rpc(&cluster.rpc_url),
        b,
        network,
        asset: key("--asset", &target.asset)?,
        policy_id: target.policy_id,
    })
}

impl Session {
    /// The members who sign: the files given, else (localnet) the demo agent's owner.
    fn members(&self, m: &Members) -> Result<Vec<Keypair>, String> {
        member_keys(m, &self.asset, self.network)
    }

    async fn policy(&self) -> Result<Option<PolicyAccount>, String> {
        chain::policy(&self.rpc, &self.b.ids, &self.asset, self.policy_id)
            .await
            .map_err(|e| e.to_string())
    }

    async fn send(&self, ixs: &[Instruction], signers: &[Keypair]) -> Result<String, String> {
        send(&self.rpc, ixs, signers).await
    }

    /// The policy and, when it has one, its list account's entries.
    async fn view(&self, policy: &PolicyAccount) -> Result<PolicyShown, String> {
        let address = self.b.pda.policy(&self.asset, self.policy_id);
        let payee_list_entries = match policy.payee_list() {
            Some(list) => Some(
                chain::anchor_account::<PayeeList>(&self.rpc, "PayeeList", &list)
                    .await
                    .map_err(|e| e.to_string())?
                    .map(|l| l.payees.iter().map(Key::from).collect()),
            ),
            None => None,
        };
        Ok(PolicyShown {
            policy: PolicyView::new(&address, policy),
            payee_list_entries,
            signature: None,
        })
    }
}

/// The members of `asset`'s authority who sign: the files given, else (localnet) the demo
/// agent's owner.
pub(crate) fn member_keys(
    m: &Members,
    asset: &Pubkey,
    network: Network,
) -> Result<Vec<Keypair>, String> {
    if !m.keypairs.is_empty() {
        return m
            .keypairs
            .iter()
            .map(|path| {
                read_keypair_file(path)
                    .map_err(|e| format!("--keypair {path}: cannot read a keypair: {e}"))
            })
            .collect();
    }
    let world = DemoWorld::new();
    let demo = std::iter::once(&world.service)
        .chain(&world.payers)
        .find(|a| a.asset() == *asset);
    match (demo, network) {
        (Some(agent), Network::Localnet) => Ok(vec![agent.owner.insecure_clone()]),
        _ => Err("--keypair is required: the agent is not a demo agent on the localnet".into()),
    }
}

/// `ixs` in one transaction signed by `signers` (the first pays the fee), sent and confirmed.
pub(crate) async fn send(
    rpc: &solana_rpc_client::nonblocking::rpc_client::RpcClient,
    ixs: &[Instruction],
    signers: &[Keypair],
) -> Result<String, String> {
    let refs: Vec<&Keypair> = signers.iter().collect();
    let blockhash = rpc
        .get_latest_blockhash()
        .await
        .map_err(|e| format!("getLatestBlockhash: {e}"))?;
    let tx = settle::transaction(&refs[0].pubkey(), ixs, &[], blockhash, &refs)
        .map_err(|e| e.to_string())?;
    settle::send(rpc, &tx)
        .await
        .map(|sig| sig.to_string())
        .map_err(|e| e.to_string())
}

pub(crate) fn cosigners(signers: &[Keypair]) -> Vec<Pubkey> {
    signers[1..].iter().map(|k| k.pubkey()).collect()
}

/// A policy as the commands print it: as `gate_get_policy` shows it, with its list
/// account's entries and the transaction that changed it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PolicyShown {
    #[serde(flatten)]
    policy: PolicyView,
    /// The list account's entries (null: the account does not exist), when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    payee_list_entries: Option<Option<Vec<Key>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    signature: Option<String>,
}

fn print(v: &PolicyShown) {
    println!(
        "{}",
        serde_json::to_string_pretty(v).expect("a policy view serializes")
    );
}

async fn create(a: CreateArgs) -> Result<(), String> {
    let s = session(&a.cluster, &a.target)?;
    let text = if a.file == "-" {
        std::io::read_to_string(std::io::stdin()).map_err(|e| format!("--file -: {e}"))?
    } else {
        std::fs::read_to_string(&a.file).map_err(|e| format!("--file {}: {e}", a.file))?
    };
    let input: PolicyInput =
        serde_json::from_str(&text).map_err(|e| format!("--file {}: {e}", a.file))?;
    let params = policy_input::params(&input).map_err(tool_error)?;
    let list = s.b.pda.payee_list(&s.asset, s.policy_id);
    let rules = policy_input::rules(&input, list).map_err(tool_error)?;
    let threshold = input.approval_threshold().map_err(tool_error)?;
    let spender = match (&a.spender, params.is_vault_funded()) {
        (Some(k), true) => Some(key("--spender", k)?),
        (None, true) => {
            return Err("--spender is required for a vault-funded policy: the one key that may pay from the vault".into())
        }
        (Some(_), false) => {
            return Err("--spender: only a vault-funded policy (\"funding\": \"vault\") has one".into())
        }
        (None, false) => None,
    };
    if let Some(existing) = s.policy().await? {
        let same = existing.params == params
            && existing.rules().copied().unwrap_or_default() == rules
            && existing.approval_threshold == threshold;
        print(&s.view(&existing).await?);
        return Err(if same {
            format!(
                "policy {} of {} already exists with these rules",
                s.policy_id, s.asset
            )
        } else {
            format!(
                "policy {} of {} already exists with other rules: policies are immutable; retire it or use another --policy-id",
                s.policy_id, s.asset
            )
        });
    }
    let members = s.members(&a.members)?;
    let me = members[0].pubkey();
    let others = cosigners(&members);
    let mut ixs = Vec::new();
    if params.is_vault_funded()
        && chain::vault(&s.rpc, &s.b.ids, &s.asset, &params.mint)
            .await
            .map_err(|e| e.to_string())?
            .is_none()
    {
        let mint = chain::mint(&s.rpc, "mint", &params.mint)
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("mint: {} is not a mint on this cluster", params.mint))?;
        ixs.push(s.b.open_vault(
            &me,
            &others,
            &s.asset,
            &params.mint,
            &mint.token_program.id(),
        ));
        eprintln!("Opening the agent's vault for {}", params.mint);
    }
    ixs.push(s.b.init_policy(
        &me,
        &others,
        &s.asset,
        s.policy_id,
        params,
        rules,
        threshold,
    ));
    if let Some(spender) = spender {
        ixs.push(s.b.set_vault_spender(&me, &others, &s.asset, s.policy_id, &spender));
    }
    eprintln!("Creating policy {} of {} as {me}", s.policy_id, s.asset);
    let sig = s.send(&ixs, &members).await?;
    let policy = s
        .policy()
        .await?
        .ok_or("the policy is missing after its transaction landed")?;
    let mut v = s.view(&policy).await?;
    v.signature = Some(sig);
    print(&v);
    Ok(())
}

async fn show(a: ShowArgs) -> Result<(), String> {
    let s = session(&a.cluster, &a.target)?;
    let policy = s.policy().await?.ok_or_else(|| {
        format!(
            "no policy {} for {} (create it with `trust-gate policy create`)",
            s.policy_id, s.asset
        )
    })?;
    print(&s.view(&policy).await?);
    Ok(())
}

async fn edit_list(a: EditListArgs) -> Result<(), String> {
    let s = session(&a.cluster, &a.target)?;
    let parse = |flag: &str, keys: &[String]| -> Result<Vec<Pubkey>, String> {
        keys.iter().map(|k| key(flag, k)).collect()
    };
    let (add, remove) = (parse("--add", &a.add)?, parse("--remove", &a.remove)?);
    if add.is_empty() && remove.is_empty() {
        return Err("give at least one --add or --remove".into());
    }
    if let Some(k) = add.iter().find(|k| remove.contains(k)) {
        return Err(format!("{k}: both added and removed"));
    }
    let policy = s
        .policy()
        .await?
        .ok_or_else(|| format!("no policy {} for {}", s.policy_id, s.asset))?;
    if policy.payee_list().is_none() {
        return Err(format!(
            "policy {} of {} has no payee list account (a policy created with \"payee_list\": {{\"account\": true}} has one)",
            s.policy_id, s.asset
        ));
    }
    let members = s.members(&a.members)?;
    let ix = s.b.edit_payee_list(
        &members[0].pubkey(),
        &cosigners(&members),
        &s.asset,
        s.policy_id,
        add,
        remove,
    );
    let sig = s.send(&[ix], &members).await?;
    let mut v = s.view(&policy).await?;
    v.signature = Some(sig);
    print(&v);
    Ok(())
}
