//! What the scenarios share: parties, a settlement, and the real accounts read back.

use solana_sdk::signature::{Keypair, Signer};
use trust_gate_program_common::external::{agent_account, ids};
use trust_gate_program_tests::world::{open_policy, pda, Agent, World};
use trust_gate_program_tests::{custom_code, payment_id, raw_account};

pub const AMOUNT: u64 = 1_000_000;

/// The AgentAccount's feedback hash-chain digest and count (after the optional agent wallet:
/// 139 and 171 without one, 171 and 203 with one; the stand-in keeps the same layout).
pub async fn registry_feedback(w: &mut World, agent: &Agent) -> ([u8; 32], u64) {
    let data = raw_account(&mut w.ctx, &pda::agent(&agent.asset()))
        .await
        .expect("AgentAccount")
        .data;
    let digest = agent_account::feedback_digest(&data).expect("an AgentAccount");
    let count = agent_account::feedback_count(&data).expect("an AgentAccount");
    (digest, count)
}

/// The real AtomStats' feedback count (offset 88) and last score (115), if the stats exist.
pub async fn engine_feedback(w: &mut World, agent: &Agent) -> Option<(u64, u8)> {
    let stats = raw_account(&mut w.ctx, &pda::stats(&agent.asset())).await?;
    assert_eq!(stats.owner, ids::REPUTATION_ENGINE);
    assert_eq!(stats.data.len(), 561);
    let count = u64::from_le_bytes(stats.data[88..96].try_into().unwrap());
    Some((count, stats.data[115]))
}

/// A payer with stats, an authority and policy 1 open to any payee, funded with tokens.
pub async fn payer(w: &mut World) -> Agent {
    let payer = w.register_agent().await;
    w.init_authority(&payer).await;
    w.init_policy(&payer, 1, open_policy(w.mint)).await.unwrap();
    w.token_account(&payer.owner.pubkey(), 100 * AMOUNT).await;
    payer
}

/// Settles `AMOUNT` from `payer` to `payee` (the feedback's score is 90); the payment id.
pub async fn settle(w: &mut World, payer: &Agent, payee: &Agent) -> Result<[u8; 32], Option<u32>> {
    w.token_account(&payee.owner.pubkey(), 0).await;
    let pay = payment_id();
    let ixs = w.settlement(payer, payee, AMOUNT, pay).await;
    match w.send_settlement(payer, &ixs).await {
        Ok(()) => Ok(pay),
        Err(e) => Err(custom_code(&e)),
    }
}

pub async fn balance(w: &mut World, owner: &Keypair) -> u64 {
    let account = w.token_account(&owner.pubkey(), 0).await;
    w.token_balance(&account).await
}
