//! POST /settle: every tampered transaction is refused with its reason and moves nothing;
//! a real payment lands as ONE transaction of exactly three instructions; a replay returns
//! the first signature without counting twice; a priority fee within the facilitator's cap is
//! accepted. Then /receipt.

use crate::services::{self, header, Services};
use anchor_lang::prelude::Pubkey;
use base64::Engine as _;
use serde_json::{json, Value};
use solana_rpc_client_api::config::RpcTransactionConfig;
use solana_sdk::instruction::Instruction;
use solana_sdk::signature::{Keypair, Signature};
use solana_sdk::signer::Signer;
use solana_sdk::transaction::VersionedTransaction;
use solana_transaction_status_client_types::{
    EncodedTransaction, UiTransactionEncoding, UiTransactionStatusMeta,
};
use std::str::FromStr;
use trust_gate_client::decode::{self, hex, VelocityLedger};
use trust_gate_client::settle;
use trust_gate_migrations::demo;
use trust_gate_pay::exact::{self as pay, Prepared};
use trust_gate_x402::{self as x402, FacilitatorRequest, GateExtension, PaymentRequired};

/// A fresh challenge from the demo for the tier-3 payer, prepared for payment.
pub async fn prepared(s: &Services) -> Prepared {
    let r = s.http.get(s.d("/protected")).send().await.unwrap();
    assert_eq!(r.status(), 402);
    let required: PaymentRequired =
        x402::decode_header(x402::PAYMENT_REQUIRED, &header(&r, "PAYMENT-REQUIRED")).unwrap();
    let signer = s.env.world.payer(3).unwrap().owner.pubkey();
    pay::prepare(&s.env.rpc, &required, &signer, Default::default())
        .await
        .unwrap()
}

pub fn payer(s: &Services) -> &Keypair {
    &s.env.world.payer(3).unwrap().owner
}

pub fn request(p: &Prepared, tx: &VersionedTransaction) -> Value {
    let req = FacilitatorRequest {
        x402_version: 2,
        payment_payload: p.payload(tx).unwrap(),
        payment_requirements: p.requirements.clone(),
    };
    serde_json::to_value(req).unwrap()
}

pub async fn signed(s: &Services, p: &Prepared, ixs: &[Instruction]) -> VersionedTransaction {
    p.transaction(&s.env.rpc, ixs, payer(s)).await.unwrap()
}

