//! The TypeScript SDK's payer side of x402's `upto` (`packages/sdk/src/x402/upto.ts`) against
//! the Rust SDK's and the running services: the Rust client SDK
//! (`trust_gate_pay::session::UptoTerms`) builds a gated and a plain open and payload from
//! fixed keys, salt, open slot, blockhash and times; `packages/sdk/test/upto.test.mjs` builds
//! the same with the TypeScript SDK and compares them, then pays the demo's metered route
//! (`GET /metered?units=5`, offering `trust-gate-upto` first) through @x402/fetch with the
//! TypeScript scheme. Back here the chain must show the channel distributed at the five units
//! and exactly that moved from the payer to the payee.

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
use trust_gate_demo::{challenge, DemoConfig};
use trust_gate_pay::session::{SessionGate, UptoTerms};
use trust_gate_x402::upto::{self, UptoExtra};

/// The units the end-to-end request uses, and a unit's price in the metered mint.
const UNITS: u64 = 5;
const UNIT_PRICE: u64 = 100_000;

async fn node_test(dir: PathBuf, file: &'static str, fixture: Value) -> String {
    tokio::task::spawn_blocking(move || node::node_test(&dir, file, &fixture))
        .await
        .expect("the node run finishes")
}

fn demo_config(s: &Services) -> DemoConfig {
    DemoConfig::demo_world(&s.facilitator.url(), &s.demo.url())
}

/// One `upto` open the Rust SDK builds for fixed inputs (the tier-3 payer's owner, the
/// metered mint, the demo's offer with `memo`), and its payload.
async fn parity_case(s: &Services, label: &str, gated: bool, memo: Option<&str>) -> Value {
    let w = &s.env.world;
    let c = demo_config(s);
    let payer = w.payer(3).unwrap();
    let network = s.facilitator.facilitator.caip2().await.unwrap();
    let mut offer = challenge::metered_offer(
        &c,
        &network,
        &w.facilitator.pubkey(),
        &payer.asset(),
        1_700_000_000,
        gated,
    );
    if let Some(m) = memo {
        offer.extra.insert("memo".into(), m.into());
    }
    let extra: UptoExtra = serde_json::from_value(Value::Object(offer.extra.clone())).unwrap();
    let ceiling: u64 = offer.amount.parse().unwrap();
    // Past 2^53, so that a salt or a slot read as a JS number would differ.
    let (salt, open_slot) = if gated {
        (u64::MAX - 3, 123_456)
    } else {
        (7, (1u64 << 53) + 1)
    };
    let (valid_after, expires_at) = (1_700_000_000 - 1, 1_700_000_000 + 300);
    let blockhash = Hash::new_from_array([9; 32]);
    let tables = s.env.tables().await;
    let payload = UptoTerms {
        builder: &s.env.b,
        extra: &extra,
        mint: w.metered_mint(),
        token_program: TokenProgram::Token2022,
        pay_to: c.pay_to,
        payer: &payer.owner,
        ceiling,
        salt,
        open_slot,
        valid_after,
        expires_at,
        gate: gated.then(|| SessionGate {
            payer_asset: payer.asset(),
            payee_asset: c.payee_asset,
            policy_id: c.metered_policy_id,
            attestations: Default::default(),
            approval: None,
        }),
        tables: &tables,
        blockhash,
    }
    .payload()
    .unwrap();
    json!({
        "label": label,
        "offer": offer,
        "gate": {
            "payerAsset": payer.asset().to_string(),
            "payeeAsset": c.payee_asset.to_string(),
            "policyId": c.metered_policy_id,
        },
        "gated": gated,
        "mint": w.metered_mint().to_string(),
        "payTo": c.pay_to.to_string(),
        "payer": "payer-tier-3",
        "ceiling": ceiling.to_string(),
        "salt": salt.to_string(),
        "openSlot": open_slot.to_string(),
        "validAfter": valid_after,
        "expiresAt": expires_at,
        "blockhash": blockhash.to_string(),
        "payload": payload,
    })
}

async fn balance(s: &Services, owner: &Pubkey) -> u64 {
    let ata = TokenProgram::Token2022.associated_account(owner, &s.env.world.metered_mint());
    s.env.token_balance(&ata).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_upto_scheme_builds_the_rust_bytes_and_pays_the_metered_route() {
    let dir = node::build_sdk();
    let s = services::start().await;
    let w = &s.env.world;
    let c = demo_config(&s);
    let payer = w.payer(3).unwrap();
    let network = s.facilitator.facilitator.caip2().await.unwrap();
    let report =
        std::env::temp_dir().join(format!("trust-gate-ts-upto-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&report);
    let keys: serde_json::Map<String, Value> = w
        .keys()
        .into_iter()
        .map(|(label, k)| (label, json!(k.to_bytes().to_vec())))
        .collect();
    let ceiling = c.unit_price * c.max_units;
    assert_eq!(c.unit_price, UNIT_PRICE);
    let fixture = json!({
        "rpcUrl": s.env.localnet.rpc_url(),
        "facilitatorUrl": s.facilitator.url(),
        "network": network,
        "keys": keys,
        "parity": [
            parity_case(&s, "gated, with a memo", true, Some("metered-1")).await,
            parity_case(&s, "plain, with an empty memo", false, Some("")).await,
        ],
        "metered": {
            "url": format!("{}?units={UNITS}", s.d("/metered")),
            "payer": "payer-tier-3",
            "mint": w.metered_mint().to_string(),
            "ceiling": ceiling.to_string(),
            "units": UNITS,
            "charged": (UNITS * UNIT_PRICE).to_string(),
            "report": report.to_string_lossy(),
        },
    });
    let pay_to = c.pay_to;
    let payer_owner = payer.owner.pubkey();
    let (to_before, payer_before) = (balance(&s, &pay_to).await, balance(&s, &payer_owner).await);

    let out = node_test(dir, "test/upto.test.mjs", fixture).await;
    eprintln!("{out}");

    // The payee gained exactly the five units, the payer lost exactly them.
    let charge = UNITS * UNIT_PRICE;
    assert_eq!(balance(&s, &pay_to).await - to_before, charge);
    assert_eq!(payer_before - balance(&s, &payer_owner).await, charge);

    // The channel the Node test paid through, as its payload named it.
    let reported: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let _ = std::fs::remove_file(&report);
    assert_eq!(reported["scheme"], upto::SCHEME_GATED_UPTO);
    let channel: Pubkey = reported["channelId"].as_str().unwrap().parse().unwrap();
    let acc = chain::account(&s.env.rpc, &channel).await.unwrap().unwrap();
    let ch = Channel::decode(&acc.data).unwrap();
    assert_eq!(
        (ch.status, ch.deposit, ch.settled),
        (Status::Distributed, ceiling, charge),
        "{ch:?}"
    );
    assert_eq!(ch.payer, payer_owner);
    assert_eq!(ch.payee, w.facilitator.pubkey());
    assert_eq!(ch.authorized_signer, c.service_key.pubkey());
    // Opened and closed through the gate: its record is gone, the payee's receipt written.
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
