//! Approvals over HTTP, as a user runs them, against a seeded localnet with the facilitator
//! and the demo on loopback: a payment above the payer policy's approval threshold
//! (`trust-gate pay`) is held (the pending id printed; `trust-gate approvals` and
//! `GET /approvals` list it), approved on chain by `trust-gate approve ID`, then paid by the
//! same command and settled in one transaction: the approval used up, its rent back with the
//! member who paid it, the pending record forgotten. A gated session's deposit and a gated
//! `upto` ceiling above the threshold likewise.

use crate::fixture::{self, Env};
use anchor_lang::prelude::Pubkey;
use serde_json::Value;
use solana_sdk::signer::Signer;
use trust_gate_client::chain;
use trust_gate_client::decode::{ApprovalTerms, PaymentApproval};
use trust_gate_migrations::demo;

/// The payment's policy (the demo mint) and the sessions' (the metered mint).
const POLICY: u32 = 7;
const METERED_POLICY: u32 = 8;
/// Just below the demo's price: every payment needs an approval.
const THRESHOLD: u64 = demo::PRICE - 1;
/// Sessions: a deposit of 10 requests at 1 000 is above it, one request is not.
const METERED_THRESHOLD: u64 = 5_000;

/// Runs `trust-gate <args>` (off the async workers: the servers run on them); `rpc` appends
/// `--rpc-url`.
async fn cli(env: &Env, args: &[&str], rpc: bool) -> (bool, String, String) {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_trust-gate"));
    command.args(args).env("RUST_LOG", "error");
    if rpc {
        command.args(["--rpc-url", &env.localnet.rpc_url()]);
    }
    for name in ["NETWORK", "FACILITATOR_URL", "PAYER_KEYPAIR"] {
        command.env_remove(name);
    }
    let out = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The id `trust-gate pay` printed for a held payment.
fn pending_id(out: &str) -> Pubkey {
    let line = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("pending approval "))
        .unwrap_or_else(|| panic!("no pending approval in: {out}"));
    line.parse().unwrap()
}

/// A JSON file in the system's temporary directory.
fn file(name: &str, body: &str) -> String {
    let path = std::env::temp_dir().join(format!("trust-gate-{}-{name}", std::process::id()));
    std::fs::write(&path, body).unwrap();
    path.to_string_lossy().into_owned()
}

