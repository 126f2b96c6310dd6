//! Every tool, resource and prompt through rmcp's client over streamable HTTP, with a signer.

use crate::harness::{self, err, http_client, ok, random_hex32};
use rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams, ResourceContents};
use serde_json::{json, Value};
use solana_sdk::signer::Signer;
use std::collections::BTreeSet;

pub const TOOLS: [&str; 34] = [
    "gate_get_policy",
    "gate_get_velocity_ledger",
    "gate_get_killswitch",
    "gate_get_vault",
    "gate_get_authority",
    "gate_get_feedback_log",
    "gate_get_capability_namespace",
    "gate_get_attestor_profile",
    "gate_get_validation_request",
    "gate_get_validation_attestation",
    "gate_simulate_payment",
    "gate_get_engine_reputation",
    "gate_explain_decision",
    "gate_get_spend",
    "gate_list_approvals",
    "gate_list_payer_holdbacks",
    "gate_list_payee_holdbacks",
    "gate_list_subscriptions",
    "gate_init_authority",
    "gate_init_policy",
    "gate_set_killswitch",
    "gate_register_namespace",
    "gate_register_attestor",
    "gate_request_validation",
    "gate_respond_to_validation",
    "gate_approve",
    "gate_pay",
    "gate_refund_holdback",
    "gate_arbitrate_holdback",
    "gate_subscribe",
    "gate_unsubscribe",
    "gate_demo_state",
    "gate_docs",
    "gate_facilitator_walkthrough",
];

