//! `gate_payment`: the decision a real gate would make, by simulation.

use crate::chain;
use crate::decode::{self, AcceptancePolicy, Decision};
use crate::error::ClientError;
use crate::errors::summarize_logs;
use crate::instructions::{Attestations, Builder};
use anchor_lang::prelude::Pubkey;
use base64::{engine::general_purpose::STANDARD, Engine as _};
use policy_vault::engine::Holdback;
use solana_account_decoder_client_types::UiAccountEncoding;
use solana_commitment_config::CommitmentConfig;
use solana_rpc_client::nonblocking::rpc_client::RpcClient;
use solana_rpc_client_api::config::{
    RpcSimulateTransactionAccountsConfig, RpcSimulateTransactionConfig,
};
use solana_rpc_client_api::request::RpcRequest;
use solana_rpc_client_api::response::{Response, RpcSimulateTransactionResult};
use solana_sdk::account::Account;
use solana_sdk::instruction::{AccountMeta, Instruction};
use solana_sdk::signature::{Keypair, Signer};
use solana_sdk::transaction::Transaction;

/// Who asks: a keypair, or only a public key (simulation needs no signature).
pub enum Caller<'a> {
    Keypair(&'a Keypair),
    Pubkey(Pubkey),
}

impl Caller<'_> {
    pub fn pubkey(&self) -> Pubkey {
        match self {
            Caller::Keypair(k) => k.pubkey(),
            Caller::Pubkey(p) => *p,
        }
    }
}

impl<'a> From<&'a Keypair> for Caller<'a> {
    fn from(k: &'a Keypair) -> Self {
        Caller::Keypair(k)
    }
}

impl From<Pubkey> for Caller<'_> {
    fn from(p: Pubkey) -> Self {
        Caller::Pubkey(p)
    }
}

/// One payment to decide.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PaymentQuery {
    pub payer_asset: Pubkey,
    pub payee_asset: Pubkey,
    pub amount: u64,
    pub mint: Pubkey,
    pub policy_id: u32,
}

impl PaymentQuery {
    /// What an approval of this payment approves.
    pub fn approval_terms(&self) -> policy_vault::state::ApprovalTerms {
        policy_vault::state::ApprovalTerms {
            payer_asset: self.payer_asset,
            payee_asset: self.payee_asset,
            mint: self.mint,
            amount: self.amount,
            policy_id: self.policy_id,
        }
    }
}

/// Unix seconds of the local clock (what expiries are compared with off chain).
pub fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

/// A validation rule: the capability (zero: none) and the accepted attestors (default keys
/// are empty slots; none named = any attestor).
pub type Rule = ([u8; 32], [Pubkey; 2]);

/// What a payer's policy asks of an evaluation's accounts: the rule the payee's attestation
/// must meet, and the payee list account the policy names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PolicyRule {
    pub payee: Rule,
    pub payee_list: Option<Pubkey>,
    /// The arbiter of the policy's holdback schedule (the default key: none, or no schedule).
    pub arbiter: Pubkey,
}

/// What the payer's policy asks (see [`PolicyRule`]); `None` when the account is missing
/// or not policy_vault's.
pub fn policy_rule(b: &Builder, acc: Option<&Account>) -> Result<Option<PolicyRule>, ClientError> {
    let Some(acc) = acc.filter(|a| a.owner == b.ids.policy_vault) else {
        return Ok(None);
    };
    let p = decode::policy(&acc.data)?;
    let params = &p.params;
    Ok(Some(PolicyRule {
        payee: (params.required_capability, params.accepted_attestors),
        payee_list: p.payee_list(),
        arbiter: p.holdback.map(|h| h.arbiter).unwrap_or_default(),
    }))
}

/// The rule the payee's acceptance policy sets for the payer; `None` when there is none.
pub fn acceptance_rule(b: &Builder, acc: Option<&Account>) -> Result<Option<Rule>, ClientError> {
    let Some(acc) = acc.filter(|a| a.owner == b.ids.policy_vault) else {
        return Ok(None);
    };
    let a: AcceptancePolicy = decode::account("AcceptancePolicy", &acc.data)?;
    Ok(Some((
        a.params.required_capability,
        a.params.accepted_attestors,
    )))
}

