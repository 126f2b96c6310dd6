//! The JSON-RPC surface with raw HTTP: methods, shapes, errors, the wall clock, and a client
//! we did not write (@solana/web3.js).

use crate::fixture::{seeded, Env};
use anchor_lang::prelude::Pubkey;
use base64::{engine::general_purpose::STANDARD, Engine as _};
use serde_json::{json, Value};
use solana_sdk::clock::Clock;
use solana_sdk::signature::{Keypair, Signer};
use solana_sdk::transaction::Transaction;
use trust_gate_client::Program;

async fn call(env: &Env, method: &str, params: Value) -> Value {
    reqwest::Client::new()
        .post(env.localnet.rpc_url())
        .json(&json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn result(env: &Env, method: &str, params: Value) -> Value {
    let r = call(env, method, params).await;
    assert_eq!(r["id"], 7);
    assert!(r.get("error").is_none(), "{method}: {r}");
    r["result"].clone()
}

async fn clock(env: &Env) -> Clock {
    let r = result(
        env,
        "getAccountInfo",
        json!([solana_sdk::sysvar::clock::ID.to_string(), {"encoding": "base64"}]),
    )
    .await;
    let data = STANDARD
        .decode(r["value"]["data"][0].as_str().unwrap())
        .unwrap();
    bincode::deserialize(&data).unwrap()
}

fn transfer(from: &Keypair, to: &Pubkey, lamports: u64, blockhash: &str) -> Transaction {
    Transaction::new_signed_with_payer(
        &[anchor_lang::solana_program::system_instruction::transfer(
            &from.pubkey(),
            to,
            lamports,
        )],
        Some(&from.pubkey()),
        &[from],
        blockhash.parse().unwrap(),
    )
}

fn b64(tx: &Transaction) -> String {
    STANDARD.encode(bincode::serialize(tx).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_methods_answer_with_cluster_shapes() {
    let env = seeded().await;
    assert_eq!(result(&env, "getHealth", json!([])).await, "ok");
    assert!(result(&env, "getVersion", json!([])).await["solana-core"].is_string());
    let genesis = result(&env, "getGenesisHash", json!([])).await;
    assert_eq!(
        genesis.as_str().unwrap(),
        env.localnet.chain.genesis_hash().to_string()
    );
    let epoch = result(&env, "getEpochInfo", json!([])).await;
    for field in [
        "absoluteSlot",
        "blockHeight",
        "epoch",
        "slotIndex",
        "slotsInEpoch",
        "transactionCount",
    ] {
        assert!(epoch[field].is_u64(), "{field}: {epoch}");
    }
    assert!(result(&env, "getBlockHeight", json!([])).await.is_u64());
    let rent = result(&env, "getMinimumBalanceForRentExemption", json!([165])).await;
    assert_eq!(rent, 2_039_280);

    let latest = result(
        &env,
        "getLatestBlockhash",
        json!([{"commitment": "confirmed"}]),
    )
    .await;
    let hash = latest["value"]["blockhash"].as_str().unwrap().to_string();
    assert!(latest["value"]["lastValidBlockHeight"].is_u64());
    assert!(latest["context"]["slot"].is_u64());
    assert_eq!(
        result(&env, "isBlockhashValid", json!([hash])).await["value"],
        true
    );
    let never = solana_sdk::hash::Hash::new_unique().to_string();
    assert_eq!(
        result(&env, "isBlockhashValid", json!([never])).await["value"],
        false
    );

    // Accounts, base64 and base58, and a missing one.
    let payer = env.world.payer(3).unwrap().owner.pubkey().to_string();
    let one = result(
        &env,
        "getAccountInfo",
        json!([payer, {"encoding": "base64"}]),
    )
    .await;
    assert_eq!(one["value"]["owner"], "11111111111111111111111111111111");
    assert!(one["value"]["lamports"].as_u64().unwrap() > 0);
    let b58 = result(&env, "getAccountInfo", json!([payer])).await;
    assert_eq!(b58["value"]["data"], "");
    let missing = Pubkey::new_unique().to_string();
    assert!(result(&env, "getAccountInfo", json!([missing])).await["value"].is_null());
    let many = result(
        &env,
        "getMultipleAccounts",
        json!([[payer, missing], {"encoding": "base64"}]),
    )
    .await;
    assert!(many["value"][0].is_object() && many["value"][1].is_null());
    assert!(
        result(&env, "getBalance", json!([payer])).await["value"]
            .as_u64()
            .unwrap()
            > 0
    );

    // Fees: 5000 lamports per signature.
    let from = Keypair::new();
    let tx = transfer(&from, &Pubkey::new_unique(), 1, &hash);
    let message = STANDARD.encode(tx.message.serialize());
    assert_eq!(
        result(&env, "getFeeForMessage", json!([message])).await["value"],
        5_000
    );

    // Errors: unknown method, bad parameters, a batch.
    let unknown = call(&env, "getBlockProduction", json!([])).await;
    assert_eq!(unknown["error"]["code"], -32601);
    let bad = call(&env, "getBalance", json!(["not-a-key"])).await;
    assert_eq!(bad["error"]["code"], -32602);
    let batch: Value = reqwest::Client::new()
        .post(env.localnet.rpc_url())
        .json(&json!([{"jsonrpc":"2.0","id":1,"method":"getSlot"},{"jsonrpc":"2.0","id":2,"method":"getHealth"}]))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        (batch[0]["id"].clone(), batch[1]["result"].clone()),
        (json!(1), json!("ok"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_simulate_statuses_and_transactions() {
    let env = seeded().await;
    let from = env.funded().await;
    let to = Pubkey::new_unique();
    let hash = result(&env, "getLatestBlockhash", json!([])).await["value"]["blockhash"]
        .as_str()
        .unwrap()
        .to_string();

    // simulateTransaction: sigVerify, replaceRecentBlockhash, logs, unitsConsumed.
    let tx = transfer(&from, &to, 1_000_000, &hash);
    let sim = result(
        &env,
        "simulateTransaction",
        json!([b64(&tx), {"encoding": "base64", "sigVerify": true}]),
    )
    .await;
    assert!(sim["value"]["err"].is_null(), "{sim}");
    assert!(sim["value"]["logs"].as_array().unwrap().iter().any(|l| l
        .as_str()
        .unwrap()
        .contains("11111111111111111111111111111111 success")));
    assert!(sim["value"]["unitsConsumed"].is_u64());
    let mut forged = tx.clone();
    forged.signatures[0] = solana_sdk::signature::Signature::default();
    let refused = call(
        &env,
        "simulateTransaction",
        json!([b64(&forged), {"encoding": "base64", "sigVerify": true}]),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32003);
    let replaced = result(
        &env,
        "simulateTransaction",
        json!([b64(&forged), {"encoding": "base64", "replaceRecentBlockhash": true}]),
    )
    .await;
    assert!(replaced["value"]["replacementBlockhash"]["blockhash"].is_string());
    // The accounts option: the listed accounts as the simulation saw them (a missing one is
    // null); more than 100 are refused.
    let watched = result(
        &env,
        "simulateTransaction",
        json!([b64(&tx), {"encoding": "base64", "sigVerify": true,
            "accounts": {"encoding": "base64", "addresses": [from.pubkey().to_string(), to.to_string()]}}]),
    )
    .await;
    let accounts = watched["value"]["accounts"].as_array().unwrap();
    let balance = result(&env, "getBalance", json!([from.pubkey().to_string()])).await["value"]
        .as_u64()
        .unwrap();
    assert_eq!(accounts[0]["lamports"].as_u64(), Some(balance), "{watched}");
    assert_eq!(accounts[0]["owner"], "11111111111111111111111111111111");
    assert_eq!(accounts[0]["data"][1], "base64");
    assert!(accounts[1].is_null(), "{watched}");
    assert!(
        sim["value"]["accounts"].is_null(),
        "not asked for, not given"
    );
    let too_many: Vec<String> = (0..101).map(|_| Pubkey::new_unique().to_string()).collect();
    let refused = call(
        &env,
        "simulateTransaction",
        json!([b64(&tx), {"encoding": "base64", "accounts": {"addresses": too_many}}]),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");

    // sendTransaction (base58 by default), then its status and the transaction itself.
    let wire = bs58::encode(bincode::serialize(&tx).unwrap()).into_string();
    let sig = result(&env, "sendTransaction", json!([wire])).await;
    let statuses = result(
        &env,
        "getSignatureStatuses",
        json!([[sig, solana_sdk::signature::Signature::default().to_string()]]),
    )
    .await;
    assert_eq!(statuses["value"][0]["confirmationStatus"], "finalized");
    assert!(statuses["value"][0]["err"].is_null());
    assert!(statuses["value"][1].is_null());
    for encoding in ["json", "base64"] {
        let got = result(&env, "getTransaction", json!([sig, {"encoding": encoding}])).await;
        assert!(got["slot"].is_u64() && got["blockTime"].is_i64(), "{got}");
        assert_eq!(got["meta"]["fee"], 5_000);
        let pre = got["meta"]["preBalances"][0].as_u64().unwrap();
        let post = got["meta"]["postBalances"][0].as_u64().unwrap();
        assert_eq!(pre - post, 1_000_000 + 5_000);
        if encoding == "json" {
            assert_eq!(got["transaction"]["signatures"][0], sig);
            assert_eq!(
                got["transaction"]["message"]["accountKeys"][1],
                to.to_string()
            );
        } else {
            assert_eq!(got["transaction"][1], "base64");
        }
    }
    assert!(result(
        &env,
        "getTransaction",
        json!([solana_sdk::signature::Signature::default().to_string()])
    )
    .await
    .is_null());

    // A failing transaction: preflight refuses it with the simulation's logs; sent anyway,
    // it lands with its error and pays its fee.
    let broke = Keypair::new();
    env.rpc
        .request_airdrop(&broke.pubkey(), 1_000_000)
        .await
        .unwrap();
    let poor = transfer(&broke, &to, 10_000_000, &hash);
    let pre = call(
        &env,
        "sendTransaction",
        json!([b64(&poor), {"encoding": "base64"}]),
    )
    .await;
    assert_eq!(pre["error"]["code"], -32002, "{pre}");
    assert!(pre["error"]["data"]["logs"].is_array(), "{pre}");
    let sig = result(
        &env,
        "sendTransaction",
        json!([b64(&poor), {"encoding": "base64", "skipPreflight": true}]),
    )
    .await;
    let status = result(&env, "getSignatureStatuses", json!([[sig]])).await;
    assert!(status["value"][0]["err"].is_object(), "{status}");

    // A v0 transaction needs maxSupportedTransactionVersion, as on a cluster.
    let pay = crate::fixture::payment_id();
    let v0 = env.settle(3, 1_000, pay).await.1.to_string();
    let refused = call(&env, "getTransaction", json!([v0, {"encoding": "json"}])).await;
    assert_eq!(refused["error"]["code"], -32015);
    let got = result(
        &env,
        "getTransaction",
        json!([v0, {"encoding": "json", "maxSupportedTransactionVersion": 0}]),
    )
    .await;
    assert_eq!(got["version"], 0);
    assert_eq!(
        got["transaction"]["message"]["instructions"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert!(!got["meta"]["loadedAddresses"]["readonly"]
        .as_array()
        .unwrap()
        .is_empty());
    let logs = got["meta"]["logMessages"].as_array().unwrap();
    assert!(
        logs.iter()
            .any(|l| l.as_str().unwrap().starts_with("Program data: ")),
        "{logs:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_program_accounts_filters_by_owner_size_and_memcmp() {
    let env = seeded().await;
    use anchor_lang::Discriminator;
    let pv = Program::PolicyVault;
    let id = env.b.ids.get(pv).to_string();
    let disc = bs58::encode(policy_vault::state::PolicyAccount::DISCRIMINATOR).into_string();
    let policies = result(
        &env,
        "getProgramAccounts",
        json!([id, {"encoding": "base64", "filters": [{"memcmp": {"offset": 0, "bytes": disc}}]}]),
    )
    .await;
    let policies = policies.as_array().unwrap();
    // Policy 1 of every demo payer, the metered policy of the wallet-funded ones.
    let mut expected: Vec<String> = env
        .world
        .payers
        .iter()
        .map(|p| env.b.pda.policy(&p.asset(), 1).to_string())
        .collect();
    expected.extend(
        env.world
            .payers
            .iter()
            .filter(|p| p.funding == trust_gate_client::settle::Funding::Wallet)
            .map(|p| {
                env.b
                    .pda
                    .policy(&p.asset(), trust_gate_migrations::demo::METERED_POLICY_ID)
                    .to_string()
            }),
    );
    // And the holdback payer's policy with a holdback schedule.
    expected.push(
        env.b
            .pda
            .policy(
                &env.world.holdback_payer().asset(),
                trust_gate_migrations::demo::HOLDBACK_POLICY_ID,
            )
            .to_string(),
    );
    assert_eq!(policies.len(), expected.len(), "the demo payers' policies");
    let mut got: Vec<String> = policies
        .iter()
        .map(|p| p["pubkey"].as_str().unwrap().to_string())
        .collect();
    expected.sort();
    got.sort();
    assert_eq!(got, expected);

    // memcmp on the asset (offset 8) narrows to one payer's accounts.
    let asset = env.world.payer(1).unwrap().asset();
    let one = result(
        &env,
        "getProgramAccounts",
        json!([id, {"encoding": "base64", "withContext": true, "filters": [
            {"memcmp": {"offset": 0, "bytes": disc}},
            {"memcmp": {"offset": 8, "bytes": asset.to_string()}}
        ]}]),
    )
    .await;
    assert!(one["context"]["slot"].is_u64());
    let mut theirs: Vec<&str> = one["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["pubkey"].as_str().unwrap())
        .collect();
    theirs.sort();
    let mut want = [
        env.b.pda.policy(&asset, 1).to_string(),
        env.b
            .pda
            .policy(&asset, trust_gate_migrations::demo::METERED_POLICY_ID)
            .to_string(),
    ];
    want.sort();
    assert_eq!(theirs, want.iter().map(String::as_str).collect::<Vec<_>>());

    // dataSize: kill switches are the only policy_vault accounts of their size.
    let ks = env.b.pda.killswitch(&asset);
    let size = env.rpc.get_account(&ks).await.unwrap().data.len();
    let sized = result(
        &env,
        "getProgramAccounts",
        json!([id, {"encoding": "base64", "filters": [{"dataSize": size}]}]),
    )
    .await;
    assert_eq!(sized.as_array().unwrap().len(), env.world.payers.len());
    let none = result(
        &env,
        "getProgramAccounts",
        json!([Pubkey::new_unique().to_string()]),
    )
    .await;
    assert_eq!(none, json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clock_follows_wall_time_and_tests_can_warp_it() {
    let env = seeded().await;
    let now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64
    };
    let c1 = clock(&env).await;
    assert!(
        (c1.unix_timestamp - now()).abs() <= 2,
        "clock {} vs wall {}",
        c1.unix_timestamp,
        now()
    );
    tokio::time::sleep(std::time::Duration::from_millis(1_300)).await;
    let c2 = clock(&env).await;
    assert!(
        c2.slot >= c1.slot + 2,
        "slots advance about every 400 ms: {} -> {}",
        c1.slot,
        c2.slot
    );
    let slot = result(&env, "getSlot", json!([])).await.as_u64().unwrap();
    assert!(slot >= c2.slot);

    env.localnet.warp(7_200).await.unwrap();
    let c3 = clock(&env).await;
    assert!(
        c3.unix_timestamp >= now() + 7_190,
        "warped clock {}",
        c3.unix_timestamp
    );
    assert!(c3.slot >= c2.slot + 18_000);
    // Transactions still land after the warp (fresh blockhashes).
    env.funded().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_we_did_not_write_reads_simulates_and_sends() {
    let env = seeded().await;
    let dir = trust_gate_test_setup::npm_package("tests/web3");
    let payer = env.funded().await;
    let out = std::process::Command::new("node")
        .arg(dir.join("check.mjs"))
        .env("RPC_URL", env.localnet.rpc_url())
        .env("PAYER_SECRET", bs58::encode(payer.to_bytes()).into_string())
        .env(
            "READ_ACCOUNT",
            env.b
                .pda
                .policy(&env.world.payer(3).unwrap().asset(), 1)
                .to_string(),
        )
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "web3.js check failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(
        report["account"]["owner"],
        env.b.ids.policy_vault.to_string()
    );
    assert!(report["blockhash"].as_str().unwrap().len() > 30);
    assert!(report["simulation"]["err"].is_null(), "{report}");
    let sig = report["signature"].as_str().unwrap();
    let status = result(&env, "getSignatureStatuses", json!([[sig]])).await;
    assert!(status["value"][0]["err"].is_null(), "{status}");
    let to: Pubkey = report["recipient"].as_str().unwrap().parse().unwrap();
    assert_eq!(env.rpc.get_balance(&to).await.unwrap(), 1_234_567);
}

/// getSignaturesForAddress as a cluster serves it, through solana-rpc-client: newest first,
/// paged by `before`, `until` and `limit`, failed transactions included with their error,
/// addresses named through a lookup table included; and a closed payment's receipt rebuilt
/// from it (`receipts::from_history`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signatures_for_an_address_page_as_on_a_cluster_and_rebuild_a_closed_receipt() {
    use solana_rpc_client::rpc_client::GetConfirmedSignaturesForAddress2Config as Config;
    use trust_gate_client::{receipts, reclaim};
    let env = seeded().await;
    let target = Keypair::new().pubkey();
    let payer = env.funded().await;
    let mut sent = Vec::new();
    for lamports in [1_000_000, 2_000_000, 3_000_000] {
        let ix = anchor_lang::solana_program::system_instruction::transfer(
            &payer.pubkey(),
            &target,
            lamports,
        );
        let blockhash = env.rpc.get_latest_blockhash().await.unwrap();
        let tx =
            Transaction::new_signed_with_payer(&[ix], Some(&payer.pubkey()), &[&payer], blockhash);
        sent.push(env.rpc.send_and_confirm_transaction(&tx).await.unwrap());
    }
    let page = |before, until, limit| Config {
        before,
        until,
        limit,
        commitment: None,
    };
    let sigs = |v: Vec<
        solana_rpc_client_api::response::RpcConfirmedTransactionStatusWithSignature,
    >| { v.into_iter().map(|s| s.signature).collect::<Vec<_>>() };
    let names: Vec<String> = sent.iter().rev().map(|s| s.to_string()).collect();
    let all = env
        .rpc
        .get_signatures_for_address_with_config(&target, page(None, None, None))
        .await
        .unwrap();
    assert!(all
        .iter()
        .all(|s| s.err.is_none() && s.block_time.is_some()));
    assert_eq!(sigs(all), names, "newest first");
    let first = env
        .rpc
        .get_signatures_for_address_with_config(&target, page(None, None, Some(1)))
        .await
        .unwrap();
    assert_eq!(sigs(first), names[..1]);
    let older = env
        .rpc
        .get_signatures_for_address_with_config(&target, page(Some(sent[2]), None, None))
        .await
        .unwrap();
    assert_eq!(sigs(older), names[1..]);
    let newer = env
        .rpc
        .get_signatures_for_address_with_config(&target, page(None, Some(sent[0]), None))
        .await
        .unwrap();
    assert_eq!(sigs(newer), names[..2]);
    let none = env
        .rpc
        .get_signatures_for_address(&Keypair::new().pubkey())
        .await
        .unwrap();
    assert!(none.is_empty());
    let too_many = call(
        &env,
        "getSignaturesForAddress",
        json!([target.to_string(), {"limit": 1001}]),
    )
    .await;
    assert_eq!(too_many["error"]["code"], -32602, "{too_many}");

    // A settlement (v0, its accounts partly through the lookup table): its log's address
    // names it; once the log is closed the receipt comes back from that history.
    let pay = crate::fixture::payment_id();
    let (s, signature) = env.settle(3, 1_000, pay).await;
    let facilitator = env.world.facilitator.pubkey();
    let live = receipts::live(&env.rpc, &env.b.pda, &facilitator, &pay)
        .await
        .unwrap();
    let open = live.receipt.unwrap();
    // The mint is named through the lookup table only.
    let via_table = env.rpc.get_signatures_for_address(&s.mint).await.unwrap();
    assert!(via_table
        .iter()
        .any(|x| x.signature == signature.to_string()));

    env.localnet
        .warp(trust_gate_client::decode::DISPUTE_WINDOW_SECS as u64 + 600)
        .await
        .unwrap();
    let now = trust_gate_client::chain::unix_time(&env.rpc).await.unwrap();
    let scan = reclaim::scan(&env.rpc, &env.b, &facilitator, now)
        .await
        .unwrap();
    let ours: Vec<_> = scan
        .closable
        .into_iter()
        .filter(|c| c.receipt.payment_id_hash == pay)
        .collect();
    let closed_by = reclaim::close_run(&env.rpc, &env.b, &env.world.facilitator, &ours)
        .await
        .unwrap();
    assert!(receipts::live(&env.rpc, &env.b.pda, &facilitator, &pay)
        .await
        .unwrap()
        .receipt
        .is_none());
    let h = receipts::from_history(&env.rpc, &env.b.pda, &facilitator, &pay)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(h.closed_by, Some(closed_by));
    assert!(!h.disputed);
    assert_eq!(h.receipt.signature, Some(signature));
    assert_eq!(h.receipt.payer_asset, Some(s.payer_asset));
    let mut expected = open;
    expected.signature = Some(signature);
    expected.payer_asset = Some(s.payer_asset);
    assert_eq!(
        h.receipt, expected,
        "the history gives back what the log held"
    );
    // Never settled: nothing in the history.
    assert_eq!(
        receipts::from_history(&env.rpc, &env.b.pda, &facilitator, &[3; 32])
            .await
            .unwrap(),
        None
    );
}