/// A landed transaction: its status metadata and the transaction itself.
pub async fn landed(
    s: &Services,
    sig: &Signature,
) -> (UiTransactionStatusMeta, VersionedTransaction) {
    let got = s
        .env
        .rpc
        .get_transaction_with_config(
            sig,
            RpcTransactionConfig {
                encoding: Some(UiTransactionEncoding::Base64),
                max_supported_transaction_version: Some(0),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let EncodedTransaction::Binary(b64, _) = &got.transaction.transaction else {
        panic!("base64")
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    (
        got.transaction
            .meta
            .expect("a landed transaction has metadata"),
        bincode::deserialize(&bytes).unwrap(),
    )
}

/// The units the payment of `p` uses: its simulation (with a generous limit and no price) on
/// the localnet, as a paying client that sizes its limit measures it.
pub async fn units_used(s: &Services, p: &Prepared) -> u64 {
    use solana_rpc_client_api::config::RpcSimulateTransactionConfig;
    let mut t = p.settlement.clone();
    t.compute_budget = settle::ComputeBudget {
        unit_limit: Some(400_000),
        unit_price_micro_lamports: None,
    };
    let ixs = settle::compose(&p.builder, &t, trust_gate_client::AtomicityEnforced::TRUE).unwrap();
    let tx = signed(s, p, &ixs).await;
    let config = RpcSimulateTransactionConfig {
        sig_verify: false,
        ..Default::default()
    };
    let sim = s
        .env
        .rpc
        .simulate_transaction_with_config(&tx, config)
        .await
        .unwrap()
        .value;
    assert!(sim.err.is_none(), "{:?} {:?}", sim.err, sim.logs);
    sim.units_consumed.unwrap()
}

/// A unit limit just above what the payment of `p` uses, as the paying clients size it from
/// a simulation: the units used × 1.1 + 3 000.
pub async fn sized_limit(s: &Services, p: &Prepared) -> u32 {
    (units_used(s, p).await * 11 / 10 + 3_000) as u32
}

/// The programs of a transaction's instructions, in order.
fn program_ids(tx: &VersionedTransaction) -> Vec<Pubkey> {
    let keys = tx.message.static_account_keys();
    tx.message
        .instructions()
        .iter()
        .map(|ix| keys[usize::from(ix.program_id_index)])
        .collect()
}

/// POSTs /settle; returns (status, body).
pub async fn settle_body(s: &Services, body: &Value) -> (u16, Value) {
    let (status, r) = s.post("/settle", body).await;
    (status, r.json().await.unwrap())
}

async fn refused(s: &Services, body: &Value, reason: &str) {
    let (status, b) = settle_body(s, body).await;
    assert_eq!(b["success"], false, "{reason}: {b}");
    assert_eq!(b["errorReason"], reason, "{b}");
    assert_eq!(b["transaction"], "");
    assert!(!b["errorMessage"].as_str().unwrap().is_empty());
    assert!(
        status == 400 || status == 402 || status == 409,
        "{reason}: {status}"
    );
}

fn resign_challenge(s: &Services, p: &Prepared, edit: impl FnOnce(&mut GateExtension)) -> Prepared {
    let mut r = p.requirements.clone();
    let mut g = GateExtension::from_requirements(&r).unwrap();
    edit(&mut g);
    if !g.service_signature.is_empty() {
        x402::sign_challenge(&s.env.world.service_key, &r, &p.resource.url, &mut g);
    }
    r.extra
        .insert("gate".into(), serde_json::to_value(&g).unwrap());
    Prepared {
        builder: p.builder,
        requirements: r,
        resource: p.resource.clone(),
        fee_payer: p.fee_payer,
        tables: p.tables.clone(),
        settlement: p.settlement.clone(),
        extensions: p.extensions.clone(),
    }
}

/// The tier-3 payer's cumulative counted amount under the demo policy.
pub async fn ledger(s: &Services) -> u64 {
    let key = s
        .env
        .b
        .pda
        .velocity(&s.env.world.payer(3).unwrap().asset(), demo::POLICY_ID);
    let acc = trust_gate_client::chain::account(&s.env.rpc, &key)
        .await
        .unwrap()
        .unwrap();
    decode::account::<VelocityLedger>("VelocityLedger", &acc.data)
        .unwrap()
        .cumulative
}

#[tokio::test]
async fn tampered_payments_are_refused_and_a_real_one_settles_once() {
    let s = services::start().await;
    let mut p = prepared(&s).await;
    // The paying client asks for a unit limit of its own; the cases below rearrange the
    // payment's three instructions, so they go without it.
    assert!(p.settlement.compute_budget.unit_limit.is_some());
    p.settlement.compute_budget = settle::ComputeBudget::default();
    let source = p.settlement.source_token;
    let balance = s.env.token_balance(&source).await;
    let counted = ledger(&s).await;

    // Amount, mint, destination, payment id: each changed in the composed settlement.
    let tamper = |edit: &dyn Fn(&mut settle::Settlement)| {
        let mut t = p.settlement.clone();
        edit(&mut t);
        settle::compose(&p.builder, &t, trust_gate_client::AtomicityEnforced::TRUE).unwrap()
    };
    let stranger = Keypair::new();
    let cases: Vec<(Vec<Instruction>, &str)> = vec![
        (tamper(&|t| t.amount += 1).to_vec(), "amount_mismatch"),
        (
            tamper(&|t| t.mint = Pubkey::new_unique()).to_vec(),
            "mint_mismatch",
        ),
        (
            tamper(&|t| {
                t.destination_token = t
                    .token_program
                    .associated_account(&stranger.pubkey(), &t.mint)
            })
            .to_vec(),
            "recipient_mismatch",
        ),
        (
            tamper(&|t| t.feedback.payment_id_hash = [9; 32]).to_vec(),
            "payment_id_mismatch",
        ),
    ];
    let honest = p.instructions().unwrap();
    let mut extra = honest.to_vec();
    extra.push(Instruction::new_with_bytes(
        Pubkey::from_str("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr").unwrap(),
        b"extra",
        vec![],
    ));
    let cases = cases.into_iter().chain([
        (extra, "unexpected_instruction"),
        (honest[1..].to_vec(), "gate_instructions_missing"),
        (
            vec![honest[0].clone(), honest[1].clone()],
            "gate_instructions_missing",
        ),
        (
            vec![honest[1].clone(), honest[0].clone(), honest[2].clone()],
            "settlement_layout_invalid",
        ),
    ]);
    for (ixs, reason) in cases {
        let tx = signed(&s, &p, &ixs).await;
        refused(&s, &request(&p, &tx), reason).await;
    }

    // A plain exact-scheme transfer (compute budget, TransferChecked, memo), as a generic
    // x402 client builds it: never settled, with a hint.
    let memo = p.requirements.extra["memo"].as_str().unwrap();
    let plain = vec![
        Instruction::new_with_bytes(
            Pubkey::from_str("ComputeBudget111111111111111111111111111111").unwrap(),
            &[2, 0x20, 0x4e, 0, 0],
            vec![],
        ),
        honest[1].clone(),
        Instruction::new_with_bytes(
            Pubkey::from_str("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr").unwrap(),
            memo.as_bytes(),
            vec![],
        ),
    ];
    let tx = signed(&s, &p, &plain).await;
    let (status, b) = settle_body(&s, &request(&p, &tx)).await;
    assert_eq!(
        (status, b["errorReason"].as_str()),
        (400, Some("gate_instructions_missing"))
    );
    assert!(
        b["hint"].as_str().unwrap().contains("settle::compose"),
        "{b}"
    );

    // The fee payer must be the facilitator.
    let blockhash = s.env.rpc.get_latest_blockhash().await.unwrap();
    let tx = settle::transaction(
        &payer(&s).pubkey(),
        &honest,
        &p.tables,
        blockhash,
        &[payer(&s)],
    )
    .unwrap();
    refused(&s, &request(&p, &tx), "fee_payer_mismatch").await;

    // Client signatures: forged, and missing.
    let mut forged = signed(&s, &p, &honest).await;
    forged.signatures[1] = stranger.sign_message(&forged.message.serialize());
    refused(&s, &request(&p, &forged), "invalid_client_signature").await;
    let mut unsigned = signed(&s, &p, &honest).await;
    unsigned.signatures[1] = Signature::default();
    refused(&s, &request(&p, &unsigned), "missing_client_signature").await;

    // The challenge: expired, unsigned, altered after signing.
    let tx = signed(&s, &p, &honest).await;
    let now = trust_gate_client::simulate::now_unix();
    let expired = resign_challenge(&s, &p, |g| g.issued_at = now - 3_600);
    refused(&s, &request(&expired, &tx), "challenge_expired").await;
    let unsigned = resign_challenge(&s, &p, |g| g.service_signature = String::new());
    refused(&s, &request(&unsigned, &tx), "challenge_unsigned").await;
    let mut altered = request(&p, &tx);
    for part in ["paymentRequirements", "paymentPayload"] {
        let target = if part == "paymentPayload" {
            &mut altered[part]["accepted"]
        } else {
            &mut altered[part]
        };
        target["amount"] = json!("1");
    }
    refused(&s, &altered, "challenge_signature_invalid").await;

    // Not JSON at all.
    let r = s
        .http
        .post(s.f("/settle"))
        .body("nope")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(
        r.json::<Value>().await.unwrap()["errorReason"],
        "invalid_payload"
    );

    assert_eq!(
        s.env.token_balance(&source).await,
        balance,
        "no refused payment moved tokens"
    );
    assert_eq!(ledger(&s).await, counted, "no refused payment counted");

    // The honest payment, verified first (x402 /verify with the transaction), then settled.
    let tx = signed(&s, &p, &honest).await;
    let body = request(&p, &tx);
    let (status, r) = s.post("/verify", &body).await;
    assert_eq!(status, 200);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["isValid"], true);
    assert_eq!(v["payer"], payer(&s).pubkey().to_string());

    let payment_id = hex(&p.settlement.feedback.payment_id_hash);
    let r = s
        .http
        .get(s.f(&format!("/receipt/{payment_id}")))
        .send()
        .await
        .unwrap();
    assert_eq!(
        r.json::<Value>().await.unwrap(),
        json!({"paymentIdHash": payment_id, "exists": false})
    );
    let (status, b) = settle_body(&s, &body).await;
    assert_eq!(status, 200, "{b}");
    assert_eq!(b["success"], true);
    assert_eq!(b["payer"], payer(&s).pubkey().to_string());
    assert_eq!(
        b["network"],
        s.facilitator.facilitator.caip2().await.unwrap()
    );
    assert_eq!(b["receipt"]["paymentIdHash"], payment_id);
    assert_eq!(b["receipt"]["replayed"], false);
    let sig = Signature::from_str(b["transaction"].as_str().unwrap()).unwrap();
    assert_eq!(s.env.token_balance(&source).await, balance - demo::PRICE);
    assert_eq!(ledger(&s).await, counted + demo::PRICE, "counted once");

    // ONE transaction of exactly [gate_payment_strict, TransferChecked, emit_feedback].
    let (meta, landed) = landed(&s, &sig).await;
    assert!(meta.err.is_none());
    let keys = landed.message.static_account_keys();
    let programs = program_ids(&landed);
    assert_eq!(
        programs,
        vec![
            s.env.b.ids.gate,
            anchor_spl::token::spl_token::ID,
            s.env.b.ids.gate
        ]
    );
    let data: Vec<&[u8]> = landed
        .message
        .instructions()
        .iter()
        .map(|ix| ix.data.as_slice())
        .collect();
    use anchor_lang::Discriminator;
    assert!(data[0].starts_with(gate::instruction::GatePaymentStrict::DISCRIMINATOR));
    assert_eq!(data[1][0], 12, "TransferChecked");
    assert!(data[2].starts_with(gate::instruction::EmitFeedback::DISCRIMINATOR));
    assert_eq!(
        keys[0],
        s.env.world.facilitator.pubkey(),
        "the facilitator paid the fee"
    );

    // A replay returns the first signature and counts nothing.
    let (status, again) = settle_body(&s, &body).await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["transaction"], sig.to_string());
    assert_eq!(again["receipt"]["replayed"], true);
    assert_eq!(
        ledger(&s).await,
        counted + demo::PRICE,
        "still counted once"
    );
    assert_eq!(s.env.token_balance(&source).await, balance - demo::PRICE);
    // Another transaction for the same payment id is a conflict.
    let mut other = p.settlement.clone();
    other.feedback.score = 50;
    let ixs = settle::compose(
        &p.builder,
        &other,
        trust_gate_client::AtomicityEnforced::TRUE,
    )
    .unwrap();
    let tx = signed(&s, &p, &ixs).await;
    let (status, b) = settle_body(&s, &request(&p, &tx)).await;
    assert_eq!(
        (status, b["errorReason"].as_str()),
        (409, Some("payment_already_settled")),
        "{b}"
    );

    // The receipt.
    let r = s.receipt(&payment_id).await;
    assert_eq!(r["exists"], true);
    assert_eq!(r["value"], demo::PRICE.to_string());
    assert_eq!(r["mint"], s.env.world.mint().to_string());
    assert_eq!(r["payee"], s.env.world.service.asset().to_string());
    assert_eq!(r["payerWallet"], payer(&s).pubkey().to_string());
    assert_eq!(r["settledAtomically"], true);
    assert_eq!(r["disputed"], false);
    assert_eq!(r["score"], 100);
    assert!(r["emittedAtSlot"].as_u64().unwrap() > 0);
    let r = s.http.get(s.f("/receipt/abc")).send().await.unwrap();
    assert_eq!(r.status(), 400);
}

#[tokio::test]
async fn a_priority_fee_within_the_cap_settles_and_above_it_is_refused() {
    let s = services::start().await;
    let cap = trust_gate_facilitator::config::DEFAULT_MAX_COMPUTE_UNIT_PRICE;
    let with_budget = |p: &Prepared, unit_limit: Option<u32>, price: Option<u64>| {
        let mut t = p.settlement.clone();
        t.compute_budget = settle::ComputeBudget {
            unit_limit,
            unit_price_micro_lamports: price,
        };
        settle::compose(&p.builder, &t, trust_gate_client::AtomicityEnforced::TRUE).unwrap()
    };

    // Above the cap the facilitator, which pays the fee, refuses.
    let p = prepared(&s).await;
    let tx = signed(&s, &p, &with_budget(&p, Some(200_000), Some(cap + 1))).await;
    refused(&s, &request(&p, &tx), "compute_unit_price_too_high").await;
    // Only a unit limit and a unit price may precede the payment.
    let heap_frame = Instruction::new_with_bytes(
        gate::settlement::COMPUTE_BUDGET_PROGRAM_ID,
        &[&[1u8][..], &(64 * 1024u32).to_le_bytes()].concat(),
        vec![],
    );
    let mut ixs = vec![heap_frame];
    ixs.extend(p.instructions().unwrap());
    let tx = signed(&s, &p, &ixs).await;
    refused(&s, &request(&p, &tx), "compute_budget_invalid").await;
    let mut three = with_budget(&p, Some(200_000), Some(1));
    three.insert(0, three[1].clone());
    let tx = signed(&s, &p, &three).await;
    refused(&s, &request(&p, &tx), "unexpected_instruction").await;

    // Within every cap it settles, in one transaction of five instructions: a limit just
    // above what the payment uses, at the highest price the priority-fee cap then allows.
    let limit = sized_limit(&s, &p).await;
    let fee_cap = trust_gate_facilitator::config::DEFAULT_MAX_PRIORITY_FEE_LAMPORTS;
    let price = (fee_cap * 1_000_000 / u64::from(limit)).min(cap);
    let tx = signed(&s, &p, &with_budget(&p, Some(limit), Some(price))).await;
    let (status, b) = settle_body(&s, &request(&p, &tx)).await;
    assert_eq!(status, 200, "{b}");
    let sig = Signature::from_str(b["transaction"].as_str().unwrap()).unwrap();
    let (meta, landed) = landed(&s, &sig).await;
    assert!(meta.err.is_none());
    let budget = gate::settlement::COMPUTE_BUDGET_PROGRAM_ID;
    assert_eq!(
        program_ids(&landed),
        vec![
            budget,
            budget,
            s.env.b.ids.gate,
            anchor_spl::token::spl_token::ID,
            s.env.b.ids.gate
        ]
    );
    // The priority fee was paid: the limit at the price, on top of two signatures (the fee
    // payer also paid the feedback log's rent).
    let log_size = gate::state::FeedbackLog::space(false);
    let rent = s
        .env
        .rpc
        .get_minimum_balance_for_rent_exemption(log_size)
        .await
        .unwrap();
    let paid = meta.pre_balances[0] - meta.post_balances[0] - rent;
    let priority = trust_gate_facilitator::budget::priority_fee_lamports(limit, price);
    assert!(priority <= fee_cap && priority > fee_cap / 2, "{priority}");
    assert_eq!(paid, 2 * 5_000 + priority);
    assert_eq!(meta.fee, paid, "getTransaction reports the fee charged");
    let r = s
        .receipt(&hex(&p.settlement.feedback.payment_id_hash))
        .await;
    assert_eq!(r["settledAtomically"], true);
}

/// `trust-gate pay --priority-fee`: the paying client puts the unit limit and price before
/// the payment, and the settlement lands with them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_paying_client_carries_a_priority_fee() {
    let s = services::start().await;
    // With a price, the facilitator holds the limit to what the payment uses (plus its
    // margin): the limit of a simulation-sized client.
    let limit = sized_limit(&s, &prepared(&s).await).await;
    let payer = s.env.world.payer(3).unwrap();
    let opts = pay::PayOptions {
        request: trust_gate_pay::exact::Request::get(s.d("/protected")),
        max_amount: None,
        payer_agent: Some(payer.asset()),
        signer: payer.signer(),
        overrides: Default::default(),
        compute_budget: settle::ComputeBudget {
            unit_limit: Some(limit),
            unit_price_micro_lamports: Some(1_000),
        },
    };
    let outcome = pay::pay(&s.http, &s.env.rpc, &opts).await.unwrap();
    let pay::PayOutcome::Paid { receipt, .. } = outcome else {
        panic!("not paid: {outcome:?}");
    };
    let (meta, landed) = landed(&s, &Signature::from_str(&receipt).unwrap()).await;
    assert!(meta.err.is_none());
    let budget = gate::settlement::COMPUTE_BUDGET_PROGRAM_ID;
    assert_eq!(
        program_ids(&landed)[..3],
        [budget, budget, s.env.b.ids.gate]
    );
    let data: Vec<Vec<u8>> = landed
        .message
        .instructions()
        .iter()
        .take(2)
        .map(|ix| ix.data.clone())
        .collect();
    assert_eq!(
        data,
        [
            [&[2u8][..], &limit.to_le_bytes()].concat(),
            [&[3u8][..], &1_000u64.to_le_bytes()].concat()
        ]
    );
}

