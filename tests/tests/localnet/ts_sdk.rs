//! The TypeScript SDK (`packages/sdk`) against the Rust SDK: the package is built with its own
//! `tsc` and its tests run on Node's test runner, fed what the Rust SDK computes for the same
//! inputs.

use anchor_lang::prelude::Pubkey;
use serde_json::json;
use trust_gate_client::pda::Pdas;
use trust_gate_client::settle::{Funding, TokenProgram};
use trust_gate_client::units::Shape;
use trust_gate_client::{Network, ProgramIds};

#[test]
fn every_pda_and_unit_limit_of_the_typescript_sdk_equals_the_rust_sdks() {
    let dir = crate::node::build_sdk();
    let ids = ProgramIds::for_network(Network::Localnet);
    let p = Pdas::new(ids);
    let k = Pubkey::new_unique;
    let (asset, mint, facilitator) = (k(), k(), k());
    let (attestor, requester, collection) = (k(), k(), k());
    let capability = trust_gate_client::instructions::capability_hash("kyc.tier-1.v1");
    let payment = [7u8; 32];
    let policy_id = 258u32; // two bytes of the u32 seed in use
    let pdas: serde_json::Map<String, serde_json::Value> = [
        ("policyAuthority", p.policy_authority(&asset)),
        ("policy", p.policy(&asset, policy_id)),
        ("velocity", p.velocity(&asset, policy_id)),
        ("payeeList", p.payee_list(&asset, policy_id)),
        ("killswitch", p.killswitch(&asset)),
        ("acceptance", p.acceptance(&asset)),
        ("vault", p.vault(&asset, &mint)),
        ("authorityGuard", p.authority_guard(&asset)),
        ("takeOverRequest", p.take_over_request(&asset)),
        ("evaluateSigner", p.evaluate_signer()),
        ("gateAuthority", p.gate_authority(&facilitator)),
        ("feedbackLog", p.feedback_log(&facilitator, &payment)),
        ("dispute", p.dispute(&facilitator, &payment)),
        ("namespace", p.namespace(&capability)),
        ("attestorProfile", p.attestor_profile(&attestor)),
        (
            "validationRequest",
            p.validation_request(&asset, &capability, &requester),
        ),
        ("attestation", p.attestation(&asset, &capability, &attestor)),
        ("rootConfig", p.root_config()),
        ("registryConfig", p.registry_config(&collection)),
        ("agentAccount", p.agent_account(&asset)),
        ("registryCpiAuthority", p.registry_cpi_authority()),
        ("atomConfig", p.atom_config()),
        ("atomStats", p.atom_stats(&asset)),
    ]
    .into_iter()
    .map(|(name, key)| (name.to_string(), json!(key.to_string())))
    .collect();
    let s = |k: Pubkey| k.to_string();
    // The compute-unit limits of two settlement shapes (payer `asset`, payee `requester`):
    // the bumps the searches try come from these keys, the rest from the measured constants.
    let unit_limits: Vec<serde_json::Value> = [
        (Funding::Wallet, TokenProgram::SplToken, false),
        (Funding::Vault, TokenProgram::Token2022, true),
    ]
    .into_iter()
    .map(|(funding, token_program, payee_rated)| {
        let shape = Shape {
            funding,
            token_program,
            payee_rated,
            payer_asset: asset,
            payee_asset: requester,
            facilitator,
            payment_id_hash: payment,
        };
        json!({
            "funding": funding,
            "tokenProgram": token_program.id().to_string(),
            "payeeRated": payee_rated,
            "extraBumpTries": shape.extra_bump_tries(&ids),
            "limit": shape.unit_limit(&ids),
        })
    })
    .collect();
    let limits_for_use: Vec<serde_json::Value> = [0u64, 15_000, 35_425, 90_282, 2_000_000]
        .into_iter()
        .map(|used| json!([used, trust_gate_client::units::limit_for_use(used)]))
        .collect();
    crate::node::node_test(
        &dir,
        "test/pda.test.mjs",
        &json!({
            "network": "solana-localnet",
            "programIds": {
                "policyVault": s(ids.policy_vault),
                "gate": s(ids.gate),
                "validationRegistry": s(ids.validation_registry),
                "agentRegistry": s(ids.agent_registry),
                "reputationEngine": s(ids.reputation_engine),
            },
            "keys": {
                "asset": s(asset), "mint": s(mint), "facilitator": s(facilitator),
                "attestor": s(attestor), "requester": s(requester), "collection": s(collection),
            },
            "policyId": policy_id,
            "capabilityHash": trust_gate_client::decode::hex(&capability),
            "paymentIdHash": trust_gate_client::decode::hex(&payment),
            "pdas": pdas,
            "unitLimits": unit_limits,
            // The limit for a simulated use, on both sides.
            "limitsForUse": limits_for_use,
        }),
    );
}

#[test]
fn the_typescript_sdks_pure_parts_pass_their_tests() {
    let dir = crate::node::build_sdk();
    crate::node::node_test(&dir, "test/unit.test.mjs", &json!({}));
    // No import circle among the SDK's modules, type-only imports included (madge).
    crate::node::node_test(&dir, "test/circles.test.mjs", &json!({}));
}
