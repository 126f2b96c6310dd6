//! The TypeScript SDK's payer side of x402's `batch-settlement` (`packages/sdk/src/x402/batch.ts`)
//! against the Rust SDK's and the running services: the Rust client SDK
//! (`trust_gate_pay::session`) opens a gated and a plain session from fixed keys, salt, open
//! slot and blockhash and signs their vouchers; `packages/sdk/test/batch.test.mjs` builds the
//! same with the TypeScript SDK and compares the payloads (the open's bytes, the vouchers'
//! signatures), then `@x402/fetch` with the TypeScript scheme pays the running demo's gated
//! `/session` route six times (a deposit, five vouchers); the last payment sent again is
//! refused by the demo and by the Express mount's /verify; after a lost answer the scheme
//! resumes from the demo's corrective 402 and pays a seventh request; the scheme's refund sent
//! to the same route ends the session. Back here the chain must show the channel settled at
//! seven prices and the payee paid them.

use crate::node;
use crate::services::{self, Services};
use serde_json::{json, Value};
use solana_sdk::hash::Hash;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Signer;
use std::path::PathBuf;
use trust_gate_client::chain;
use trust_gate_client::channels::{Channel, Status};
use trust_gate_client::settle::TokenProgram;
use trust_gate_client::simulate::now_unix;
use trust_gate_demo::{challenge, DemoConfig};
use trust_gate_migrations::demo;
use trust_gate_pay::session::{SessionGate, SessionTerms};
use trust_gate_x402::batch::BatchExtra;

/// A request's price in the metered mint.
const PRICE: u64 = 1_000;
/// The end-to-end session's deposit, in requests, and the requests it pays; then one more,
/// paid again after a lost answer (the corrective 402).
const REQUESTS_PER_DEPOSIT: u64 = 10;
const REQUESTS: u64 = 6;
const SERVED: u64 = REQUESTS + 1;

/// Runs the package's Node test `file` off the async runtime, so that the servers keep
/// answering while it runs.
async fn node_test(dir: PathBuf, file: &'static str, fixture: Value) -> String {
    tokio::task::spawn_blocking(move || node::node_test(&dir, file, &fixture))
        .await
        .expect("the node run finishes")
}

/// The demo service's terms, at the URL the running demo signs into its challenges.
fn demo_config(s: &Services) -> DemoConfig {
    DemoConfig::demo_world(&s.facilitator.url(), &s.demo.url())
}

/// One session the Rust SDK opens for fixed inputs (the tier-3 payer's owner, a fixed voucher
/// key, the metered mint), and what it signs: the deposit payload (the open and a voucher of
/// one price), a voucher payload of 2.5 prices more, the refund payload, and the refusal of a
/// voucher past the deposit.
async fn parity_case(s: &Services, label: &str, gated: bool, memo: Option<&str>) -> Value {
    let w = &s.env.world;
    let c = demo_config(s);
    let payer = w.payer(3).unwrap();
    let network = s.facilitator.facilitator.caip2().await.unwrap();
    let offer = challenge::session_offer(
        &c,
        &network,
        &w.facilitator.pubkey(),
        &payer.asset(),
        1_700_000_000,
        PRICE,
        gated,
    );
    let mut extra: BatchExtra = serde_json::from_value(Value::Object(offer.extra.clone())).unwrap();
    extra.memo = memo.map(String::from);
    let voucher_key = trust_gate_localnet::deterministic_keypair("ts-batch-voucher-key");
    // Past 2^53, so that a salt read as a JS number would differ.
    let (deposit, salt, open_slot) = if gated {
        (100_000, u64::MAX - 3, 123_456)
    } else {
        (5_000, 7, 99)
    };
    let blockhash = Hash::new_from_array([7; 32]);
    let tables = s.env.tables().await;
    let (tx, mut session) = SessionTerms {
        builder: &s.env.b,
        extra: &extra,
        mint: w.metered_mint(),
        token_program: TokenProgram::Token2022,
        pay_to: c.pay_to,
        payer: &payer.owner,
        voucher_key: voucher_key.insecure_clone(),
        deposit,
        salt,
        open_slot,
        gate: gated.then(|| SessionGate {
            payer_asset: payer.asset(),
            payee_asset: c.payee_asset,
            policy_id: demo::METERED_POLICY_ID,
            attestations: Default::default(),
            approval: None,
        }),
        tables: &tables,
        blockhash,
    }
    .open()
    .unwrap();
    // The gated open loads from the facilitator's tables; the plain one never does.
    let lookups = tx.message.address_table_lookups().map_or(0, |l| l.len());
    assert_eq!(lookups > 0, gated, "{label}: {lookups} table lookups");
    let deposit_payload = session.deposit_payload(&tx, PRICE).unwrap();
    let voucher_payload = session.voucher_payload(PRICE * 5 / 2).unwrap();
    let over = session.voucher(deposit).unwrap_err().to_string();
    json!({
        "label": label,
        "offer": offer,
        "extra": extra,
        "gate": {
            "payerAsset": payer.asset().to_string(),
            "payeeAsset": c.payee_asset.to_string(),
            "policyId": demo::METERED_POLICY_ID,
        },
        "gated": gated,
        "mint": w.metered_mint().to_string(),
        "payTo": c.pay_to.to_string(),
        "payer": "payer-tier-3",
        "voucherKey": voucher_key.to_bytes().to_vec(),
        "deposit": deposit.to_string(),
        "salt": salt.to_string(),
        "openSlot": open_slot.to_string(),
        "blockhash": blockhash.to_string(),
        "price": PRICE.to_string(),
        "secondPrice": (PRICE * 5 / 2).to_string(),
        "channel": session.channel.to_string(),
        "depositPayload": deposit_payload,
        "voucherPayload": voucher_payload,
        "refundPayload": session.refund_payload(),
        "overDeposit": over,
    })
}

