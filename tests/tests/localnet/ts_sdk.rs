//! The TypeScript SDK (`packages/sdk`) against the Rust SDK: the package is built with its own
//! `tsc` and its tests run on Node's test runner, fed what the Rust SDK computes for the same
//! inputs.

use anchor_lang::prelude::Pubkey;
use anchor_lang::AccountSerialize;
use gate::holdback::{HeldShare, HoldState};
use gate::state::FeedbackLog;
use serde_json::{json, Value};
use solana_sdk::instruction::Instruction;
use trust_gate_client::decode::hex;
use trust_gate_client::holdback::{HeldPayment, HoldbackQuote};
use trust_gate_client::instructions::{ApprovalUse, Attestations};
use trust_gate_client::pda::Pdas;
use trust_gate_client::settle::{
    self, AtomicityEnforced, Feedback, Funding, Settlement, TokenProgram,
};
use trust_gate_client::units::Shape;
use trust_gate_client::{Builder, ClientError, Network, ProgramIds};

#[test]
fn every_pda_and_unit_limit_of_the_typescript_sdk_equals_the_rust_sdks() {
    let dir = crate::node::build_sdk();
    let ids = ProgramIds::for_network(Network::Localnet);
    let p = Pdas::new(ids);
    let b = Builder::new(ids).unwrap();
    let k = Pubkey::new_unique;
    let (asset, mint, facilitator) = (k(), k(), k());
    let (attestor, requester, collection) = (k(), k(), k());
    let capability = trust_gate_client::instructions::capability_hash("kyc.tier-1.v1");
    let payment = [7u8; 32];
    let policy_id = 258u32; // two bytes of the u32 seed in use
                            // An arbiter set's members are ascending by their bytes.
    let mut arbiters = vec![attestor, requester, collection];
    arbiters.sort();
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
        ("holdbackEscrow", p.holdback_escrow(&requester, &mint)),
        ("holdbackAuthority", p.holdback_authority()),
        ("arbiterSet", p.arbiter_set(2, &arbiters)),
    ]
    .into_iter()
    .map(|(name, key)| (name.to_string(), json!(key.to_string())))
    .collect();
    let s = |k: Pubkey| k.to_string();
    // The compute-unit limits of settlement shapes, held and not (payer `asset`, payee
    // `requester`): the bumps the searches try come from these keys, the rest from the
    // measured constants.
    let unit_limits: Vec<serde_json::Value> = [
        (Funding::Wallet, TokenProgram::SplToken, false, false),
        (Funding::Vault, TokenProgram::Token2022, true, false),
        (Funding::Wallet, TokenProgram::SplToken, false, true),
        (Funding::Vault, TokenProgram::Token2022, true, true),
    ]
    .into_iter()
    .map(|(funding, token_program, payee_rated, held)| {
        let shape = Shape {
            funding,
            token_program,
            payee_rated,
            held,
            payer_asset: asset,
            payee_asset: requester,
            facilitator,
            payment_id_hash: payment,
        };
        json!({
            "funding": funding,
            "tokenProgram": token_program.id().to_string(),
            "payeeRated": payee_rated,
            "held": held,
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
            "arbiterSet": { "threshold": 2, "members": arbiters.iter().map(|m| m.to_string()).collect::<Vec<_>>() },
            "pdas": pdas,
            "unitLimits": unit_limits,
            // The limit for a simulated use, on both sides.
            "limitsForUse": limits_for_use,
            "heldSettlements": held_settlements(&b),
            "holdback": holdback_fixture(&b),
        }),
    );
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

/// Settlements with a holdback as the Rust SDK composes them, with their inputs: a share held
/// wallet-funded, one held vault-funded with an approval, attestations and a compute budget,
/// a quote that holds nothing at this amount (the tier alone, one transfer) and none at all;
/// and the refusal of a share that leaves the payee nothing.
fn held_settlements(b: &Builder) -> Value {
    let k = Pubkey::new_unique;
    let (payer_asset, payee_asset, mint) = (k(), k(), k());
    let escrow = b.pda.holdback_escrow(&payee_asset, &mint);
    let base = |funding: Funding, token_program: TokenProgram, amount: u64| Settlement {
        facilitator: k(),
        payer_signer: k(),
        payer_asset,
        payee_asset,
        policy_id: 3,
        deadline: 1_800_000_000,
        mint,
        decimals: 6,
        token_program,
        amount,
        source_token: k(),
        destination_token: k(),
        collection: k(),
        attestations: Attestations::default(),
        feedback: Feedback {
            payment_id_hash: [5; 32],
            score: 90,
            tag1: "x402".into(),
            tag2: String::new(),
            endpoint: "https://api.example/report".into(),
            feedback_uri: String::new(),
        },
        compute_budget: settle::ComputeBudget::default(),
        funding,
        approval: None,
        holdback: None,
    };
    let quote = |tier: u8, held: u64| Some(HoldbackQuote { tier, held, escrow });
    let wallet = Settlement {
        holdback: quote(2, 250),
        ..base(Funding::Wallet, TokenProgram::SplToken, 1_000)
    };
    let mut vault = Settlement {
        holdback: quote(1, 100),
        attestations: Attestations {
            payer: Some(k()),
            payee: Some(k()),
            payee_list: Some(k()),
        },
        compute_budget: settle::ComputeBudget {
            unit_limit: Some(300_000),
            unit_price_micro_lamports: Some(1_000),
        },
        ..base(Funding::Vault, TokenProgram::Token2022, 5_000)
    };
    vault.approval = Some(ApprovalUse {
        address: b.pda.approval(&vault.approval_terms()),
        rent_payer: k(),
    });
    let nothing_held = Settlement {
        holdback: quote(4, 0),
        ..base(Funding::Wallet, TokenProgram::SplToken, 1_000)
    };
    let unheld = base(Funding::Wallet, TokenProgram::SplToken, 1_000);
    let settlements: Vec<Value> = [&wallet, &vault, &nothing_held, &unheld]
        .into_iter()
        .map(|t| {
            let ixs = settle::compose(b, t, AtomicityEnforced::TRUE).unwrap();
            let held = t.holdback.map_or(0, |h| h.held);
            assert_eq!(
                ixs.len(),
                usize::from(t.compute_budget.unit_limit.is_some())
                    + usize::from(t.compute_budget.unit_price_micro_lamports.is_some())
                    + if held != 0 { 4 } else { 3 }
            );
            let opt = |a: Option<Pubkey>| a.map(|a| a.to_string());
            json!({
                "facilitator": t.facilitator.to_string(),
                "payerSigner": t.payer_signer.to_string(),
                "payerAsset": t.payer_asset.to_string(),
                "payeeAsset": t.payee_asset.to_string(),
                "policyId": t.policy_id,
                "deadline": t.deadline.to_string(),
                "mint": t.mint.to_string(),
                "decimals": t.decimals,
                "tokenProgram": t.token_program.id().to_string(),
                "amount": t.amount.to_string(),
                "sourceToken": t.source_token.to_string(),
                "destinationToken": t.destination_token.to_string(),
                "collection": t.collection.to_string(),
                "attestations": {
                    "payer": opt(t.attestations.payer),
                    "payee": opt(t.attestations.payee),
                    "payeeList": opt(t.attestations.payee_list),
                },
                "paymentIdHash": hex(&t.feedback.payment_id_hash),
                "score": t.feedback.score,
                "tag1": t.feedback.tag1,
                "tag2": t.feedback.tag2,
                "endpoint": t.feedback.endpoint,
                "feedbackUri": t.feedback.feedback_uri,
                "funding": t.funding,
                "computeBudget": {
                    "unitLimit": t.compute_budget.unit_limit,
                    "unitPriceMicroLamports": t.compute_budget.unit_price_micro_lamports.map(|p| p.to_string()),
                },
                "approval": t.approval.map(|a| json!({
                    "address": a.address.to_string(),
                    "rentPayer": a.rent_payer.to_string(),
                })),
                "holdback": t.holdback.map(|h| json!({
                    "tier": h.tier,
                    "held": h.held.to_string(),
                    "escrow": h.escrow.to_string(),
                })),
                "instructions": ixs.iter().map(instruction_json).collect::<Vec<_>>(),
            })
        })
        .collect();
    // A share of the whole amount (or more) is refused, by the field's name.
    let refused: Vec<Value> = [1_000u64, 1_001]
        .into_iter()
        .map(|held| {
            let t = Settlement {
                holdback: quote(2, held),
                ..wallet.clone()
            };
            match settle::compose(b, &t, AtomicityEnforced::TRUE) {
                Err(ClientError::InvalidInput { field, .. }) => {
                    json!({ "settlement": 0, "held": held.to_string(), "field": field })
                }
                other => panic!("a share of {held} of 1 000 composed: {other:?}"),
            }
        })
        .collect();
    json!({ "settlements": settlements, "refused": refused })
}

/// A held payment as the fixture writes it (the TypeScript SDK's `HeldPayment`).
fn held_payment_json(h: &HeldPayment) -> Value {
    let releasable = [0i64, h.hold_until, h.arbitration_ends, i64::MAX]
        .map(|now| json!([now.to_string(), h.releasable_at(now)]));
    json!({
        "facilitator": h.facilitator.to_string(),
        "paymentIdHash": hex(&h.payment_id_hash),
        "payeeAsset": h.payee_asset.to_string(),
        "payerWallet": h.payer_wallet.to_string(),
        "mint": h.mint.to_string(),
        "tokenProgram": h.token_program.to_string(),
        "escrow": h.escrow.to_string(),
        "recipient": h.recipient.to_string(),
        "arbiter": h.arbiter.to_string(),
        "held": h.held.to_string(),
        "holdUntil": h.hold_until.to_string(),
        "state": h.state.name(),
        "disputed": h.disputed,
        "arbitrationEnds": h.arbitration_ends.to_string(),
        // Whether anyone may release it at these times, on both sides.
        "releasable": releasable,
    })
}

/// Payment logs as the gate writes them (held by a key arbiter, disputed before one, disputed
/// before an arbiter set; then accounts that hold no share) with what `HeldPayment::from_log_data`
/// reads of each, and every holdback instruction the Rust SDK builds from those held payments.
fn holdback_fixture(b: &Builder) -> Value {
    let k = Pubkey::new_unique;
    let (facilitator, payee_asset, payer_wallet, mint) = (k(), k(), k(), k());
    let (recipient, payer_other, key_arbiter) = (k(), k(), k());
    let mut members = vec![k(), k(), k()];
    members.sort();
    let set = b.pda.arbiter_set(2, &members);
    let spl = TokenProgram::SplToken.id();
    let token_2022 = TokenProgram::Token2022.id();
    let log = |pid: u8| FeedbackLog {
        facilitator,
        payment_id_hash: [pid; 32],
        payee_asset,
        payer_wallet,
        mint,
        amount: 1_000,
        value_decimals: 6,
        score: 90,
        slot: 3,
        created_at: 1_700_000_000,
        deadline: 1_700_000_060,
    };
    let bytes = |l: &FeedbackLog, share: Option<&HeldShare>| {
        let mut data = Vec::new();
        l.try_serialize(&mut data).unwrap();
        if let Some(share) = share {
            data.resize(FeedbackLog::space(true), 0);
            FeedbackLog::write_held_share(&mut data, share).unwrap();
        }
        data
    };
    let share = |arbiter: Pubkey, state: HoldState| HeldShare {
        escrow: b.pda.holdback_escrow(&payee_asset, &mint),
        recipient,
        arbiter,
        payer_other,
        held: 250,
        hold_until: 1_700_086_400,
        state,
        arbitration_ends: if state == HoldState::Disputed {
            1_700_604_800
        } else {
            0
        },
        dispute_feedback_index: if state == HoldState::Disputed { 5 } else { 0 },
        dispute_seal_hash: [3; 32],
    };
    let held_data = bytes(&log(1), Some(&share(key_arbiter, HoldState::Held)));
    let mut bad_state = held_data.clone();
    bad_state[FeedbackLog::HELD_AT + 144] = 7; // past HoldState's last variant
    let logs = [
        (held_data, spl),
        (
            bytes(&log(2), Some(&share(key_arbiter, HoldState::Disputed))),
            token_2022,
        ),
        (bytes(&log(3), Some(&share(set, HoldState::Disputed))), spl),
        (bytes(&log(4), None), spl),
        (bad_state, spl),
        (vec![0; FeedbackLog::space(true)], spl),
    ];
    let read: Vec<Option<HeldPayment>> = logs
        .iter()
        .map(|(data, tp)| HeldPayment::from_log_data(data, *tp))
        .collect();
    assert!(read[..3].iter().all(Option::is_some) && read[3..].iter().all(Option::is_none));
    let (held, disputed, before_set) = (read[0].unwrap(), read[1].unwrap(), read[2].unwrap());
    let (payer, payee_signer, to_payer, to_recipient) = (k(), k(), k(), k());
    let unsorted = vec![members[2], members[0], members[1]];
    let ops: Vec<(Value, Instruction)> = vec![
        (
            json!({ "op": "openHoldbackEscrow", "payer": payer.to_string(), "payeeAsset": payee_asset.to_string(), "mint": mint.to_string(), "tokenProgram": token_2022.to_string() }),
            b.open_holdback_escrow(&payer, &payee_asset, &mint, &token_2022),
        ),
        (
            json!({ "op": "releaseHoldback", "log": 0, "to": to_recipient.to_string() }),
            b.release_holdback(&held, &to_recipient),
        ),
        (
            json!({ "op": "releaseHoldback", "log": 1, "to": to_recipient.to_string() }),
            b.release_holdback(&disputed, &to_recipient),
        ),
        (
            json!({ "op": "refundHoldback", "log": 0, "payeeSigner": payee_signer.to_string(), "to": to_payer.to_string() }),
            b.refund_holdback(&payee_signer, &held, &to_payer),
        ),
        (
            json!({ "op": "refundHoldback", "log": 1, "payeeSigner": payee_signer.to_string(), "to": to_payer.to_string() }),
            b.refund_holdback(&payee_signer, &disputed, &to_payer),
        ),
        (
            json!({ "op": "arbitrateHoldback", "log": 1, "uphold": true, "to": to_payer.to_string(), "members": [] }),
            b.arbitrate_holdback(&disputed, true, &to_payer, &[]),
        ),
        (
            json!({ "op": "arbitrateHoldback", "log": 2, "uphold": false, "to": to_recipient.to_string(), "members": [members[0].to_string(), members[2].to_string()] }),
            b.arbitrate_holdback(&before_set, false, &to_recipient, &[members[0], members[2]]),
        ),
        (
            json!({ "op": "createArbiterSet", "payer": payer.to_string(), "threshold": 2, "members": unsorted.iter().map(|m| m.to_string()).collect::<Vec<_>>() }),
            b.create_arbiter_set(&payer, 2, &unsorted),
        ),
        (
            json!({ "op": "disputePayment", "rentPayer": facilitator.to_string(), "facilitator": facilitator.to_string(), "payer": payer_wallet.to_string(), "collection": recipient.to_string(), "paymentIdHash": hex(&[2; 32]), "payeeAsset": payee_asset.to_string(), "reasonHash": hex(&[4; 32]), "feedbackUri": "ipfs://dispute" }),
            b.dispute_payment(
                &facilitator,
                &facilitator,
                &payer_wallet,
                &recipient,
                [2; 32],
                &payee_asset,
                [4; 32],
                "ipfs://dispute".into(),
            ),
        ),
    ];
    assert_eq!(
        ops[7].1.accounts[1].pubkey, set,
        "the set of the sorted members"
    );
    json!({
        "logs": logs.iter().zip(&read).map(|((data, tp), h)| json!({
            "data": hex(data),
            "tokenProgram": tp.to_string(),
            "held": h.as_ref().map(held_payment_json),
            // The share as /receipt shows it.
            "view": trust_gate_client::holdback::HoldbackView::from_log_data(data),
        })).collect::<Vec<_>>(),
        "instructions": ops.into_iter().map(|(inputs, ix)| json!({
            "inputs": inputs,
            "instruction": instruction_json(&ix),
        })).collect::<Vec<_>>(),
    })
}

#[test]
fn the_typescript_sdks_pure_parts_pass_their_tests() {
    let dir = crate::node::build_sdk();
    crate::node::node_test(&dir, "test/unit.test.mjs", &json!({}));
    // No import circle among the SDK's modules, type-only imports included (madge).
    crate::node::node_test(&dir, "test/circles.test.mjs", &json!({}));
}