/// No boolean exclusiveMinimum/exclusiveMaximum anywhere in a schema.
fn no_boolean_exclusive(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.iter().all(|(k, x)| {
            !(k.starts_with("exclusiveM") && x.is_boolean()) && no_boolean_exclusive(x)
        }),
        Value::Array(a) => a.iter().all(no_boolean_exclusive),
        _ => true,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_resource_and_prompt_over_http() {
    let w = harness::world("tools").await;
    let server = w.http(w.config(w.vars(true))).await;
    let c = http_client(&server).await;
    let info = c.peer_info().unwrap();
    assert_eq!(info.protocol_version.as_str(), "2025-03-26");
    let server_info = info.server_info.as_ref().unwrap();
    assert_eq!(server_info.name, "trust-gate-mcp");
    assert_eq!(server_info.version, env!("CARGO_PKG_VERSION"));

    // tools/list: the 34 names, draft 2020-12 object schemas.
    let tools = c.list_all_tools().await.unwrap();
    let names: BTreeSet<String> = tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(
        names,
        TOOLS.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>()
    );
    for t in &tools {
        let s = Value::Object((*t.input_schema).clone());
        assert_eq!(
            s["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{}",
            t.name
        );
        assert_eq!(s["type"], "object", "{}", t.name);
        assert!(no_boolean_exclusive(&s), "{}: {s}", t.name);
        assert!(
            t.description.as_ref().is_some_and(|d| d.len() > 20),
            "{}",
            t.name
        );
    }
    // The schema admits every reason code, the limits' 16..23 too (a client that checks
    // arguments against it must be able to ask about them).
    let explain = tools
        .iter()
        .find(|t| t.name == "gate_explain_decision")
        .unwrap();
    let code = &explain.input_schema["properties"]["reason_code"];
    assert_eq!(
        (&code["minimum"], &code["maximum"]),
        (&json!(1), &json!(27)),
        "{code}"
    );
    let simulate = tools
        .iter()
        .find(|t| t.name == "gate_simulate_payment")
        .unwrap();
    let required: Vec<&str> = simulate.input_schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for f in [
        "caller",
        "payer_agent",
        "payee_agent",
        "amount",
        "mint",
        "policy_id",
    ] {
        assert!(required.contains(&f), "{f} in {required:?}");
    }

    resources(&c).await;
    prompts(&c, &names).await;
    discovery(&c).await;
    let demo = reads_on_the_demo_world(&c, &w).await;
    writes(&c, &w, &demo).await;
    errors(&c).await;
    c.cancel().await.unwrap();
    server.shutdown().await;
}

async fn resources(c: &harness::Client) {
    let list = c.list_all_resources().await.unwrap();
    let uris: Vec<&str> = list.iter().map(|r| r.uri.as_str()).collect();
    for u in [
        "gate://programs",
        "gate://idl/gate",
        "gate://docs/deny-codes",
        "gate://demo/server.rs",
    ] {
        assert!(uris.contains(&u), "{u} in {uris:?}");
    }
    let templates = c.list_all_resource_templates().await.unwrap();
    let t: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert_eq!(
        t,
        [
            "gate://idl/{program}",
            "gate://docs/{page}",
            "gate://demo/{file}"
        ]
    );
    let read = |uri: &str| {
        let uri = uri.to_string();
        async move { c.read_resource(ReadResourceRequestParams::new(uri)).await }
    };
    let text = |r: rmcp::model::ReadResourceResult| match &r.contents[0] {
        ResourceContents::TextResourceContents { text, .. } => text.clone(),
        other => panic!("not text: {other:?}"),
    };
    let manifest: Value =
        serde_json::from_str(&text(read("gate://programs").await.unwrap())).unwrap();
    assert_eq!(manifest["network"], "solana-localnet");
    assert_eq!(
        manifest["programs"][1]["programId"],
        "616ePQS44tJKJiCNZt3ega2qgbMeBtYupPjfcU1Z4Z9g"
    );
    assert!(manifest["programs"][1]["explorerUrl"]
        .as_str()
        .unwrap()
        .contains("cluster=custom"));
    let idl: Value =
        serde_json::from_str(&text(read("gate://idl/policy_vault").await.unwrap())).unwrap();
    assert_eq!(idl["metadata"]["name"], "policy_vault");
    assert!(
        text(read("gate://docs/walkthroughs/agent-setup").await.unwrap())
            .contains("gate_init_policy")
    );
    assert!(text(read("gate://demo/pay.rs").await.unwrap()).contains("pub async fn pay"));
    for bad in [
        "gate://demo/../Cargo.toml",
        "gate://demo/%2e%2e/lib.rs",
        "gate://idl/nope",
        "gate://nothing",
    ] {
        assert!(read(bad).await.is_err(), "{bad} must not be served");
    }
}

async fn prompts(c: &harness::Client, tools: &BTreeSet<String>) {
    let list = c.list_all_prompts().await.unwrap();
    let names: Vec<&str> = list.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "gate_audit_payment",
            "gate_setup_agent",
            "gate_explain_failure"
        ]
    );
    let args = |v: Value| v.as_object().cloned().unwrap();
    let cases = [
        (
            "gate_audit_payment",
            json!({"payer_agent": "P", "payee_agent": "Q", "amount": "100", "mint": "M", "policy_id": "1"}),
        ),
        ("gate_setup_agent", json!({"use_case": "buying data"})),
        ("gate_explain_failure", json!({"reason_code": "6"})),
        (
            "gate_explain_failure",
            json!({"error": "custom program error 3012"}),
        ),
    ];
    for (name, a) in cases {
        let p = c
            .get_prompt(GetPromptRequestParams::new(name).with_arguments(args(a)))
            .await
            .unwrap();
        let text = serde_json::to_string(&p.messages).unwrap();
        // Every tool a prompt names exists.
        let mentioned: BTreeSet<String> = text
            .split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
            .filter(|w| w.starts_with("gate_") && !w.ends_with('_'))
            .filter(|w| {
                ![
                    "gate_audit_payment",
                    "gate_setup_agent",
                    "gate_explain_failure",
                    "gate_mode",
                ]
                .contains(w)
            })
            .map(str::to_string)
            .collect();
        assert!(!mentioned.is_empty(), "{name}");
        assert!(
            mentioned.is_subset(tools),
            "{name} names unknown tools: {:?}",
            mentioned.difference(tools)
        );
    }
    let missing = c
        .get_prompt(GetPromptRequestParams::new("gate_audit_payment"))
        .await
        .unwrap_err();
    assert!(missing.to_string().contains("payer_agent"), "{missing}");
}