/// The facilitator's verifier knows the vault layout: the vault-funded payer's settlement
/// with another vault in the gate is refused before co-signing, a wallet-style one (no vault)
/// is refused by the program by name, and the real one settles from the vault.
#[tokio::test]
async fn a_vault_funded_settlement_is_verified_against_the_vault_layout() {
    let s = services::start().await;
    let w = &s.env.world;
    let payer = w.vault_payer();
    let hot = payer.hot_key.as_ref().unwrap();
    let r = s
        .http
        .get(s.d("/protected"))
        .header("X-Demo-Payer-Agent", payer.asset().to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 402);
    let required: PaymentRequired =
        x402::decode_header(x402::PAYMENT_REQUIRED, &header(&r, "PAYMENT-REQUIRED")).unwrap();
    let p = pay::prepare(&s.env.rpc, &required, &hot.pubkey(), Default::default())
        .await
        .unwrap();
    assert_eq!(p.settlement.funding, settle::Funding::Vault);
    let vault = s.env.b.pda.vault(&payer.asset(), &w.mint());
    let balance = || async {
        trust_gate_client::chain::vault(&s.env.rpc, &s.env.b.ids, &payer.asset(), &w.mint())
            .await
            .unwrap()
            .unwrap()
            .amount
    };
    let before = balance().await;

    // Another agent's vault address where the payer's belongs.
    let mut ixs = p.instructions().unwrap();
    let other = s.env.b.pda.vault(&w.payer(3).unwrap().asset(), &w.mint());
    // After the SDK's compute-unit limit.
    let g = ixs
        .iter()
        .position(|ix| ix.program_id == s.env.b.ids.gate)
        .expect("the strict gate");
    let slot = ixs[g]
        .accounts
        .iter()
        .position(|m| m.pubkey == vault)
        .expect("the gate carries the vault");
    ixs[g].accounts[slot].pubkey = other;
    let tx = p.transaction(&s.env.rpc, &ixs, hot).await.unwrap();
    refused(&s, &request(&p, &tx), "gate_accounts_mismatch").await;

    // Without the vault: well formed, but the policy is vault-funded.
    let mut wallet = p.settlement.clone();
    wallet.funding = settle::Funding::Wallet;
    let ixs = settle::compose(
        &p.builder,
        &wallet,
        trust_gate_client::AtomicityEnforced::TRUE,
    )
    .unwrap();
    let tx = p.transaction(&s.env.rpc, &ixs, hot).await.unwrap();
    let (status, b) = settle_body(&s, &request(&p, &tx)).await;
    assert_eq!(b["success"], false, "{b}");
    assert!(status >= 400, "{status} {b}");
    assert!(
        b["errorMessage"]
            .as_str()
            .unwrap()
            .contains("VaultAccountsMissing"),
        "{b}"
    );
    assert_eq!(balance().await, before);

    // The real one.
    let tx = p
        .transaction(&s.env.rpc, &p.instructions().unwrap(), hot)
        .await
        .unwrap();
    let (status, b) = settle_body(&s, &request(&p, &tx)).await;
    assert_eq!(status, 200, "{b}");
    assert_eq!(balance().await, before - demo::PRICE);
}

