//! The TypeScript SDK (`packages/sdk`) against the Rust SDK: the package is built with its own
//! `tsc` and its tests run on Node's test runner, fed what the Rust SDK computes for the same
//! inputs.

use anchor_lang::prelude::Pubkey;
use anchor_lang::AccountSerialize;
use gate::holdback::{HeldShare, HoldState};
use gate::state::{FeedbackLog, GatedSubscription};
use serde_json::{json, Value};
use solana_sdk::instruction::Instruction;
use trust_gate_client::decode::hex;
use trust_gate_client::holdback::{HeldPayment, HoldbackQuote};
use trust_gate_client::instructions::{ApprovalUse, Attestations, FeedbackDetails, Subscription};
use trust_gate_client::pda::Pdas;
use trust_gate_client::settle::{
    self, AtomicityEnforced, Feedback, Funding, Settlement, TokenProgram,
};
use trust_gate_client::subscriptions::{self, RecurringDelegation, RecurringTerms};
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
        // `collection` stands for a delegation here: any key derives.
        ("gatedSubscription", p.gated_subscription(&collection)),
        (
            "pullDelegate",
            p.pull_delegate(&asset, &requester, &facilitator),
        ),
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
            "subscriptions": subscriptions_fixture(&b),
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

/// A gated subscription as the Rust SDK builds it, with its inputs: the Subscriptions
/// program's addresses; delegations' bytes with what `RecurringDelegation::read`, `period_at`
/// and `available_at` make of them and their pulls' payment ids; the gate's record; and every
/// instruction of a subscription's life, the gate's and the program's direct ones.
fn subscriptions_fixture(b: &Builder) -> Value {
    let k = Pubkey::new_unique;
    let (delegator, payer_asset, payee_asset, facilitator, mint) = (k(), k(), k(), k(), k());
    let (destination, collection) = (k(), k());
    // A nonce past 2^53, so that a number where a bigint belongs shows.
    let terms = RecurringTerms {
        nonce: (1 << 60) + 7,
        amount_per_period: 5_000_000,
        period_length_s: 2_592_000,
        start_ts: 1_800_000_000,
        expiry_ts: 1_900_000_000,
    };
    let s = Subscription {
        delegator,
        payer_asset,
        payee_asset,
        facilitator,
        mint,
        token_program: TokenProgram::Token2022,
        policy_id: 258,
        terms,
    };
    let spl = Subscription {
        token_program: TokenProgram::SplToken,
        terms: RecurringTerms {
            nonce: 0,
            start_ts: 0,
            ..terms
        },
        ..s
    };
    let delegate = b.subscription_delegate(&s);
    let delegation = b.subscription_delegation(&s);
    assert_eq!(
        delegation,
        subscriptions::delegation(&delegator, &mint, &delegate, terms.nonce)
    );
    let record = GatedSubscription {
        payer_asset,
        payee_asset,
        facilitator,
        delegation,
        delegator,
        policy_id: s.policy_id,
        delegate_bump: 254,
        created_at: 1_800_000_000,
        bump: 255,
    };
    let mut record_bytes = Vec::new();
    record.try_serialize(&mut record_bytes).unwrap();
    // The authority's init_id (a slot) the delegation was made under.
    let init_id = 345_678_901i64;
    // The delegation a period and a pull after `subscribe`, then its edges: no expiry, a zero
    // and a huge length, an expiry at the end of its current period.
    let pulled = RecurringDelegation {
        delegator,
        delegatee: delegate,
        payer: delegator,
        init_id,
        subscription_authority: subscriptions::subscription_authority(&delegator, &mint),
        mint,
        current_period_start_ts: terms.start_ts + 2_592_000,
        period_length_s: terms.period_length_s,
        expiry_ts: terms.expiry_ts,
        amount_per_period: terms.amount_per_period,
        amount_pulled_in_period: 1_250_000,
    };
    let delegations = [
        pulled,
        RecurringDelegation {
            expiry_ts: 0,
            ..pulled
        },
        RecurringDelegation {
            period_length_s: 0,
            ..pulled
        },
        RecurringDelegation {
            period_length_s: u64::MAX,
            ..pulled
        },
        RecurringDelegation {
            expiry_ts: pulled.current_period_start_ts + 2_592_000,
            ..pulled
        },
    ];
    let feedback = FeedbackDetails {
        score: 80,
        tag1: "subscription".into(),
        tag2: "monthly".into(),
        endpoint: "https://api.example/feed".into(),
        feedback_uri: "ipfs://pull".into(),
    };
    let attestations = Attestations {
        payer: Some(k()),
        payee: Some(k()),
        payee_list: Some(k()),
    };
    let approval = ApprovalUse {
        address: k(),
        rent_payer: k(),
    };
    let mut approved_pull = b.gate_pull(
        &record,
        &delegations[4],
        &destination,
        TokenProgram::SplToken,
        &collection,
        1_000_000,
        feedback.clone(),
        attestations,
    );
    approval.append_to(&mut approved_pull);
    // An amount past 2^53.
    let big = (1u64 << 53) + 1;
    let ops: Vec<(Value, Instruction)> = vec![
        (
            json!({ "op": "subscribe", "subscription": subscription_json(&s) }),
            b.subscribe(&s),
        ),
        (
            json!({ "op": "subscribe", "subscription": subscription_json(&spl) }),
            b.subscribe(&spl),
        ),
        (
            pull_json(
                0,
                &destination,
                &collection,
                TokenProgram::Token2022,
                big,
                Attestations::default(),
                None,
            ),
            b.gate_pull(
                &record,
                &delegations[0],
                &destination,
                TokenProgram::Token2022,
                &collection,
                big,
                feedback.clone(),
                Attestations::default(),
            ),
        ),
        (
            pull_json(
                4,
                &destination,
                &collection,
                TokenProgram::SplToken,
                1_000_000,
                attestations,
                Some(approval),
            ),
            approved_pull,
        ),
        (json!({ "op": "unsubscribe" }), b.unsubscribe(&record)),
        (
            json!({ "op": "initSubscriptionAuthority", "user": delegator.to_string(), "mint": mint.to_string(), "tokenProgram": TokenProgram::SplToken.id().to_string() }),
            subscriptions::init_subscription_authority(&delegator, &mint, TokenProgram::SplToken),
        ),
        (
            json!({ "op": "createRecurringDelegation", "delegator": delegator.to_string(), "mint": mint.to_string(), "delegatee": delegate.to_string(), "terms": terms_json(&terms), "initId": init_id.to_string() }),
            subscriptions::create_recurring_delegation(
                &delegator, &mint, &delegate, &terms, init_id,
            ),
        ),
        (
            json!({ "op": "transferRecurring", "address": delegation.to_string(), "delegation": 0, "receiver": destination.to_string(), "tokenProgram": TokenProgram::Token2022.id().to_string(), "amount": big.to_string() }),
            subscriptions::transfer_recurring(
                &delegation,
                &delegations[0],
                &destination,
                TokenProgram::Token2022,
                big,
            ),
        ),
        (
            json!({ "op": "revokeDelegation", "delegator": delegator.to_string(), "address": delegation.to_string() }),
            subscriptions::revoke_delegation(&delegator, &delegation),
        ),
        (
            json!({ "op": "revokeSubscriptionAuthority", "user": delegator.to_string(), "mint": mint.to_string(), "tokenProgram": TokenProgram::Token2022.id().to_string() }),
            subscriptions::revoke_subscription_authority(
                &delegator,
                &mint,
                TokenProgram::Token2022,
            ),
        ),
        (
            json!({ "op": "closeSubscriptionAuthority", "user": delegator.to_string(), "mint": mint.to_string() }),
            subscriptions::close_subscription_authority(&delegator, &mint),
        ),
    ];
    json!({
        "programId": subscriptions::PROGRAM_ID.to_string(),
        "eventAuthority": subscriptions::EVENT_AUTHORITY.to_string(),
        "subscription": subscription_json(&s),
        "subscriptionAuthority": subscriptions::subscription_authority(&delegator, &mint).to_string(),
        "delegate": delegate.to_string(),
        "delegation": delegation.to_string(),
        "record": hex(&record_bytes),
        "delegations": delegations.iter().map(|d| json!({
            "data": hex(&recurring_delegation_bytes(d)),
            "read": recurring_delegation_json(d),
            "paymentIdHash": hex(&gate::subscription::payment_id_hash(&delegation, d)),
            "periods": periods_json(d),
        })).collect::<Vec<_>>(),
        "feedback": {
            "score": feedback.score,
            "tag1": feedback.tag1,
            "tag2": feedback.tag2,
            "endpoint": feedback.endpoint,
            "feedbackUri": feedback.feedback_uri,
        },
        "instructions": ops.into_iter().map(|(inputs, ix)| json!({
            "inputs": inputs,
            "instruction": instruction_json(&ix),
        })).collect::<Vec<_>>(),
    })
}