async fn discovery(c: &harness::Client) {
    let demo = ok(c, "gate_demo_state", json!({})).await;
    let payers = demo["payers"].as_array().unwrap();
    let funding: Vec<(&str, &str)> = payers
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["funding"].as_str().unwrap()))
        .collect();
    assert_eq!(
        funding,
        [
            ("payer-tier-0", "wallet"),
            ("payer-tier-1", "wallet"),
            ("payer-tier-3", "wallet"),
            ("payer-tier-3-vault", "vault"),
            // Its owner subscribed it to the service (gate_list_subscriptions lists it).
            ("subscriber", "wallet"),
        ]
    );
    assert_eq!(demo["payerPolicy"]["kinds"], 7);
    let docs = ok(
        c,
        "gate_docs",
        json!({"query": "kill switch threshold", "max_results": 3}),
    )
    .await;
    let n = docs["count"].as_u64().unwrap();
    assert!((1..=3).contains(&n), "{docs:#}");
    assert!(docs["results"][0]["uri"]
        .as_str()
        .unwrap()
        .starts_with("gate://docs/"));
    err(
        c,
        "gate_docs",
        json!({"query": "x", "max_results": 50}),
        "input_invalid",
    )
    .await;
    let wt = ok(
        c,
        "gate_facilitator_walkthrough",
        json!({"name": "multisig-killswitch"}),
    )
    .await;
    assert!(wt["markdown"].as_str().unwrap().contains("threshold"));
    let e = err(
        c,
        "gate_facilitator_walkthrough",
        json!({"name": "nope"}),
        "walkthrough_not_bundled",
    )
    .await;
    assert!(e["hint"].as_str().unwrap().contains("facilitator-x402"));
    let x = ok(c, "gate_explain_decision", json!({"reason_code": 6})).await;
    assert_eq!(x["name"], "CounterpartyTierBelowMin");
    assert_eq!(x["gateErrorCode"], 6006);
    // The limits' reasons fail the strict gate with 6100 + code.
    let x = ok(c, "gate_explain_decision", json!({"reason_code": 23})).await;
    assert_eq!(x["name"], "PayeeSlotsFull");
    assert_eq!(x["gateErrorCode"], 6123);
    let x = ok(c, "gate_explain_decision", json!({"reason_code": 27})).await;
    assert_eq!(x["name"], "HoldbackArbiterNotAccepted");
    assert_eq!(x["gateErrorCode"], 6127);
    err(
        c,
        "gate_explain_decision",
        json!({"reason_code": 28}),
        "input_invalid",
    )
    .await;
}

/// Demo agents' keys for the write tests: (payer tier 3, payer tier 1, service, mint).
pub struct DemoKeys {
    pub payer3: String,
    pub vault_payer: String,
    pub vault: String,
    pub payer1: String,
    pub service: String,
    pub mint: String,
}

