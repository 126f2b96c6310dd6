//! `trust-gate holdback`: lists the held payments of the demo's low-tier payee and of the
//! payer's wallet, refunds one as the payee, has the arbiter reject a dispute of another and
//! releases a third after its hold, each with what moved; bad input is named.

use crate::fixture::{self, payment_id, Env};
use solana_sdk::signer::Signer;
use trust_gate_client::decode::hex;
use trust_gate_client::settle::{self, TokenProgram};
use trust_gate_migrations::demo;

fn holdback(env: &Env, args: &[&str]) -> (bool, String, String) {
    let args: Vec<&str> = std::iter::once("holdback")
        .chain(args.iter().copied())
        .collect();
    crate::trust_gate(env, &args, &["NETWORK"])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holdback_lists_refunds_arbitrates_and_releases_held_shares() {
    let env = fixture::seeded().await;
    let w = &env.world;
    let payer = w.holdback_payer();
    let (refunded, rejected, released) = (payment_id(), payment_id(), payment_id());
    let s = env.settle_held(refunded).await;
    let held = s.holdback.unwrap().held;
    env.settle_held(rejected).await;
    env.settle_held(released).await;

    // The payee's (the localnet's default) and the payer wallet's.
    let (ok, out, err) = holdback(&env, &["list"]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("3 held payment(s)"), "{out}");
    for id in [refunded, rejected, released] {
        let line = out.lines().find(|l| l.contains(&hex(&id))).expect(&out);
        assert!(
            line.contains("Held") && line.contains("releasable in"),
            "{line}"
        );
        assert!(
            line.contains(&format!("held {held} of {}", demo::PRICE)),
            "{line}"
        );
    }
    let wallet = payer.owner.pubkey().to_string();
    let (ok, by_payer, _) = holdback(&env, &["list", "--payer-wallet", &wallet]);
    assert!(ok && by_payer.contains("3 held payment(s)"), "{by_payer}");

    // Not before the hold: the chain's refusal, by name.
    let (ok, out, err) = holdback(&env, &["release", &hex(&released)]);
    assert!(!ok && err.contains("HoldbackNotDue"), "{out}{err}");

    // The payee refunds one: the share goes back to the payer's wallet.
    let mint = w.mint();
    let payer_token = TokenProgram::SplToken.associated_account(&payer.owner.pubkey(), &mint);
    let before = env.token_balance(&payer_token).await;
    let (ok, out, err) = holdback(&env, &["refund", &hex(&refunded)]);
    assert!(ok, "{out}{err}");
    assert!(
        out.contains(&format!("Refunded {held} to {payer_token}")),
        "{out}"
    );
    assert_eq!(env.token_balance(&payer_token).await, before + held);

    // The payer disputes another; the demo's arbiter rejects it: the share goes to the payee.
    let dispute = settle::Dispute {
        collection: env.collection,
        payment_id_hash: rejected,
        payee_asset: w.held_service.asset(),
        reason_hash: [1; 32],
        feedback_uri: String::new(),
    };
    settle::dispute(&env.rpc, &env.b, &w.facilitator, &payer.owner, &dispute)
        .await
        .unwrap();
    let payee_token =
        TokenProgram::SplToken.associated_account(&w.held_service.owner.pubkey(), &mint);
    let before = env.token_balance(&payee_token).await;
    let (ok, out, err) = holdback(&env, &["arbitrate", &hex(&rejected), "--reject"]);
    assert!(ok, "{out}{err}");
    assert!(
        out.contains(&format!("Rejected the dispute: {held} to {payee_token}")),
        "{out}"
    );
    assert_eq!(env.token_balance(&payee_token).await, before + held);

    // After the hold, anyone releases the last one to the payee.
    env.localnet
        .warp(u64::from(demo::holdback_schedule(w.arbiter.pubkey()).terms[1].hold_secs) + 5)
        .await
        .unwrap();
    let (ok, out, err) = holdback(&env, &["release", &hex(&released)]);
    assert!(ok, "{out}{err}");
    assert!(
        out.contains(&format!("Released {held} to {payee_token}")),
        "{out}"
    );
    let (ok, out, _) = holdback(&env, &["list"]);
    assert!(ok, "{out}");
    for (id, state) in [
        (refunded, "Refunded"),
        (rejected, "Rejected"),
        (released, "Released"),
    ] {
        let line = out.lines().find(|l| l.contains(&hex(&id))).expect(&out);
        assert!(line.contains(state) && line.contains("paid out"), "{line}");
    }

    // Bad input is named.
    let (ok, _, err) = holdback(&env, &["release", "nothex"]);
    assert!(!ok && err.contains("payment_id_hash"), "{err}");
    let (ok, _, err) = holdback(&env, &["release", &hex(&payment_id())]);
    assert!(!ok && err.contains("holds no share"), "{err}");
    let (ok, _, err) = holdback(&env, &["arbitrate", &hex(&released)]);
    assert!(!ok && err.contains("--uphold"), "{err}");
    let (ok, _, err) = holdback(&env, &["list", "--payee", "nope"]);
    assert!(!ok && err.contains("--payee"), "{err}");
}
