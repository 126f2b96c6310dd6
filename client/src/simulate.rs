//! `gate_payment`: the decision a real gate would make, by simulation.

use crate::chain;
use crate::decode::{self, AcceptancePolicy, Decision, PolicyAccount};
use crate::error::ClientError;
use crate::errors::summarize_logs;
use crate::instructions::{Attestations, Builder};
use anchor_lang::prelude::Pubkey;
use base64::{engine::general_purpose::STANDARD, Engine as _};
use solana_commitment_config::CommitmentConfig;
use solana_rpc_client::nonblocking::rpc_client::RpcClient;
use solana_rpc_client_api::config::RpcSimulateTransactionConfig;
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PaymentQuery {
    pub payer_asset: Pubkey,
    pub payee_asset: Pubkey,
    pub amount: u64,
    pub mint: Pubkey,
    pub policy_id: u32,
}

/// Unix seconds of the local clock (what expiries are compared with off chain).
pub fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

/// The attestation accounts a real gate would see for `q`: the payee's, when the payer's
/// policy requires a capability; the payer's, when the payee's acceptance policy does.
pub async fn attestations_for(
    rpc: &RpcClient,
    b: &Builder,
    q: &PaymentQuery,
    now: i64,
) -> Result<Attestations, ClientError> {
    let keys = [
        b.pda.policy(&q.payer_asset, q.policy_id),
        b.pda.acceptance(&q.payee_asset),
    ];
    let accs = chain::accounts(rpc, &keys).await?;
    let ours = |i: usize| accs[i].as_ref().filter(|a| a.owner == b.ids.policy_vault);
    let mut att = Attestations::default();
    // The payer's policy may ask an attestation of the payee; the payee's acceptance policy
    // one of the payer.
    if let Some(p) = ours(0) {
        let policy: PolicyAccount = decode::account("PolicyAccount", &p.data)?;
        let rule = (
            policy.params.required_capability,
            policy.params.accepted_attestors,
        );
        att.payee = required_attestation(rpc, b, &q.payee_asset, rule, now).await?;
    }
    if let Some(a) = ours(1) {
        let acceptance: AcceptancePolicy = decode::account("AcceptancePolicy", &a.data)?;
        let rule = (
            acceptance.params.required_capability,
            acceptance.params.accepted_attestors,
        );
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
    (capability, attestors): ([u8; 32], [Pubkey; 2]),
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
async fn simulation_fee_payer(
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
    let att = attestations_for(rpc, b, &q, now_unix()).await?;
    let ix = b.gate_payment(
        &q.payer_asset,
        &q.payee_asset,
        q.amount,
        &q.mint,
        q.policy_id,
        att,
    );
    let fee_payer = match &caller {
        Caller::Keypair(k) => k.pubkey(),
        Caller::Pubkey(p) => simulation_fee_payer(rpc, b, *p, &q).await?,
    };
    let mut tx = Transaction::new_with_payer(&[ix], Some(&fee_payer));
    let sig_verify = match &caller {
        Caller::Keypair(k) => {
            let blockhash = rpc.get_latest_blockhash().await?;
            tx.try_sign(&[*k], blockhash)
                .map_err(|e| ClientError::input("caller", e.to_string()))?;
            true
        }
        Caller::Pubkey(_) => false,
    };
    let sim = rpc
        .simulate_transaction_with_config(
            &tx,
            RpcSimulateTransactionConfig {
                sig_verify,
                // An unsigned transaction gets the cluster's latest blockhash.
                replace_recent_blockhash: !sig_verify,
                commitment: Some(CommitmentConfig::confirmed()),
                ..RpcSimulateTransactionConfig::default()
            },
        )
        .await?
        .value;
    let logs = sim.logs.unwrap_or_default();
    let Some(rd) = sim.return_data.filter(|r| !r.data.0.is_empty()) else {
        let err: Option<solana_sdk::transaction::TransactionError> = sim.err.map(Into::into);
        return Err(ClientError::SimulationFailed {
            named: err.as_ref().and_then(|e| crate::errors::explain(e, &logs)),
            err,
            logs: summarize_logs(&logs, 400),
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
    decode::decision_from_return_data(&b.ids.gate, &program, &data)
}
