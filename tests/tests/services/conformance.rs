//! A third-party x402 check: the `x402-conformance` tool (PyPI) grades the demo's 402
//! answer (`x402conf resource`) and the facilitator's /supported (`x402conf live`) from
//! its JSON report, check by check.
//! The tool is installed by the test on first use (`tests/x402/requirements.txt`, into
//! `tests/x402/.venv`).

use crate::services;
use solana_sdk::signer::Signer;
use std::path::PathBuf;
use std::process::Command;

fn x402conf() -> PathBuf {
    trust_gate_test_setup::python_venv("tests/x402").join("bin/x402conf")
}

/// Runs the tool and returns its JSON report.
fn run(args: &[&str]) -> serde_json::Value {
    let out = Command::new(x402conf()).args(args).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "x402conf {args:?} printed no JSON report ({e}):\n{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Every check of the report: (check name, pass, detail).
fn checks(report: &serde_json::Value) -> Vec<(String, bool, serde_json::Value)> {
    let results = report["results"].as_array().expect("results");
    assert!(!results.is_empty(), "{report}");
    results
        .iter()
        .flat_map(|r| r["checks"].as_array().expect("checks").clone())
        .map(|c| {
            (
                c["check"].as_str().unwrap_or_default().to_string(),
                c["pass"].as_bool().expect("pass is a boolean"),
                c["detail"].clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn x402_conformance_on_the_demo_and_the_facilitator() {
    let s = services::start().await;
    let resource = s.d("/protected");
    let facilitator = s.facilitator.url();
    let (resource_report, live_report) = tokio::task::spawn_blocking(move || {
        (run(&["resource", &resource]), run(&["live", &facilitator]))
    })
    .await
    .unwrap();

    // P1-P7 on the demo's 402: all pass.
    let p = checks(&resource_report);
    assert!(p.len() >= 7, "{resource_report}");
    for (name, pass, detail) in &p {
        assert!(pass, "{name}: {detail}");
    }

    // S0-S4 on /supported: all pass except S3, which recognises only the published
    // mainnet and devnet CAIP-2 ids; a localnet's id (from its own genesis hash) cannot be
    // one of them, and the check must name exactly that id and nothing else.
    let caip2 = s.facilitator.facilitator.caip2().await.unwrap();
    let live = checks(&live_report);
    assert!(live.len() >= 4, "{live_report}");
    for (name, pass, detail) in &live {
        if name.starts_with("S3 ") {
            // Once per kind: the trust-gate scheme's, upto's and batch-settlement's plain
            // and gated.
            assert_eq!(
                detail["unrecognised_solana_ids"],
                serde_json::json!([caip2, caip2, caip2, caip2, caip2]),
                "{detail}"
            );
            assert_eq!(detail["v1_names_in_v2"], serde_json::json!([]), "{detail}");
        } else {
            assert!(pass, "{name}: {detail}");
        }
        // The offer is the trust-gate scheme, not `exact`: the tool's exact-scheme checks
        // (the SVM fee payer, S4 here and P5 on the 402) find nothing of theirs to grade.
        if name.starts_with("S4 ") {
            assert_eq!(detail["solana_exact_kinds"], 0, "{detail}");
        }
    }

    // So the fee payer is checked here: the trust-gate kind names the facilitator, which
    // /supported lists as the network's signer.
    let supported = s.get_json(s.f("/supported")).await;
    let fee_payer = s.env.world.facilitator.pubkey().to_string();
    // Then the stock `upto` and `batch-settlement` schemes and their gated variants, whose
    // offers copy their extra: the sponsor only, and for sessions the idle close (a week by
    // default), which stock servers copy as the scheme says.
    assert_eq!(
        supported["kinds"],
        serde_json::json!([{
            "x402Version": 2,
            "scheme": "trust-gate",
            "network": caip2,
            "extra": supported["kinds"][0]["extra"],
        }, {
            "x402Version": 2,
            "scheme": "upto",
            "network": caip2,
            "extra": {"feePayer": fee_payer},
        }, {
            "x402Version": 2,
            "scheme": "trust-gate-upto",
            "network": caip2,
            "extra": {"feePayer": fee_payer},
        }, {
            "x402Version": 2,
            "scheme": "batch-settlement",
            "network": caip2,
            "extra": {"feePayer": fee_payer, "maxIdleSecs": 604_800},
        }, {
            "x402Version": 2,
            "scheme": "trust-gate-batch-settlement",
            "network": caip2,
            "extra": {"feePayer": fee_payer, "maxIdleSecs": 604_800},
        }])
    );
    assert_eq!(supported["kinds"][0]["extra"]["feePayer"], fee_payer);
    assert_eq!(
        supported["signers"]["solana:*"],
        serde_json::json!([fee_payer])
    );
}