#[tokio::test]
async fn a_paused_reputation_engine_is_named_and_costs_nothing() {
    let s = services::start().await;
    let p = prepared(&s).await;
    let ixs = settle::compose(&p.builder, &p.settlement, settle::AtomicityEnforced::TRUE).unwrap();
    let body = request(&p, &signed(&s, &p, &ixs).await);
    let authority = s.env.localnet.engine_authority.insecure_clone();
    let pause =
        |on| trust_gate_localnet::externals::admin::set_engine_paused(&authority.pubkey(), on);
    let fee_payer = s.env.world.facilitator.pubkey();
    let (lamports, counted, balance) = (
        s.env.rpc.get_balance(&fee_payer).await.unwrap(),
        ledger(&s).await,
        s.env.token_balance(&p.settlement.source_token).await,
    );

    let (s, body) = (&s, &body);
    let post = |route: &'static str| async move {
        let r = s.http.post(s.f(route)).json(body).send().await.unwrap();
        (r.status().as_u16(), r.json::<Value>().await.unwrap())
    };
    let settle = || post("/settle");

    // The demo service is rated by the engine: its feedback, so the settlement, cannot land.
    // /verify says so before anything is sent; /settle refuses in preflight.
    s.env.send(&[pause(true)], &[&authority]).await.unwrap();
    let (status, verified) = post("/verify").await;
    assert_eq!(status, 503, "{verified}");
    assert_eq!(verified["isValid"], false, "{verified}");
    assert_eq!(
        verified["invalidReason"], "reputation_engine_paused",
        "{verified}"
    );
    let (status, refused) = settle().await;
    assert_eq!(status, 503, "{refused}");
    assert_eq!(
        refused["errorReason"], "reputation_engine_paused",
        "{refused}"
    );
    let message = refused["errorMessage"].as_str().unwrap_or_default();
    assert!(
        message.contains("is paused") && message.contains("no fee"),
        "{refused}"
    );
    assert_eq!(s.env.rpc.get_balance(&fee_payer).await.unwrap(), lamports);
    assert_eq!(ledger(s).await, counted);
    assert_eq!(
        s.env.token_balance(&p.settlement.source_token).await,
        balance
    );

    // Resumed, the same payment settles.
    s.env.send(&[pause(false)], &[&authority]).await.unwrap();
    let (status, verified) = post("/verify").await;
    assert_eq!(
        (status, &verified["isValid"]),
        (200, &Value::Bool(true)),
        "{verified}"
    );
    let (status, settled) = settle().await;
    assert_eq!(status, 200, "{settled}");
    assert_eq!(ledger(s).await, counted + demo::PRICE);
}