/// The attestation accounts a real gate would see for `q`: the payee's, when the payer's
/// policy requires a capability; the payer's, when the payee's acceptance policy does.
pub async fn attestations_for(
    rpc: &RpcClient,
    b: &Builder,
    q: &PaymentQuery,
    now: i64,
) -> Result<Attestations, ClientError> {
    let rules = rules(rpc, b, q).await?;
    attestations_by_rules(rpc, b, q, rules, now).await
}

/// The accounts holding `q`'s rules: the payer's policy, the payee's acceptance policy.
pub fn rule_accounts(b: &Builder, q: &PaymentQuery) -> [Pubkey; 2] {
    [
        b.pda.policy(&q.payer_asset, q.policy_id),
        b.pda.acceptance(&q.payee_asset),
    ]
}

/// The payer policy's and the payee acceptance policy's rules for `q`, read in one call.
pub async fn rules(
    rpc: &RpcClient,
    b: &Builder,
    q: &PaymentQuery,
) -> Result<(Option<PolicyRule>, Option<Rule>), ClientError> {
    let accs = chain::accounts(rpc, &rule_accounts(b, q)).await?;
    Ok((
        policy_rule(b, accs[0].as_ref())?,
        acceptance_rule(b, accs[1].as_ref())?,
    ))
}

/// The attestation accounts for `q` under the payer policy's and the payee acceptance
/// policy's rules.
pub async fn attestations_by_rules(
    rpc: &RpcClient,
    b: &Builder,
    q: &PaymentQuery,
    (policy, acceptance): (Option<PolicyRule>, Option<Rule>),
    now: i64,
) -> Result<Attestations, ClientError> {
    let mut att = Attestations::default();
    // The payer's policy may ask an attestation of the payee; the payee's acceptance policy
    // one of the payer.
    if let Some(rule) = policy {
        att.payee = required_attestation(rpc, b, &q.payee_asset, rule.payee, now).await?;
        att.payee_list = rule.payee_list;
    }
    if let Some(rule) = acceptance {
        att.payer = required_attestation(rpc, b, &q.payer_asset, rule, now).await?;
    }
    Ok(att)
}

/// The attestation about `subject` a rule (capability, accepted attestors) needs; none when
/// the rule asks for no capability.
async fn required_attestation(
    rpc: &RpcClient,
    b: &Builder,
    subject: &Pubkey,
    (capability, attestors): Rule,
    now: i64,
) -> Result<Option<Pubkey>, ClientError> {
    if capability == [0; 32] {
        return Ok(None);
    }
    chain::find_attestation(rpc, &b.ids, subject, &capability, &attestors, now).await
}

/// The minimum balance a simulation's fee payer needs (one signature's fee).
const FEE_PAYER_MIN_LAMPORTS: u64 = 5_000;

/// Picks a fee payer for a signature-less simulation: the caller when it can pay the fee,
/// else the payer agent's owner or the payee agent's owner (registered agents' owners paid
/// rent, so they hold lamports). Simulation never charges anyone.
pub async fn simulation_fee_payer(
    rpc: &RpcClient,
    b: &Builder,
    caller: Pubkey,
    q: &PaymentQuery,
) -> Result<Pubkey, ClientError> {
    let can_pay = |a: &Option<solana_sdk::account::Account>| {
        a.as_ref().is_some_and(|a| {
            a.owner == anchor_lang::system_program::ID && a.lamports >= FEE_PAYER_MIN_LAMPORTS
        })
    };
    // A funded caller (a facilitator, usually) is the common case: one read, not three.
    if can_pay(&chain::account(rpc, &caller).await?) {
        return Ok(caller);
    }
    let mut candidates = Vec::new();
    for asset in [q.payer_asset, q.payee_asset] {
        if let Ok(view) = chain::agent(rpc, &b.ids, &asset).await {
            candidates.push(view.owner);
        }
    }
    let accs = chain::accounts(rpc, &candidates).await?;
    Ok(candidates
        .iter()
        .zip(accs)
        .find(|(_, a)| can_pay(a))
        .map(|(k, _)| *k)
        .unwrap_or(caller))
}