async fn reads_on_the_demo_world(c: &harness::Client, w: &harness::World) -> DemoKeys {
    let world = &w.env.world;
    let k = DemoKeys {
        payer3: world.payer(3).unwrap().asset().to_string(),
        vault_payer: world.vault_payer().asset().to_string(),
        vault: trust_gate_client::pda::Pdas::new(trust_gate_client::ProgramIds::for_network(
            trust_gate_client::Network::Localnet,
        ))
        .vault(&world.vault_payer().asset(), &world.mint())
        .to_string(),
        payer1: world.payer(1).unwrap().asset().to_string(),
        service: world.service.asset().to_string(),
        mint: world.mint().to_string(),
    };
    let sim = |payer: &str| {
        json!({"caller": solana_sdk::pubkey::Pubkey::new_unique().to_string(), "payer_agent": payer,
               "payee_agent": k.service, "amount": "100000", "mint": k.mint, "policy_id": 1})
    };
    assert_eq!(
        ok(c, "gate_simulate_payment", sim(&k.payer3)).await,
        json!({"kind": "Allow"})
    );
    let deny = ok(c, "gate_simulate_payment", sim(&k.payer1)).await;
    assert_eq!(
        (deny["kind"].as_str(), deny["reasonCode"].as_u64()),
        (Some("Deny"), Some(6))
    );
    assert_eq!(deny["reasonName"], "CounterpartyTierBelowMin");

    let policy = ok(
        c,
        "gate_get_policy",
        json!({"agent_asset": k.payer3, "policy_id": 1}),
    )
    .await;
    assert_eq!(policy["kinds"], 7);
    assert_eq!(policy["spending"]["perTxCap"], "5000000");
    assert_eq!(policy["funding"], "wallet");
    // The vault-funded demo payer: its policy and its vault.
    let bound = ok(
        c,
        "gate_get_policy",
        json!({"agent_asset": k.vault_payer, "policy_id": 1}),
    )
    .await;
    assert_eq!(bound["funding"], "vault");
    let vault = ok(
        c,
        "gate_get_vault",
        json!({"agent_asset": k.vault_payer, "mint": k.mint}),
    )
    .await;
    assert_eq!(vault["balance"], "100000000", "{vault:#}");
    assert_eq!(vault["address"], k.vault);
    let none = err(
        c,
        "gate_get_vault",
        json!({"agent_asset": k.payer3, "mint": k.mint}),
        "not_found",
    )
    .await;
    assert!(none.to_string().contains("policy vault"), "{none}");
    let ledger = ok(
        c,
        "gate_get_velocity_ledger",
        json!({"agent_asset": k.payer3, "policy_id": 1}),
    )
    .await;
    assert_eq!(ledger["policyId"], 1);
    let ks = ok(c, "gate_get_killswitch", json!({"agent_asset": k.payer3})).await;
    assert_eq!(ks["paused"], false);
    let auth = ok(c, "gate_get_authority", json!({"agent_asset": k.payer3})).await;
    assert_eq!(auth["threshold"], 1);
    let rep = ok(
        c,
        "gate_get_engine_reputation",
        json!({"agent_asset": k.payer3}),
    )
    .await;
    assert_eq!(rep["reputation"]["tierImmediate"], 3, "{rep:#}");
    for f in ["tierConfirmed", "riskScore", "confidence", "schemaVersion"] {
        assert!(rep["reputation"][f].is_number(), "{f}: {rep:#}");
    }
    let unrated = ok(
        c,
        "gate_get_engine_reputation",
        json!({"agent_asset": solana_sdk::pubkey::Pubkey::new_unique().to_string()}),
    )
    .await;
    assert_eq!(unrated["error"]["errorCode"], "unrated");
    let ns = ok(
        c,
        "gate_get_capability_namespace",
        json!({"name": trust_gate_migrations::demo::NAMESPACES[0].0}),
    )
    .await;
    let by_hash = ok(
        c,
        "gate_get_capability_namespace",
        json!({"hash": ns["hash"]}),
    )
    .await;
    assert_eq!(ns, by_hash);
    let att = ok(
        c,
        "gate_get_attestor_profile",
        json!({"attestor": world.attestor.pubkey().to_string()}),
    )
    .await;
    assert_eq!(att["attestor"], world.attestor.pubkey().to_string());
    err(
        c,
        "gate_get_policy",
        json!({"agent_asset": k.payer3, "policy_id": 99}),
        "not_found",
    )
    .await;
    k
}

