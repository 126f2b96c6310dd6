//! `trust-gate policy`: a policy with limits created from a JSON file, refused when it exists or
//! when a field is wrong (the message names it), its list account edited, and shown; the gate's
//! simulated decisions under it follow the list and the per-payee cap.

use crate::fixture::{self, Env};
use serde_json::Value;

/// Runs `trust-gate <args>` against `env`; returns (success, stdout, stderr).
fn trust_gate(env: &Env, args: &[&str]) -> (bool, String, String) {
    crate::trust_gate(env, args, &["NETWORK"])
}

fn json_of(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// A JSON file with `body` in the system's temporary directory.
fn file(name: &str, body: &str) -> String {
    let path = std::env::temp_dir().join(format!("trust-gate-{}-{name}", std::process::id()));
    std::fs::write(&path, body).unwrap();
    path.to_string_lossy().into_owned()
}

/// The decision code `trust-gate simulate` prints for the demo tier-3 payer paying the
/// service `amount` under policy 7 (0 for Allow).
fn simulated(env: &Env, amount: u64) -> u64 {
    let (ok, out, err) = trust_gate(
        env,
        &[
            "simulate",
            "--demo-payer-tier",
            "3",
            "--policy-id",
            "7",
            "--amount",
            &amount.to_string(),
        ],
    );
    assert!(ok, "{out}{err}");
    let v = json_of(&out);
    match v["kind"].as_str() {
        Some("Allow") => 0,
        _ => v["reasonCode"].as_u64().unwrap_or_else(|| panic!("{v}")),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_policy_with_limits_is_created_edited_and_shown_from_the_command_line() {
    let env = fixture::seeded().await;
    let payer = env.world.payer(3).unwrap().asset().to_string();
    let service = env.world.service.asset().to_string();
    let policy = format!(
        r#"{{"kinds": 3, "mint": "{}", "spending": {{"daily": "20000000"}},
            "monthly_cap": "50000000", "payee_daily_cap": "1000000",
            "payee_list": {{"mode": "allow", "account": true}}}}"#,
        env.world.mint()
    );
    let path = file("policy.json", &policy);
    let create = [
        "policy",
        "create",
        "--asset",
        &payer,
        "--policy-id",
        "7",
        "--file",
        &path,
    ];
    let (ok, out, err) = trust_gate(&env, &create);
    assert!(ok, "{out}{err}");
    let v = json_of(&out);
    assert_eq!(v["approvalThreshold"], "0", "{v}");
    assert_eq!(v["rules"]["monthlyCap"], "50000000", "{v}");
    assert_eq!(v["rules"]["payeeDailyCap"], "1000000", "{v}");
    assert_eq!(v["rules"]["payeeList"]["mode"], "allow", "{v}");
    assert_eq!(v["payeeListEntries"], serde_json::json!([]), "{v}");
    assert!(v["signature"].is_string(), "{v}");

    // Policies are immutable: a second create is refused, saying so.
    let (ok, out, err) = trust_gate(&env, &create);
    assert!(!ok, "{out}");
    assert!(err.contains("already exists with these rules"), "{err}");

    // A wrong field is named before anything is sent.
    let bad = file(
        "bad.json",
        &format!(r#"{{"kinds": 1, "payee_list": {{"mode": "maybe", "payees": ["{service}"]}}}}"#),
    );
    let (ok, out, err) = trust_gate(
        &env,
        &[
            "policy",
            "create",
            "--asset",
            &payer,
            "--policy-id",
            "8",
            "--file",
            &bad,
        ],
    );
    assert!(!ok, "{out}");
    assert!(err.contains("payee_list.mode"), "{err}");
    let (ok, _, err) = trust_gate(
        &env,
        &["policy", "show", "--asset", &payer, "--policy-id", "8"],
    );
    assert!(!ok && err.contains("no policy 8"), "{err}");

    // The allow list is empty: the service is not allowed (18, PayeeNotAllowed).
    assert_eq!(simulated(&env, 1_000), 18);
    let (ok, out, err) = trust_gate(
        &env,
        &[
            "policy",
            "edit-list",
            "--asset",
            &payer,
            "--policy-id",
            "7",
            "--add",
            &service,
        ],
    );
    assert!(ok, "{out}{err}");
    assert_eq!(
        json_of(&out)["payeeListEntries"],
        serde_json::json!([service])
    );
    // Listed now; above the per-payee daily cap it is denied (22, PayeeDailyExceeded).
    assert_eq!(simulated(&env, 1_000), 0);
    assert_eq!(simulated(&env, 1_000_001), 22);

    let (ok, out, err) = trust_gate(
        &env,
        &["policy", "show", "--asset", &payer, "--policy-id", "7"],
    );
    assert!(ok, "{out}{err}");
    let v = json_of(&out);
    assert_eq!(v["payeeListEntries"], serde_json::json!([service]), "{v}");
    assert_eq!(
        v["asset"],
        env.world.payer(3).unwrap().asset().to_string(),
        "{v}"
    );

    // An edit needs something to do, and a policy with a list account.
    let (ok, _, err) = trust_gate(
        &env,
        &["policy", "edit-list", "--asset", &payer, "--policy-id", "7"],
    );
    assert!(
        !ok && err.contains("at least one --add or --remove"),
        "{err}"
    );
    let (ok, _, err) = trust_gate(
        &env,
        &[
            "policy",
            "edit-list",
            "--asset",
            &payer,
            "--policy-id",
            "1",
            "--add",
            &service,
        ],
    );
    assert!(!ok && err.contains("has no payee list account"), "{err}");
}
