//! POST /verify: the three decisions with their headers, every error status, the mount.

use crate::services::{self, header, loopback, Services};
use anchor_lang::prelude::Pubkey;
use serde_json::{json, Value};
use solana_sdk::signer::Signer;
use trust_gate_client::decode::hex;
use trust_gate_client::instructions::capability_hash;
use trust_gate_facilitator::{FacilitatorKey, MountConfig};
use trust_gate_migrations::demo;

/// A change to a request body.
type Edit = Box<dyn Fn(&mut Value)>;

fn context(s: &Services, tier: u8) -> Value {
    let w = &s.env.world;
    json!({
        "payerAgentAsset": w.payer(tier).unwrap().asset().to_string(),
        "payeeAgentAsset": w.service.asset().to_string(),
        "amount": demo::PRICE.to_string(),
        "mint": w.mint().to_string(),
        "policyId": demo::POLICY_ID,
    })
}

#[tokio::test]
async fn decisions_errors_and_the_mount() {
    let s = services::start().await;

    // Allow.
    let (status, r) = s.post("/verify", &context(&s, 3)).await;
    assert_eq!(status, 200);
    assert_eq!(header(&r, "X-Gate-Decision"), "Allow");
    assert_eq!(header(&r, "X-Payment-Network"), "solana-localnet");
    let body: Value = r.json().await.unwrap();
    assert_eq!(
        body,
        json!({"isValid": true, "decision": {"kind": "Allow"}})
    );

    // Deny 6 for tiers 0 and 1, with every Deny header.
    for tier in [0, 1] {
        let (status, r) = s.post("/verify", &context(&s, tier)).await;
        assert_eq!(status, 402, "tier {tier}");
        assert_eq!(header(&r, "X-Gate-Decision"), "Deny");
        assert_eq!(header(&r, "X-Payment-Required"), "denied");
        assert_eq!(header(&r, "X-Payment-Reason-Code"), "6");
        assert_eq!(
            header(&r, "X-Payment-Reason-Name"),
            "CounterpartyTierBelowMin"
        );
        assert_eq!(header(&r, "X-Payment-Network"), "solana-localnet");
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["isValid"], false);
        assert_eq!(body["invalidReason"], "CounterpartyTierBelowMin");
        assert_eq!(
            body["decision"],
            json!({"kind": "Deny", "reasonCode": 6, "reasonName": "CounterpartyTierBelowMin"})
        );
    }

    // RequireValidation: a policy of the tier-3 payer that asks the payee for a capability.
    let w = &s.env.world;
    let payer = w.payer(3).unwrap();
    let capability = capability_hash(demo::NAMESPACES[0].0);
    let mut policy = w.payer_policy();
    policy.kinds |= policy_vault::engine::config::kinds::REQUIRE_VALIDATION;
    policy.required_capability = capability;
    policy.accepted_attestors = [w.attestor.pubkey(), Pubkey::default()];
    let ix = s.env.b.init_policy(
        &payer.owner.pubkey(),
        &[],
        &payer.asset(),
        5,
        policy,
        Default::default(),
        0,
    );
    s.env.send(&[ix], &[&payer.owner]).await.unwrap();
    let mut ctx = context(&s, 3);
    ctx["policyId"] = json!(5);
    let (status, r) = s.post("/verify", &ctx).await;
    assert_eq!(status, 402);
    assert_eq!(header(&r, "X-Gate-Decision"), "RequireValidation");
    assert_eq!(header(&r, "X-Payment-Required"), "validation");
    assert_eq!(header(&r, "X-Capability-Required"), hex(&capability));
    assert_eq!(header(&r, "X-Capability-Subject"), "payee");
    assert_eq!(header(&r, "X-Payment-Network"), "solana-localnet");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["invalidReason"], "RequireValidation");
    assert_eq!(body["decision"]["capabilityHash"], hex(&capability));
    assert_eq!(body["decision"]["subject"], "payee");

    // 422: the same policy once retired (a hard error naming it, not a decision).
    let retire = s
        .env
        .b
        .retire_policy(&payer.owner.pubkey(), &[], &payer.asset(), 5);
    s.env.send(&[retire], &[&payer.owner]).await.unwrap();
    let (status, r) = s.post("/verify", &ctx).await;
    let e: Value = r.json().await.unwrap();
    assert_eq!(
        (status, e["error"].as_str()),
        (422, Some("policy_retired")),
        "{e}"
    );
    assert!(
        e["message"].as_str().unwrap().contains("PolicyRetired"),
        "{e}"
    );

    // A policy of the tier-3 payer whose deny list account names the service: /verify
    // reads the list account the policy names and answers Deny 19 with every header; taken
    // off the list by the threshold, the payment is allowed again.
    let owner = payer.owner.pubkey();
    let rules = s.env.b.payee_list_rules(
        &payer.asset(),
        6,
        policy_vault::state::PolicyRules {
            payee_list_mode: 2,
            ..Default::default()
        },
    );
    let create = s
        .env
        .b
        .init_policy(&owner, &[], &payer.asset(), 6, w.payer_policy(), rules, 0);
    let list = |add: bool| {
        let service = vec![w.service.asset()];
        let (a, r) = if add {
            (service, vec![])
        } else {
            (vec![], service)
        };
        s.env
            .b
            .edit_payee_list(&owner, &[], &payer.asset(), 6, a, r)
    };
    s.env
        .send(&[create, list(true)], &[&payer.owner])
        .await
        .unwrap();
    let mut ctx = context(&s, 3);
    ctx["policyId"] = json!(6);
    let (status, r) = s.post("/verify", &ctx).await;
    assert_eq!(status, 402);
    assert_eq!(header(&r, "X-Gate-Decision"), "Deny");
    assert_eq!(header(&r, "X-Payment-Reason-Code"), "19");
    assert_eq!(header(&r, "X-Payment-Reason-Name"), "PayeeDenied");
    let body: Value = r.json().await.unwrap();
    assert_eq!(
        body["decision"],
        json!({"kind": "Deny", "reasonCode": 19, "reasonName": "PayeeDenied"})
    );
    s.env.send(&[list(false)], &[&payer.owner]).await.unwrap();
    let (status, r) = s.post("/verify", &ctx).await;
    assert_eq!(status, 200);
    assert_eq!(header(&r, "X-Gate-Decision"), "Allow");

    // 400: each bad field is named.
    let cases: Vec<(Edit, &str)> = vec![
        (
            Box::new(|v| v["payerAgentAsset"] = json!("not-base58-0OIl")),
            "payerAgentAsset",
        ),
        (Box::new(|v| v["amount"] = json!("12a")), "amount"),
        (
            Box::new(|v| v["amount"] = json!("18446744073709551616")),
            "amount",
        ),
        (
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("mint");
            }),
            "mint: missing",
        ),
        (
            Box::new(|v| v["colour"] = json!("red")),
            "colour: unknown field",
        ),
        (
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("policyId");
            }),
            "policyId: missing",
        ),
    ];
    for (edit, want) in cases {
        let mut body = context(&s, 3);
        edit(&mut body);
        let (status, r) = s.post("/verify", &body).await;
        assert_eq!(status, 400, "{want}");
        let e: Value = r.json().await.unwrap();
        assert_eq!(e["error"], "input_invalid");
        assert!(e["message"].as_str().unwrap().starts_with(want), "{e}");
    }
    let r = s
        .http
        .post(s.f("/verify"))
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);

    // 404: no such policy, with Anchor's code and the account.
    let mut missing = context(&s, 3);
    missing["policyId"] = json!(99);
    let (status, r) = s.post("/verify", &missing).await;
    assert_eq!(status, 404);
    let e: Value = r.json().await.unwrap();
    let policy_pda = s.env.b.pda.policy(&payer.asset(), 99).to_string();
    let m = e["message"].as_str().unwrap();
    assert_eq!(e["error"], "not_found");
    assert!(
        m.contains("3012 AccountNotInitialized") && m.contains(&policy_pda),
        "{m}"
    );
    assert!(e["hint"].as_str().unwrap().contains("init_policy"));

    // 422: a mint other than the policy's.
    let mut other_mint = context(&s, 3);
    other_mint["mint"] = json!(Pubkey::new_unique().to_string());
    let (status, r) = s.post("/verify", &other_mint).await;
    assert_eq!(status, 422);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"], "policy_mismatch");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains(&w.mint().to_string()),
        "{e}"
    );

    // 413 above the body limit.
    let big = "x".repeat(70 * 1024);
    let r = s.http.post(s.f("/verify")).body(big).send().await.unwrap();
    assert_eq!(r.status(), 413);

    // CORS preflight from any origin; the payment headers are exposed.
    let r = s
        .http
        .request(reqwest::Method::OPTIONS, s.f("/verify"))
        .header("Origin", "https://agent.example")
        .header("Access-Control-Request-Method", "POST")
        .header(
            "Access-Control-Request-Headers",
            "content-type,payment-signature",
        )
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success());
    assert_eq!(header(&r, "access-control-allow-origin"), "*");
    let r = s
        .http
        .post(s.f("/verify"))
        .header("Origin", "https://agent.example")
        .json(&context(&s, 1))
        .send()
        .await
        .unwrap();
    let exposed = header(&r, "access-control-expose-headers").to_ascii_lowercase();
    for h in [
        "payment-required",
        "payment-response",
        "x-gate-decision",
        "x-payment-reason-code",
    ] {
        assert!(exposed.contains(h), "{exposed}");
    }

    // The mount: /verify and /receipt only, with a public key only.
    let router = trust_gate_facilitator::mount(MountConfig {
        rpc_url: s.env.localnet.rpc_url(),
        facilitator: FacilitatorKey::Pubkey(w.facilitator.pubkey()),
        network: trust_gate_client::Network::Localnet,
        atomicity_enforced: trust_gate_client::AtomicityEnforced::TRUE,
        default_policy_id: Some(demo::POLICY_ID),
    })
    .unwrap();
    let listener = tokio::net::TcpListener::bind(loopback()).await.unwrap();
    let mounted = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    let mut no_policy = context(&s, 3);
    no_policy.as_object_mut().unwrap().remove("policyId");
    let r = s
        .http
        .post(format!("{mounted}/verify"))
        .json(&no_policy)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "the default policy id applies");
    let r = s
        .http
        .get(format!("{mounted}/receipt/{}", "00".repeat(32)))
        .send()
        .await
        .unwrap();
    assert_eq!(r.json::<Value>().await.unwrap()["exists"], false);
    for path in ["/settle", "/dispute"] {
        let r = s
            .http
            .post(format!("{mounted}{path}"))
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404, "{path} is not mounted");
    }
    task.abort();

    // 502: the RPC backend is down.
    let dead =
        trust_gate_facilitator::Facilitator::new(services::config(&s.env, "http://127.0.0.1:9"))
            .unwrap();
    let listener = tokio::net::TcpListener::bind(loopback()).await.unwrap();
    let down = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        axum::serve(listener, trust_gate_facilitator::router(dead))
            .await
            .unwrap()
    });
    let r = s
        .http
        .post(format!("{down}/verify"))
        .json(&context(&s, 3))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 502);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"], "rpc_failure");
    assert!(e["hint"].as_str().unwrap().contains("RPC_URL"));
    task.abort();

    // A facilitator that cannot reach its RPC does not start, naming the variable.
    let err =
        trust_gate_facilitator::start(services::config(&s.env, "http://127.0.0.1:9"), loopback())
            .await
            .err()
            .unwrap()
            .to_string();
    assert!(err.starts_with("RPC_URL"), "{err}");
}