/// A `gate_pull`'s inputs as the fixture writes them: the delegation by its index in the
/// fixture's `delegations`, the approval appended after the instruction when there is one.
fn pull_json(
    delegation: usize,
    destination: &Pubkey,
    collection: &Pubkey,
    token_program: TokenProgram,
    amount: u64,
    att: Attestations,
    approval: Option<ApprovalUse>,
) -> Value {
    let opt = |a: Option<Pubkey>| a.map(|a| a.to_string());
    json!({
        "op": "gatePull",
        "delegation": delegation,
        "destination": destination.to_string(),
        "tokenProgram": token_program.id().to_string(),
        "collection": collection.to_string(),
        "amount": amount.to_string(),
        "attestations": {
            "payer": opt(att.payer),
            "payee": opt(att.payee),
            "payeeList": opt(att.payee_list),
        },
        "approval": approval.map(|a| json!({
            "address": a.address.to_string(),
            "rentPayer": a.rent_payer.to_string(),
        })),
    })
}

/// Recurring terms as the fixture writes them (integers as decimal strings).
fn terms_json(t: &RecurringTerms) -> Value {
    json!({
        "nonce": t.nonce.to_string(),
        "amountPerPeriod": t.amount_per_period.to_string(),
        "periodLengthS": t.period_length_s.to_string(),
        "startTs": t.start_ts.to_string(),
        "expiryTs": t.expiry_ts.to_string(),
    })
}