fn ata(owner: &Pubkey, s: &Services) -> Pubkey {
    TokenProgram::Token2022.associated_account(owner, &s.env.world.metered_mint())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_batch_scheme_builds_the_rust_bytes_and_pays_a_gated_session() {
    let dir = node::build_sdk();
    let s = services::start().await;
    let w = &s.env.world;
    let c = demo_config(&s);
    let payer = w.payer(3).unwrap();
    let network = s.facilitator.facilitator.caip2().await.unwrap();
    let offer = challenge::session_offer(
        &c,
        &network,
        &w.facilitator.pubkey(),
        &payer.asset(),
        now_unix(),
        PRICE,
        true,
    );
    let report =
        std::env::temp_dir().join(format!("trust-gate-ts-batch-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&report);
    let keys: serde_json::Map<String, Value> = w
        .keys()
        .into_iter()
        .map(|(label, k)| (label, json!(k.to_bytes().to_vec())))
        .collect();
    // A close authorization for fixed terms, which the TypeScript SDK must sign the same.
    let close_key = trust_gate_localnet::deterministic_keypair("ts-batch-close-key");
    let (close_fee_payer, close_channel) =
        (w.facilitator.pubkey(), Pubkey::new_from_array([9; 32]));
    let close_terms = trust_gate_x402::batch::CloseTerms {
        network: &network,
        fee_payer: &close_fee_payer,
        channel: &close_channel,
        max_claimable: 123_456,
        valid_before: 1_800_000_000,
    };
    let fixture = json!({
        "rpcUrl": s.env.localnet.rpc_url(),
        "facilitatorUrl": s.facilitator.url(),
        "facilitator": w.facilitator.pubkey().to_string(),
        "closeAuthorization": {
            "network": network,
            "feePayer": close_fee_payer.to_string(),
            "channel": close_channel.to_string(),
            "maxClaimable": "123456",
            "validBefore": "1800000000",
            "key": close_key.to_bytes().to_vec(),
            "digestHex": trust_gate_client::decode::hex(&close_terms.digest()),
            "authorization": close_terms.sign(&close_key),
        },
        "network": network,
        "keys": keys,
        "parity": [
            parity_case(&s, "gated, with the offer's memo", true, Some("session-1")).await,
            parity_case(&s, "plain", false, None).await,
        ],
        "session": {
            "offer": offer,
            "resourceUrl": c.session_url(),
            "payer": "payer-tier-3",
            "price": PRICE.to_string(),
            "requestsPerDeposit": REQUESTS_PER_DEPOSIT,
            "requests": REQUESTS,
            "report": report.to_string_lossy(),
        },
    });
    let pay_to = ata(&c.pay_to, &s);
    let payer_ata = ata(&payer.owner.pubkey(), &s);
    let (to_before, payer_before) = (
        s.env.token_balance(&pay_to).await,
        s.env.token_balance(&payer_ata).await,
    );

    let out = node_test(dir, "test/batch.test.mjs", fixture).await;
    eprintln!("{out}");

    // The channel the Node test paid through, as it reported it.
    let reported: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let _ = std::fs::remove_file(&report);
    let channel: Pubkey = reported["channel"].as_str().unwrap().parse().unwrap();
    let acc = chain::account(&s.env.rpc, &channel).await.unwrap().unwrap();
    let ch = Channel::decode(&acc.data).unwrap();
    assert_eq!(
        (ch.status, ch.deposit, ch.settled),
        (
            Status::Distributed,
            REQUESTS_PER_DEPOSIT * PRICE,
            SERVED * PRICE
        ),
        "{ch:?}"
    );
    assert_eq!(ch.payer, payer.owner.pubkey());
    assert_eq!(ch.payee, w.facilitator.pubkey());
    assert_eq!(
        ch.authorized_signer.to_string(),
        reported["voucherKey"].as_str().unwrap()
    );
    // The payee got the prices of the requests served (the one sent again paid nothing more);
    // the payer lost them and got the rest of the deposit back.
    assert_eq!(
        s.env.token_balance(&pay_to).await - to_before,
        SERVED * PRICE
    );
    assert_eq!(
        payer_before - s.env.token_balance(&payer_ata).await,
        SERVED * PRICE
    );
    // Closed through the gate: its record is gone, the payee's receipt written.
    let record = s.env.b.pda.channel_record(&channel);
    assert!(chain::account(&s.env.rpc, &record).await.unwrap().is_none());
    let receipt = s
        .env
        .b
        .pda
        .channel_receipt(&w.facilitator.pubkey(), &channel);
    assert!(chain::account(&s.env.rpc, &receipt)
        .await
        .unwrap()
        .is_some());
}
