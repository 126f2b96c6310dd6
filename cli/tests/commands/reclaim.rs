//! `trust-gate reclaim`: a dry run reports what would close and sends nothing; the real run
//! closes every closable record with a progress bar and a summary, and a second run finds
//! nothing left.

use crate::fixture::{self, Env};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signer::Signer;
use trust_gate_client::decode::DISPUTE_WINDOW_SECS;

/// Runs `trust-gate reclaim <args>` against `env`; returns (success, stdout, stderr).
fn reclaim(env: &Env, args: &[&str]) -> (bool, String, String) {
    let args: Vec<&str> = std::iter::once("reclaim")
        .chain(args.iter().copied())
        .collect();
    crate::trust_gate(env, &args, &["FACILITATOR_KEYPAIR", "NETWORK"])
}

async fn settled(env: &Env) -> Pubkey {
    let pay = Pubkey::new_unique().to_bytes();
    env.settle(3, 1_000, pay).await;
    env.b
        .pda
        .feedback_log(&env.world.facilitator.pubkey(), &pay)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reclaim_closes_what_may_close_and_says_what_it_did() {
    let env = fixture::seeded().await;
    let logs = [settled(&env).await, settled(&env).await];
    let facilitator = env.world.facilitator.pubkey();

    // Still disputable: nothing to close, and when the next one may.
    let (ok, out, err) = reclaim(&env, &["--dry-run"]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("0 payment record(s) to close"), "{out}");
    assert!(out.contains("2 still open"), "{out}");
    assert!(out.contains("the next one closes in"), "{out}");

    env.localnet
        .warp(DISPUTE_WINDOW_SECS as u64 + 120)
        .await
        .unwrap();
    let (ok, out, err) = reclaim(&env, &["--dry-run"]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("2 payment record(s) to close"), "{out}");
    assert!(out.contains("Dry run: 1 transaction(s)"), "{out}");
    for log in &logs {
        assert!(
            env.rpc.get_balance(log).await.unwrap() > 0,
            "a dry run sends nothing"
        );
    }

    let rent: u64 = env.rpc.get_balance(&logs[0]).await.unwrap() * 2;
    let before = env.rpc.get_balance(&facilitator).await.unwrap();
    let (ok, out, err) = reclaim(&env, &[]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("Closed 2 payment record(s)"), "{out}");
    assert!(
        err.contains("2/2 payments closed"),
        "the progress bar: {err}"
    );
    for log in &logs {
        assert_eq!(env.rpc.get_balance(log).await.unwrap(), 0, "closed");
    }
    // The demo facilitator paid the one transaction's fee and got both logs' rent back.
    assert_eq!(
        env.rpc.get_balance(&facilitator).await.unwrap(),
        before + rent - 5_000
    );
    let (ok, out, _) = reclaim(&env, &[]);
    assert!(ok && out.contains("0 payment record(s) to close"), "{out}");

    // Bad input is named.
    let (ok, out, err) = reclaim(&env, &["--facilitator", "nope"]);
    assert!(!ok && err.contains("--facilitator"), "{out}{err}");
}
