//! Interop: the official `@x402/svm` 2.27 `upto` client (`UptoSvmScheme` registered on an
//! `@x402/fetch` `x402Client`, paying with `wrapFetchWithPayment`) pays the demo's ungated
//! metered route (`GET /metered?units=N`, its stock `upto` offer) through the trust-gate
//! facilitator on the embedded localnet, in `packages/sdk/test/stock-upto.test.mjs`.
//!
//! The stock client pays only on mainnet, devnet and testnet CAIP-2 ids, and the localnet's id
//! (from its genesis hash) is none of them: the Node test shows the refusal, then pays through
//! a test-only HTTP shim that shows the demo's 402 under the devnet id (the client builds with
//! `rpcUrl` = this localnet's RPC) and maps `accepted.network` back in the payment it forwards;
//! nothing else is changed. Back here: the client's open landed as it signed it (its message
//! bytes and its signature, with the facilitator's as fee payer), the channel it opened is
//! distributed at the charge, and the payee gained exactly the charge, the payer lost exactly it.

use crate::node;
use crate::services::{self, Services};
use base64::Engine as _;
use serde_json::{json, Value};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signer::Signer;
use solana_sdk::transaction::VersionedTransaction;
use trust_gate_client::chain;
use trust_gate_client::channels::{self, Channel, Split, Status};
use trust_gate_client::settle::TokenProgram;
use trust_gate_x402::upto;
use trust_gate_x402::{self as x402, PaymentRequired};

/// Units the paid request uses, the demo's unit price and its ceiling (20 units).
const UNITS: u64 = 6;
const UNIT_PRICE: u64 = 100_000;
const CEILING: u64 = 20 * UNIT_PRICE;

async fn balance(s: &Services, owner: &Pubkey) -> u64 {
    let ata = TokenProgram::Token2022.associated_account(owner, &s.env.world.metered_mint());
    s.env.token_balance(&ata).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stock_x402_upto_client_pays_the_metered_route_through_the_facilitator() {
    let dir = node::build_sdk();
    let s = services::start().await;
    let w = &s.env.world;
    let payer = &w.payer(3).unwrap().owner;
    let pay_to = w.service.owner.pubkey();
    let network = s.facilitator.facilitator.caip2().await.unwrap();
    let charge = UNITS * UNIT_PRICE;

    // The demo's stock offer, as the client will see it (but for the network id).
    let r = s.http.get(s.d("/metered")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 402);
    let pr: PaymentRequired = x402::decode_header(
        x402::PAYMENT_REQUIRED,
        &services::header(&r, x402::PAYMENT_REQUIRED),
    )
    .unwrap();
    let stock = pr
        .accepts
        .iter()
        .find(|a| a.scheme == upto::SCHEME_UPTO)
        .unwrap();
    assert_eq!(
        (stock.network.as_str(), stock.amount.as_str()),
        (network.as_str(), CEILING.to_string().as_str())
    );
    assert_eq!(stock.pay_to, pay_to.to_string());

    let report =
        std::env::temp_dir().join(format!("trust-gate-stock-upto-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&report);
    let fixture = json!({
        "rpcUrl": s.env.localnet.rpc_url(),
        "demoUrl": s.demo.url(),
        "network": network,
        "payerSecretKey": payer.to_bytes().to_vec(),
        "meteredMint": w.metered_mint().to_string(),
        "units": UNITS,
        "charged": charge.to_string(),
        "ceiling": CEILING.to_string(),
        "report": report.to_string_lossy(),
    });
    let (to_before, payer_before) = (
        balance(&s, &pay_to).await,
        balance(&s, &payer.pubkey()).await,
    );

    let out = tokio::task::spawn_blocking(move || {
        node::node_test(&dir, "test/stock-upto.test.mjs", &fixture)
    })
    .await
    .expect("the node run finishes");
    eprintln!("{out}");

    // On chain: exactly the charge moved, from the payer to the payee.
    assert_eq!(balance(&s, &pay_to).await - to_before, charge);
    assert_eq!(payer_before - balance(&s, &payer.pubkey()).await, charge);

    // What the Node test paid with, as the stock client made it.
    let reported: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let _ = std::fs::remove_file(&report);
    assert_eq!(reported["settlement"]["amount"], charge.to_string());

    // The client's open: signed by the payer alone (the fee payer's slot empty), and landed as
    // those very bytes with the facilitator's signature added.
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(reported["openTransaction"].as_str().unwrap())
        .unwrap();
    let open: VersionedTransaction = bincode::deserialize(&bytes).unwrap();
    let keys = open.message.static_account_keys();
    assert_eq!(keys[0], w.facilitator.pubkey(), "the fee payer");
    assert_eq!(open.verify_with_results(), [false, true]);
    assert_eq!(keys[1], payer.pubkey());
    let message = open.message.serialize();
    let id = w.facilitator.sign_message(&message);
    let (meta, landed) = crate::settle::landed(&s, &id).await;
    assert!(meta.err.is_none(), "{:?}", meta.err);
    assert_eq!(landed.message.serialize(), message);
    assert_eq!(landed.signatures, [id, open.signatures[1]]);

    // The channel it opened: the ceiling escrowed, the charge settled and distributed to payTo.
    let channel: Pubkey = reported["channel"].as_str().unwrap().parse().unwrap();
    assert!(keys.contains(&channel));
    let acc = chain::account(&s.env.rpc, &channel).await.unwrap().unwrap();
    let c = Channel::decode(&acc.data).unwrap();
    assert_eq!(
        (c.status, c.deposit, c.settled),
        (Status::Distributed, CEILING, charge),
        "{c:?}"
    );
    assert_eq!(
        (c.payer, c.payee, c.mint),
        (payer.pubkey(), w.facilitator.pubkey(), w.metered_mint())
    );
    assert_eq!(c.authorized_signer, w.service_key.pubkey());
    let splits = [Split {
        recipient: pay_to,
        bps: channels::ALL_BPS,
    }];
    assert_eq!(c.distribution_hash, channels::distribution_hash(&splits));
}
