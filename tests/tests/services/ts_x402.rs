//! The TypeScript SDK (`packages/sdk`) against the running services: a seeded localnet, the
//! Rust facilitator and the Rust demo on loopback. Rust computes what the TypeScript side
//! must equal (decisions, composed settlements), then the package's Node tests run against
//! the same servers: the SDK's decisions and settlements, `@x402/fetch` paying the demo with
//! the trust-gate scheme, an `@x402/express` resource server settling through the
//! facilitator, a stock exact-scheme client refused cleanly, and the Express mount answering
//! as the facilitator does.

use crate::node;
use crate::services::{self, Services};
use serde_json::{json, Value};
use solana_sdk::hash::Hash;
use solana_sdk::instruction::Instruction;
use solana_sdk::signer::Signer;
use std::path::{Path, PathBuf};
use std::process::Command;
use trust_gate_client::decode::{hex, DecisionView};
use trust_gate_client::settle;
use trust_gate_client::simulate::{self, Caller, PaymentQuery};
use trust_gate_client::x402::{self, PaymentRequired};
use trust_gate_client::Overrides;
use trust_gate_demo::pay;
use trust_gate_migrations::{demo, DemoWorld};

fn package() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../packages/sdk")
}

/// Installs the package's locked dependencies when missing and builds it (`dist/`).
fn build() -> PathBuf {
    let dir = package();
    node::install(&dir, "@x402/express/package.json");
    let out = Command::new("node")
        .arg(dir.join("node_modules/typescript/bin/tsc"))
        .arg("-p")
        .arg(dir.join("tsconfig.json"))
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "tsc failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

/// Runs the package's Node test `file` with `fixture` named by TRUST_GATE_FIXTURE, off the
/// async runtime so that the servers keep answering; returns Node's report.
async fn node_test(dir: PathBuf, file: &'static str, fixture: Value) -> String {
    tokio::task::spawn_blocking(move || {
        let path = std::env::temp_dir().join(format!(
            "trust-gate-sdk-{}-{}.json",
            std::process::id(),
            file.replace('/', "_")
        ));
        std::fs::write(&path, serde_json::to_vec_pretty(&fixture).unwrap()).unwrap();
        let out = Command::new("node")
            .arg("--test")
            .arg("--test-concurrency=1")
            .arg(dir.join(file))
            .env("TRUST_GATE_FIXTURE", &path)
            .output()
            .expect("node runs");
        let _ = std::fs::remove_file(&path);
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "node --test {file} failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Node's runner reports its own tally; at least one test ran and none failed.
        assert!(stdout.contains("# fail 0"), "{stdout}");
        assert!(!stdout.contains("# pass 0"), "{stdout}");
        stdout
    })
    .await
    .expect("the node run finishes")
}

fn instruction_json(ix: &Instruction) -> Value {
    json!({
        "programId": ix.program_id.to_string(),
        "accounts": ix.accounts.iter().map(|m| json!({
            "pubkey": m.pubkey.to_string(), "isSigner": m.is_signer, "isWritable": m.is_writable,
        })).collect::<Vec<_>>(),
        "data": hex(&ix.data),
    })
}

/// A challenge of the demo for `payer` (its agent asset).
async fn challenge(s: &Services, payer: &solana_sdk::pubkey::Pubkey) -> PaymentRequired {
    let r = s
        .http
        .get(s.d("/protected"))
        .header(trust_gate_demo::X_DEMO_PAYER_AGENT, payer.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 402);
    x402::decode_header(
        x402::PAYMENT_REQUIRED,
        &services::header(&r, x402::PAYMENT_REQUIRED),
    )
    .unwrap()
}

/// What the Rust SDK composes for a demo challenge paid by `label`'s key: the instructions
/// and the v0 message (with the facilitator's lookup tables and a fixed blockhash).
async fn composed(
    s: &Services,
    label: &str,
    payer: &demo::DemoAgent,
    budget: settle::ComputeBudget,
) -> Value {
    let required = challenge(s, &payer.asset()).await;
    let signer = payer.signer();
    let mut prepared = pay::prepare(
        &s.env.rpc,
        &required,
        &signer.pubkey(),
        Overrides::default(),
    )
    .await
    .unwrap();
    prepared.settlement.compute_budget = budget;
    let ixs = prepared.instructions().unwrap();
    let blockhash = Hash::new_from_array([7; 32]);
    let tx =
        settle::transaction(&prepared.fee_payer, &ixs, &prepared.tables, blockhash, &[]).unwrap();
    json!({
        "label": label,
        "requirements": required.accepts[0],
        "resourceUrl": required.resource.url,
        "computeBudget": {
            "unitLimit": budget.unit_limit,
            "unitPriceMicroLamports": budget.unit_price_micro_lamports.map(|p| p.to_string()),
        },
        "instructions": ixs.iter().map(instruction_json).collect::<Vec<_>>(),
        "blockhash": blockhash.to_string(),
        "message": hex(&tx.message.serialize()),
    })
}

/// Every fact the Node tests compare with, computed by the Rust SDK and the servers.
async fn fixture(s: &Services) -> Value {
    let w: &DemoWorld = &s.env.world;
    let caip2 = s.get_json(s.f("/supported")).await["kinds"][0]["network"]
        .as_str()
        .unwrap()
        .to_string();
    let mut decisions = Vec::new();
    for p in &w.payers {
        let q = PaymentQuery {
            payer_asset: p.asset(),
            payee_asset: w.service.asset(),
            amount: demo::PRICE,
            mint: w.mint(),
            policy_id: demo::POLICY_ID,
        };
        let caller = Caller::Pubkey(w.facilitator.pubkey());
        let d = simulate::gate_payment(&s.env.rpc, &s.env.b, caller, q)
            .await
            .unwrap();
        decisions.push(json!({
            "name": p.name, "tier": p.tier, "asset": p.asset().to_string(),
            "decision": DecisionView::from(&d),
        }));
    }
    // Kinds 0, 1, 3 and the vault-funded 3: at least one Allow and one Deny to compare.
    assert!(decisions.iter().any(|d| d["decision"]["kind"] == "Allow"));
    assert!(decisions.iter().any(|d| d["decision"]["kind"] == "Deny"));
    let tier3 = w.payer(3).unwrap();
    let vault = w.vault_payer();
    let budget = settle::ComputeBudget {
        unit_limit: Some(300_000),
        unit_price_micro_lamports: Some(1_000),
    };
    let keys: serde_json::Map<String, Value> = w
        .keys()
        .into_iter()
        .map(|(label, k)| (label, json!(k.to_bytes().to_vec())))
        .collect();
    json!({
        "rpcUrl": s.env.localnet.rpc_url(),
        "facilitatorUrl": s.facilitator.url(),
        "demoUrl": s.demo.url(),
        "network": caip2,
        "networkName": "solana-localnet",
        "demoPayerHeader": trust_gate_demo::X_DEMO_PAYER_AGENT,
        "world": w.summary(),
        "payTo": w.service.owner.pubkey().to_string(),
        "keys": keys,
        "decisions": decisions,
        "composed": [
            composed(s, "payer-tier-3", tier3, settle::ComputeBudget::default()).await,
            composed(s, &format!("{}/hot-key", vault.name), vault, budget).await,
        ],
    })
}

#[tokio::test]
async fn the_typescript_sdk_decides_composes_and_pays_through_the_rust_services() {
    let dir = build();
    let s = services::start().await;
    let f = fixture(&s).await;
    node_test(dir.clone(), "test/services.test.mjs", f.clone()).await;
    node_test(dir, "test/express.test.mjs", f).await;
}