async fn get(url: String) -> (u16, Value) {
    let r = reqwest::get(url).await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_payment_and_a_held_deposit_pass_once_the_cli_approves_them() {
    let env = fixture::seeded().await;
    let w = &env.world;
    let payer = w.payer(3).unwrap();
    let asset = payer.asset().to_string();

    // The tier-3 payer's two policies with an approval threshold, made by the CLI.
    for (id, mint, threshold) in [
        (POLICY, w.mint(), THRESHOLD),
        (METERED_POLICY, w.metered_mint(), METERED_THRESHOLD),
    ] {
        let json =
            format!(r#"{{"kinds": 0, "mint": "{mint}", "approval_threshold": "{threshold}"}}"#);
        let path = file(&format!("policy-{id}.json"), &json);
        let (ok, out, err) = cli(
            &env,
            &[
                "policy",
                "create",
                "--asset",
                &asset,
                "--policy-id",
                &id.to_string(),
                "--file",
                &path,
            ],
            true,
        )
        .await;
        assert!(ok, "{out}{err}");
    }
    let (ok, out, err) = cli(
        &env,
        &[
            "policy",
            "show",
            "--asset",
            &asset,
            "--policy-id",
            &POLICY.to_string(),
        ],
        true,
    )
    .await;
    assert!(ok, "{out}{err}");
    assert!(
        out.contains(&format!("\"approvalThreshold\": \"{THRESHOLD}\"")),
        "{out}"
    );

    // The facilitator and the demo, the demo charging under those policies.
    let (facilitator, demo_server) = env.services(POLICY, METERED_POLICY).await;
    let f = facilitator.url();
    let protected = format!("{}/protected", demo_server.url());

    // Held: the paid attempt is refused before anything is sent, its id printed.
    let pay = ["pay", protected.as_str(), "--facilitator-url", f.as_str()];
    let (ok, out, err) = cli(&env, &pay, true).await;
    assert!(!ok, "{out}{err}");
    assert!(out.contains("Decision: RequireApproval"), "{out}{err}");
    let id = pending_id(&out);
    let terms = ApprovalTerms {
        payer_asset: payer.asset(),
        payee_asset: w.service.asset(),
        mint: w.mint(),
        amount: demo::PRICE,
        policy_id: POLICY,
    };
    assert_eq!(
        id,
        env.b.pda.approval(&terms),
        "the id is the terms' approval address"
    );

    // A verify context (nobody signed it) gets the id, and nothing is kept for it.
    let context = serde_json::json!({
        "payerAgentAsset": asset,
        "payeeAgentAsset": w.service.asset().to_string(),
        "amount": demo::PRICE.to_string(),
        "mint": w.mint().to_string(),
        "policyId": POLICY,
    });
    let r = reqwest::Client::new()
        .post(format!("{f}/verify"))
        .json(&context)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 402);
    let header = |name: &str| r.headers()[name].to_str().unwrap().to_string();
    assert_eq!(header("X-Gate-Decision"), "RequireApproval");
    assert_eq!(header("X-Payment-Required"), "approval");
    assert_eq!(header("X-Gate-Approval-Id"), id.to_string());
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["approval"]["id"], id.to_string(), "{body}");
    assert_eq!(body["approval"]["pending"], Value::Null, "{body}");
    assert_eq!(body["invalidReason"], "RequireApproval");

    // Listed, by the CLI and over HTTP, with what it is for.
    let (ok, out, err) = cli(&env, &["approvals", "--facilitator-url", &f], false).await;
    assert!(ok, "{out}{err}");
    assert!(out.contains(&format!("{id}  pending")), "{out}");
    let (status, listed) = get(format!("{f}/approvals?payer={asset}")).await;
    assert_eq!(status, 200, "{listed}");
    let held = &listed["approvals"][0];
    assert_eq!(held["id"], id.to_string(), "{listed}");
    assert_eq!(held["state"], "pending");
    assert_eq!(held["kind"], "payment");
    assert_eq!(held["amount"], demo::PRICE.to_string());
    assert_eq!(held["resource"], protected.as_str());
    let (status, none) = get(format!("{f}/approvals?payer={}", w.service.asset())).await;
    assert_eq!(
        (status, none["approvals"].as_array().unwrap().len()),
        (200, 0)
    );
    let (status, bad) = get(format!("{f}/approvals?payer=nope")).await;
    assert_eq!(status, 400, "{bad}");
    assert!(
        bad["message"].as_str().unwrap().starts_with("payer"),
        "{bad}"
    );

    // Paying again without an approval: held again, not paid.
    let (ok, out, _) = cli(&env, &pay, true).await;
    assert!(!ok && pending_id(&out) == id, "{out}");

    // Approved by the CLI as the payer's owner (the demo authority's one member).
    let owner = payer.owner.pubkey();
    let approve = ["approve", &id.to_string(), "--facilitator-url", f.as_str()];
    let (ok, out, err) = cli(&env, &approve, true).await;
    assert!(ok, "{out}{err}");
    assert!(out.contains("Approved on chain"), "{out}");
    let stands: PaymentApproval = chain::anchor_account(&env.rpc, "PaymentApproval", &id)
        .await
        .unwrap()
        .expect("the approval on chain");
    assert_eq!((stands.rent_payer, stands.signers), (owner, 1));
    assert_eq!(stands.terms(), terms);
    let rent = env.rpc.get_balance(&id).await.unwrap();
    assert!(rent > 0);
    let (_, one) = get(format!("{f}/approvals/{id}")).await;
    assert_eq!(one["state"], "approved", "{one}");
    assert_eq!(one["approval"]["rentPayer"], owner.to_string());
    // Approving again is a no-op, said so.
    let (ok, out, _) = cli(&env, &approve, true).await;
    assert!(ok && out.contains("Already approved"), "{out}");

    // Paid: the approval used up in the settlement, its rent back with the owner.
    let before = env.rpc.get_balance(&owner).await.unwrap();
    let (ok, out, err) = cli(&env, &pay, true).await;
    assert!(ok, "{out}{err}");
    assert!(out.contains("Paid and settled in one transaction"), "{out}");
    assert_eq!(env.rpc.get_balance(&id).await.unwrap(), 0);
    assert_eq!(env.rpc.get_balance(&owner).await.unwrap(), before + rent);
    let (status, gone) = get(format!("{f}/approvals/{id}")).await;
    assert_eq!(status, 404, "{gone}");
    // The next payment of the same terms needs a new approval.
    let (ok, out, _) = cli(&env, &pay, true).await;
    assert!(!ok && pending_id(&out) == id, "{out}");

    // An approval left unused is closed by its member, its rent back; then there is none.
    let (ok, out, err) = cli(&env, &approve, true).await;
    assert!(ok, "{out}{err}");
    let before = env.rpc.get_balance(&owner).await.unwrap();
    let close = ["approve", &id.to_string(), "--close"];
    let (ok, out, err) = cli(&env, &close, true).await;
    assert!(
        ok && out.contains("Closed the unused approval"),
        "{out}{err}"
    );
    assert_eq!(env.rpc.get_balance(&id).await.unwrap(), 0);
    // The owner paid the close's fee (5 000 lamports) and got the rent back.
    assert_eq!(
        env.rpc.get_balance(&owner).await.unwrap(),
        before + rent - 5_000
    );
    let (ok, _, err) = cli(&env, &close, true).await;
    assert!(!ok && err.contains("no approval stands"), "{err}");

    // A gated session whose deposit (10 requests at 1 000) is above the threshold: held,
    // approved, then opened with it.
    let session_url = format!("{}/session", demo_server.url());
    let session = [
        "pay",
        session_url.as_str(),
        "--facilitator-url",
        f.as_str(),
        "--scheme",
        "batch-settlement",
        "--requests",
        "2",
        "--deposit-requests",
        "10",
    ];
    let (ok, out, err) = cli(&env, &session, true).await;
    assert!(!ok, "{out}{err}");
    let deposit_id = pending_id(&out);
    let deposit_terms = ApprovalTerms {
        mint: w.metered_mint(),
        amount: 10_000,
        policy_id: METERED_POLICY,
        ..terms
    };
    assert_eq!(deposit_id, env.b.pda.approval(&deposit_terms));
    let (_, one) = get(format!("{f}/approvals/{deposit_id}")).await;
    assert_eq!(
        (one["kind"].as_str(), one["state"].as_str()),
        (Some("channel"), Some("pending")),
        "{one}"
    );
    let (ok, out, err) = cli(
        &env,
        &["approve", &deposit_id.to_string(), "--facilitator-url", &f],
        true,
    )
    .await;
    assert!(ok, "{out}{err}");
    let (ok, out, err) = cli(&env, &session, true).await;
    assert!(ok, "{out}{err}");
    assert!(out.contains("Opened channel"), "{out}");
    assert!(out.contains("Paid 2 requests"), "{out}");
    assert_eq!(env.rpc.get_balance(&deposit_id).await.unwrap(), 0);
    let (status, _) = get(format!("{f}/approvals/{deposit_id}")).await;
    assert_eq!(status, 404);
    // A session whose deposit is within the threshold needs none.
    let small = [
        "pay",
        session_url.as_str(),
        "--facilitator-url",
        f.as_str(),
        "--scheme",
        "batch-settlement",
        "--requests",
        "1",
        "--deposit-requests",
        "5",
    ];
    let (ok, out, err) = cli(&env, &small, true).await;
    assert!(ok, "{out}{err}");

    // A gated upto payment: its ceiling (20 units at 100 000) is escrowed by a deposit above
    // the threshold: held, approved, then paid with it.
    let metered_url = format!("{}/metered?units=3", demo_server.url());
    let upto = [
        "pay",
        metered_url.as_str(),
        "--facilitator-url",
        f.as_str(),
        "--scheme",
        "upto",
    ];
    let (ok, out, err) = cli(&env, &upto, true).await;
    assert!(!ok, "{out}{err}");
    let ceiling_id = pending_id(&out);
    assert_eq!(
        ceiling_id,
        env.b.pda.approval(&ApprovalTerms {
            amount: 2_000_000,
            ..deposit_terms
        })
    );
    let (ok, out, err) = cli(
        &env,
        &["approve", &ceiling_id.to_string(), "--facilitator-url", &f],
        true,
    )
    .await;
    assert!(ok, "{out}{err}");
    let (ok, out, err) = cli(&env, &upto, true).await;
    assert!(ok, "{out}{err}");
    assert!(
        out.contains("Charged 300000 of the escrowed ceiling"),
        "{out}"
    );
    assert_eq!(env.rpc.get_balance(&ceiling_id).await.unwrap(), 0);

    // An id the facilitator does not hold: refused by name, nothing signed.
    let stranger = Pubkey::new_unique().to_string();
    let (ok, _, err) = cli(&env, &["approve", &stranger, "--facilitator-url", &f], true).await;
    assert!(!ok && err.contains("404"), "{err}");
}