async fn writes(c: &harness::Client, w: &harness::World, demo: &DemoKeys) {
    let me = w.signer.pubkey().to_string();
    // Self-heal: a new agent, its authority and kill switch, then the policy, in one transaction.
    let policy_args = json!({
        "policy_id": 7, "kinds": 7,
        "spending": {"per_tx": "1000", "weekly": "50000"},
        "velocity": {"window_secs": 3600, "max_in_window": "20000", "tier0_decay_bps": 5000},
        "mint": demo.mint,
    });
    let created = ok(c, "gate_init_policy", policy_args.clone()).await;
    assert_eq!(created["created"], true);
    assert_eq!(created["selfHealed"], true);
    assert_eq!(
        created["healedSteps"],
        json!([
            "register_agent_via_cpi",
            "init_authority",
            "init_killswitch"
        ])
    );
    assert_eq!(
        created["spending"],
        json!({"perTxCap": "1000", "dailyCap": "50000", "weeklyCap": "50000"})
    );
    let asset = created["asset"].as_str().unwrap().to_string();
    let sig: solana_sdk::signature::Signature =
        created["signature"].as_str().unwrap().parse().unwrap();
    let tx = w
        .env
        .rpc
        .get_transaction(
            &sig,
            solana_transaction_status_client_types::UiTransactionEncoding::Base64,
        )
        .await;
    assert!(
        tx.is_ok(),
        "the self-healing transaction is on chain: {tx:?}"
    );

    let mut again = policy_args.clone();
    again["agent_asset"] = json!(asset);
    let same = ok(c, "gate_init_policy", again.clone()).await;
    assert_eq!(
        (same["created"].as_bool(), same["matchesRequest"].as_bool()),
        (Some(false), Some(true))
    );
    // Only the policy is missing for a second id: no healing.
    again["policy_id"] = json!(8);
    let second = ok(c, "gate_init_policy", again).await;
    assert_eq!(
        (
            second["selfHealed"].as_bool(),
            second["healedSteps"].clone()
        ),
        (Some(false), json!([]))
    );

    // Vault mode: the policy is vault-funded and the agent's vault is opened with it.
    let mut vault_args = policy_args.clone();
    vault_args["agent_asset"] = json!(asset);
    vault_args["policy_id"] = json!(9);
    vault_args["funding"] = json!("vault");
    // A vault-funded policy names the one key that may pay from the vault.
    let missing = err(c, "gate_init_policy", vault_args.clone(), "input_invalid").await;
    assert!(missing.to_string().contains("spender"), "{missing}");
    let hot = solana_sdk::pubkey::Pubkey::new_unique().to_string();
    vault_args["spender"] = json!(hot);
    let bound = ok(c, "gate_init_policy", vault_args.clone()).await;
    assert_eq!(bound["funding"], "vault");
    assert_eq!(bound["vault"]["opened"], true, "{bound:#}");
    assert_eq!(bound["spender"], json!(hot), "{bound:#}");
    // Another spender for the same policy renames it (the rule itself stays).
    let other = solana_sdk::pubkey::Pubkey::new_unique().to_string();
    vault_args["spender"] = json!(other);
    let renamed = ok(c, "gate_init_policy", vault_args.clone()).await;
    assert_eq!(
        (
            renamed["spenderChanged"].as_bool(),
            renamed["spender"].clone()
        ),
        (Some(true), json!(other)),
        "{renamed:#}"
    );
    let vault = ok(
        c,
        "gate_get_vault",
        json!({"agent_asset": asset, "mint": demo.mint}),
    )
    .await;
    assert_eq!(
        (vault["address"].clone(), vault["balance"].as_str()),
        (bound["vault"]["address"].clone(), Some("0"))
    );
    vault_args["funding"] = json!("savings");
    let bad = err(c, "gate_init_policy", vault_args, "input_invalid").await;
    assert!(bad.to_string().contains("funding"), "{bad}");

    // An agent bought from someone else: the signer asks to take over its previous owner's
    // authority, and completes the take-over once its delay has passed, once.
    let (seller, sold) = w.env.new_agent().await;
    let ix = w
        .env
        .b
        .init_authority(&seller.pubkey(), &sold.pubkey(), vec![seller.pubkey()], 1);
    w.env.send(&[ix], &[&seller]).await.unwrap();
    let sale = trust_gate_localnet::standin::core::transfer_v1(
        &sold.pubkey(),
        &w.env.collection,
        &seller.pubkey(),
        &w.signer.pubkey(),
    );
    w.env.send(&[sale], &[&seller]).await.unwrap();
    let sold = sold.pubkey().to_string();
    let asked = ok(c, "gate_init_authority", json!({"agent_asset": sold})).await;
    assert_eq!(
        (
            asked["takeOverRequested"].as_bool(),
            asked["takenOver"].as_bool()
        ),
        (Some(true), Some(false)),
        "{asked:#}"
    );
    let pending = ok(c, "gate_init_authority", json!({"agent_asset": sold})).await;
    assert_eq!(
        (
            pending["takeOverPending"].as_bool(),
            pending["effectiveAt"].clone()
        ),
        (Some(true), asked["effectiveAt"].clone()),
        "{pending:#}"
    );
    let now = trust_gate_client::chain::unix_time(&w.env.rpc)
        .await
        .unwrap();
    let wait = asked["effectiveAt"].as_i64().unwrap() - now;
    assert!(
        wait > 3600,
        "the take-over would take effect at once: {asked:#}"
    );
    w.env.localnet.warp(wait as u64 + 60).await.unwrap();
    let taken = ok(c, "gate_init_authority", json!({"agent_asset": sold})).await;
    assert_eq!(
        (taken["takenOver"].as_bool(), taken["owner"].as_str()),
        (Some(true), Some(me.as_str())),
        "{taken:#}"
    );
    let again = ok(c, "gate_init_authority", json!({"agent_asset": sold})).await;
    assert_eq!(
        (again["created"].as_bool(), again["current"].as_bool()),
        (Some(false), Some(true))
    );

    let auth = ok(c, "gate_init_authority", json!({"agent_asset": asset})).await;
    assert_eq!(
        (auth["created"].as_bool(), auth["threshold"].as_u64()),
        (Some(false), Some(1))
    );
    assert_eq!(auth["members"], json!([me]));

    let on = ok(
        c,
        "gate_set_killswitch",
        json!({"agent_asset": asset, "paused": true}),
    )
    .await;
    assert_eq!(
        (on["changed"].as_bool(), on["paused"].as_bool()),
        (Some(true), Some(true))
    );
    let still = ok(
        c,
        "gate_set_killswitch",
        json!({"agent_asset": asset, "paused": true}),
    )
    .await;
    assert_eq!(still["changed"], false);
    ok(
        c,
        "gate_set_killswitch",
        json!({"agent_asset": asset, "paused": false}),
    )
    .await;

    let cap = format!("mcp-test-{}", &random_hex32()[..8]);
    let ns = ok(
        c,
        "gate_register_namespace",
        json!({"name": cap, "schema_uri": "https://schema.example"}),
    )
    .await;
    assert_eq!(ns["created"], true);
    assert_eq!(
        ok(c, "gate_register_namespace", json!({"name": cap})).await["created"],
        false
    );
    let prof = ok(
        c,
        "gate_register_attestor",
        json!({"display_name_uri": "https://attestor.example"}),
    )
    .await;
    assert_eq!(prof["attestor"], me);
    assert_eq!(
        ok(c, "gate_register_attestor", json!({})).await["created"],
        false
    );

    let req = ok(
        c,
        "gate_request_validation",
        json!({"subject_asset": asset, "capability_name": cap, "deadline_slot": 1_000_000}),
    )
    .await;
    assert_eq!(req["created"], true);
    let read_req = ok(
        c,
        "gate_get_validation_request",
        json!({"subject_asset": asset, "capability_name": cap, "requester": me}),
    )
    .await;
    assert_eq!(read_req["deadlineSlot"], 1_000_000);
    let att = ok(
        c,
        "gate_respond_to_validation",
        json!({"subject_asset": asset, "capability_name": cap, "expires_at_slot": 10_000_000}),
    )
    .await;
    assert_eq!(
        (att["changed"].as_bool(), att["signatureVerified"].as_bool()),
        (Some(true), Some(true))
    );
    let unchanged = ok(c, "gate_respond_to_validation", json!({"subject_asset": asset, "capability_hash": ns["hash"], "expires_at_slot": 10_000_000})).await;
    assert_eq!(unchanged["changed"], false);
    let found = ok(
        c,
        "gate_get_validation_attestation",
        json!({"subject_asset": asset, "capability_name": cap, "capability_hash": "00".repeat(32)}),
    )
    .await;
    assert_eq!(
        (found["valid"].as_bool(), found["capabilityName"].as_str()),
        (Some(true), Some(cap.as_str()))
    );
    let by_attestor = ok(
        c,
        "gate_get_validation_attestation",
        json!({"subject_asset": asset, "capability_hash": ns["hash"], "attestor": me}),
    )
    .await;
    assert_eq!(by_attestor["attestations"].as_array().unwrap().len(), 1);
    err(
        c,
        "gate_get_validation_attestation",
        json!({"subject_asset": asset}),
        "input_invalid",
    )
    .await;

    // Feedback is given only by settlements (the gate refuses it on its own): a demo payment
    // settled through the SDK, then its feedback log read back.
    let env = &w.env;
    let pay = solana_sdk::pubkey::Pubkey::new_unique().to_bytes();
    let (settlement, signature) = env.settle(3, trust_gate_migrations::demo::PRICE, pay).await;
    let args = json!({"payment_id_hash": pay.iter().map(|b| format!("{b:02x}")).collect::<String>(),
                      "facilitator": env.world.facilitator.pubkey().to_string()});
    let log = ok(c, "gate_get_feedback_log", args.clone()).await;
    assert_eq!(
        (
            log["score"].as_u64(),
            log["value"].as_str(),
            log["settledAtomically"].as_bool(),
            log["closed"].as_bool(),
        ),
        (Some(90), Some("100000"), Some(true), Some(false))
    );
    // Past its window the log closes (the client's reclaim, as the crank does); the tool
    // then answers from the chain's history, with the settlement's transaction.
    let window = trust_gate_client::decode::DISPUTE_WINDOW_SECS as u64;
    env.localnet.warp(window + 600).await.unwrap();
    let now = trust_gate_client::chain::unix_time(&env.rpc).await.unwrap();
    let facilitator = env.world.facilitator.pubkey();
    let scan = trust_gate_client::reclaim::scan(&env.rpc, &env.b, &facilitator, now)
        .await
        .unwrap();
    let ours: Vec<_> = scan
        .closable
        .into_iter()
        .filter(|c| c.receipt.payment_id_hash == pay)
        .collect();
    assert_eq!(ours.len(), 1);
    trust_gate_client::reclaim::close_run(&env.rpc, &env.b, &env.world.facilitator, &ours)
        .await
        .unwrap();
    let closed = ok(c, "gate_get_feedback_log", args).await;
    assert_eq!(
        (
            closed["closed"].as_bool(),
            closed["transaction"].as_str(),
            closed["payer"].as_str(),
        ),
        (
            Some(true),
            Some(signature.to_string().as_str()),
            Some(settlement.payer_asset.to_string().as_str())
        ),
        "{closed:#}"
    );
    assert_eq!(
        (
            closed["score"].clone(),
            closed["value"].clone(),
            closed["deadline"].clone()
        ),
        (
            log["score"].clone(),
            log["value"].clone(),
            log["deadline"].clone()
        )
    );
}