/// A subscription as the fixture writes it (the TypeScript SDK's `Subscription`).
fn subscription_json(s: &Subscription) -> Value {
    json!({
        "delegator": s.delegator.to_string(),
        "payerAsset": s.payer_asset.to_string(),
        "payeeAsset": s.payee_asset.to_string(),
        "facilitator": s.facilitator.to_string(),
        "mint": s.mint.to_string(),
        "tokenProgram": s.token_program.id().to_string(),
        "policyId": s.policy_id,
        "terms": terms_json(&s.terms),
    })
}

/// A delegation's account data at the program's offsets (what `RecurringDelegation::read`
/// reads back).
fn recurring_delegation_bytes(d: &RecurringDelegation) -> Vec<u8> {
    let mut data = vec![0u8; RecurringDelegation::LEN];
    data[0] = trust_gate_program_common::subscriptions::discriminator::RECURRING_DELEGATION;
    data[3..35].copy_from_slice(d.delegator.as_ref());
    data[35..67].copy_from_slice(d.delegatee.as_ref());
    data[67..99].copy_from_slice(d.payer.as_ref());
    data[99..107].copy_from_slice(&d.init_id.to_le_bytes());
    data[107..139].copy_from_slice(d.subscription_authority.as_ref());
    data[139..171].copy_from_slice(d.mint.as_ref());
    data[171..179].copy_from_slice(&d.current_period_start_ts.to_le_bytes());
    data[179..187].copy_from_slice(&d.period_length_s.to_le_bytes());
    data[187..195].copy_from_slice(&d.expiry_ts.to_le_bytes());
    data[195..203].copy_from_slice(&d.amount_per_period.to_le_bytes());
    data[203..211].copy_from_slice(&d.amount_pulled_in_period.to_le_bytes());
    assert_eq!(RecurringDelegation::read(&data), Some(*d));
    data
}

/// A delegation as the fixture writes it (the TypeScript SDK's `RecurringDelegation`,
/// integers as decimal strings).
fn recurring_delegation_json(d: &RecurringDelegation) -> Value {
    json!({
        "delegator": d.delegator.to_string(),
        "delegatee": d.delegatee.to_string(),
        "payer": d.payer.to_string(),
        "initId": d.init_id.to_string(),
        "subscriptionAuthority": d.subscription_authority.to_string(),
        "mint": d.mint.to_string(),
        "currentPeriodStartTs": d.current_period_start_ts.to_string(),
        "periodLengthS": d.period_length_s.to_string(),
        "expiryTs": d.expiry_ts.to_string(),
        "amountPerPeriod": d.amount_per_period.to_string(),
        "amountPulledInPeriod": d.amount_pulled_in_period.to_string(),
    })
}

/// `[now, period start, pulled, available]` at the times around `d`'s period and expiry and
/// at the ends of i64, on both sides.
fn periods_json(d: &RecurringDelegation) -> Vec<Value> {
    let (start, length) = (d.current_period_start_ts, 2_592_000i64);
    [
        i64::MIN,
        0,
        start - 1,
        start,
        start + length - 1,
        start + length,
        start + 3 * length + 5,
        d.expiry_ts - 1,
        d.expiry_ts,
        d.expiry_ts + 1,
        i64::MAX,
    ]
    .into_iter()
    .map(|now| {
        let (period_start, pulled) = d.period_at(now);
        json!([
            now.to_string(),
            period_start.to_string(),
            pulled.to_string(),
            d.available_at(now).to_string(),
        ])
    })
    .collect()
}

#[test]
fn the_typescript_sdks_pure_parts_pass_their_tests() {
    let dir = crate::node::build_sdk();
    crate::node::node_test(&dir, "test/unit.test.mjs", &json!({}));
    crate::node::node_test(&dir, "test/subscriptions.test.mjs", &json!({}));
    // No import circle among the SDK's modules, type-only imports included (madge).
    crate::node::node_test(&dir, "test/circles.test.mjs", &json!({}));
}