/// `gate_payment` of `q` with `att`, passing the address of the payment's approval, so that
/// the decision of an approved payment above the payer policy's approval threshold is the
/// one its settlement gets (the gate skips the address while no approval is there).
pub fn decision_instruction(b: &Builder, q: &PaymentQuery, att: Attestations) -> Instruction {
    let mut ix = b.gate_payment(
        &q.payer_asset,
        &q.payee_asset,
        q.amount,
        &q.mint,
        q.policy_id,
        att,
    );
    ix.accounts.push(AccountMeta::new_readonly(
        b.pda.approval(&q.approval_terms()),
        false,
    ));
    ix
}

/// The gate's decision for a payment, by simulating `gate::gate_payment` with every account
/// the strict gate would see. Nothing is written and no fee is paid; `caller` may be a
/// public key only.
///
/// A simulation that yields no decision (a missing policy, say) is
/// [`ClientError::SimulationFailed`] with a ~400-character summary of the logs.
pub async fn gate_payment(
    rpc: &RpcClient,
    b: &Builder,
    caller: Caller<'_>,
    q: PaymentQuery,
) -> Result<Decision, ClientError> {
    Ok(decide(rpc, b, caller, q).await?.decision)
}

/// A decision and, for an Allow under a payer policy with a holdback schedule, the terms a
/// settlement of it carries (docs/holdback.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decided {
    pub decision: Decision,
    pub holdback: Option<Holdback>,
}

/// As [`gate_payment`], with the holdback terms of an Allow.
pub async fn decide(
    rpc: &RpcClient,
    b: &Builder,
    caller: Caller<'_>,
    q: PaymentQuery,
) -> Result<Decided, ClientError> {
    let att = attestations_for(rpc, b, &q, now_unix()).await?;
    let k = match caller {
        Caller::Keypair(k) => k,
        Caller::Pubkey(p) => {
            let fee_payer = simulation_fee_payer(rpc, b, p, &q).await?;
            let sim = simulate_decision(rpc, b, &fee_payer, &q, att, &[]).await?;
            return Ok(Decided {
                decision: sim.decision?,
                holdback: sim.holdback,
            });
        }
    };
    let ix = decision_instruction(b, &q, att);
    let mut tx = Transaction::new_with_payer(&[ix], Some(&k.pubkey()));
    let blockhash = rpc.get_latest_blockhash().await?;
    tx.try_sign(&[k], blockhash)
        .map_err(|e| ClientError::input("caller", e.to_string()))?;
    let sim = rpc
        .simulate_transaction_with_config(
            &tx,
            RpcSimulateTransactionConfig {
                sig_verify: true,
                commitment: Some(CommitmentConfig::confirmed()),
                ..RpcSimulateTransactionConfig::default()
            },
        )
        .await?
        .value;
    let (decision, holdback) = decision_of(b, sim)?;
    Ok(Decided { decision, holdback })
}

/// One simulation of `gate_payment`: the decision (or why there is none) and the accounts
/// it was asked to return, as the simulation saw them.
pub struct Simulated {
    pub decision: Result<Decision, ClientError>,
    /// An Allow's holdback terms (`Holdback::from_wire` of the return data).
    pub holdback: Option<Holdback>,
    pub accounts: Vec<Option<Account>>,
}

/// Simulates `gate_payment` for `q` with `att`, unsigned and paid by `fee_payer` (nothing is
/// charged), and reads `watch` in the same call (`simulateTransaction`'s `accounts`). The
/// outer error is the RPC's; `decision` holds the simulation's own outcome.
pub async fn simulate_decision(
    rpc: &RpcClient,
    b: &Builder,
    fee_payer: &Pubkey,
    q: &PaymentQuery,
    att: Attestations,
    watch: &[Pubkey],
) -> Result<Simulated, ClientError> {
    let wire = decision_transaction(b, fee_payer, q, att)?;
    simulate_wire(rpc, b, &wire, watch).await
}