async fn errors(c: &harness::Client) {
    // Arguments failing the schema name the field.
    let e = err(
        c,
        "gate_get_policy",
        json!({"agent_asset": "x", "policy_id": "one"}),
        "input_invalid",
    )
    .await;
    assert!(
        e["message"].as_str().unwrap().contains("policy_id"),
        "{e:#}"
    );
    let e = err(
        c,
        "gate_get_policy",
        json!({"policy_id": 1}),
        "input_invalid",
    )
    .await;
    assert!(
        e["message"].as_str().unwrap().contains("agent_asset"),
        "{e:#}"
    );
    let e = err(c, "gate_simulate_payment", json!({"caller": "11111111111111111111111111111111", "payer_agent": "11111111111111111111111111111111",
        "payee_agent": "11111111111111111111111111111111", "amount": "1.5", "mint": "11111111111111111111111111111111", "policy_id": 1}), "input_invalid").await;
    assert!(
        e["message"].as_str().unwrap().starts_with("invalid amount"),
        "{e:#}"
    );
    let e = err(
        c,
        "gate_get_killswitch",
        json!({"agent_asset": "not-a-key"}),
        "input_invalid",
    )
    .await;
    assert!(
        e["message"].as_str().unwrap().contains("agent_asset"),
        "{e:#}"
    );
    // A chain failure names its code: the namespace account does not exist.
    let e = err(
        c,
        "gate_request_validation",
        json!({"subject_asset": solana_sdk::pubkey::Pubkey::new_unique().to_string(),
        "capability_name": format!("never-registered-{}", random_hex32()), "deadline_slot": 5}),
        "chain_error",
    )
    .await;
    assert!(
        e["hint"]
            .as_str()
            .unwrap()
            .contains("3012 AccountNotInitialized"),
        "{e:#}"
    );
    // deadline_slot below its minimum.
    let e = err(
        c,
        "gate_request_validation",
        json!({"subject_asset": solana_sdk::pubkey::Pubkey::new_unique().to_string(),
        "capability_name": "x", "deadline_slot": 0}),
        "input_invalid",
    )
    .await;
    assert!(
        e["message"].as_str().unwrap().contains("deadline_slot"),
        "{e:#}"
    );
    // An unknown tool stays a protocol error.
    let unknown = c
        .call_tool(rmcp::model::CallToolRequestParams::new("gate_nope"))
        .await;
    assert!(unknown.is_err());
}