/// The unsigned `gate_payment` transaction of `q`, paid by `fee_payer`, as base64 of its
/// wire bytes: a pure function of its inputs (the RPC replaces the blockhash), so callers
/// that decide the same payment often may keep it.
pub fn decision_transaction(
    b: &Builder,
    fee_payer: &Pubkey,
    q: &PaymentQuery,
    att: Attestations,
) -> Result<String, ClientError> {
    let ix = decision_instruction(b, q, att);
    crate::settle::encode_transaction(&Transaction::new_with_payer(&[ix], Some(fee_payer)))
}

/// Simulates a `gate_payment` transaction given as base64 (see [`decision_transaction`])
/// without signature checks and with the cluster's latest blockhash, reading `watch`.
pub async fn simulate_wire(
    rpc: &RpcClient,
    b: &Builder,
    wire: &str,
    watch: &[Pubkey],
) -> Result<Simulated, ClientError> {
    let config = RpcSimulateTransactionConfig {
        sig_verify: false,
        // An unsigned transaction gets the cluster's latest blockhash.
        replace_recent_blockhash: true,
        commitment: Some(CommitmentConfig::confirmed()),
        encoding: Some(solana_transaction_status_client_types::UiTransactionEncoding::Base64),
        accounts: (!watch.is_empty()).then(|| RpcSimulateTransactionAccountsConfig {
            encoding: Some(UiAccountEncoding::Base64),
            addresses: watch.iter().map(|k| k.to_string()).collect(),
        }),
        ..RpcSimulateTransactionConfig::default()
    };
    let sim: Response<RpcSimulateTransactionResult> = rpc
        .send(
            RpcRequest::SimulateTransaction,
            serde_json::json!([wire, config]),
        )
        .await?;
    let sim = sim.value;
    let accounts = match &sim.accounts {
        None => vec![None; watch.len()],
        Some(list) => list
            .iter()
            .map(|a| a.as_ref().and_then(|ui| ui.decode::<Account>()))
            .collect(),
    };
    if accounts.len() != watch.len() {
        return Err(ClientError::Decode {
            what: "simulateTransaction accounts".into(),
            reason: format!("{} accounts for {} addresses", accounts.len(), watch.len()),
        });
    }
    let decided = decision_of(b, sim);
    Ok(Simulated {
        holdback: decided.as_ref().ok().and_then(|d| d.1),
        decision: decided.map(|d| d.0),
        accounts,
    })
}

/// The decision in a simulation's return data and an Allow's holdback terms, or the failure
/// with its logs summarized.
fn decision_of(
    b: &Builder,
    sim: RpcSimulateTransactionResult,
) -> Result<(Decision, Option<Holdback>), ClientError> {
    let logs = sim.logs.unwrap_or_default();
    let Some(rd) = sim.return_data.filter(|r| !r.data.0.is_empty()) else {
        let err: Option<solana_sdk::transaction::TransactionError> = sim.err.map(Into::into);
        return Err(ClientError::SimulationFailed {
            named: err.as_ref().and_then(|e| crate::errors::explain(e, &logs)),
            err,
            logs: summarize_logs(&logs),
        });
    };
    let program = rd
        .program_id
        .parse::<Pubkey>()
        .map_err(|e| ClientError::Decode {
            what: "return data program id".into(),
            reason: e.to_string(),
        })?;
    let data = STANDARD
        .decode(&rd.data.0)
        .map_err(|e| ClientError::Decode {
            what: "return data".into(),
            reason: e.to_string(),
        })?;
    let decision = decode::decision_from_return_data(&b.ids.gate, &program, &data)?;
    Ok((decision, Holdback::from_wire(&data)))
}
