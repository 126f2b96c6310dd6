//! The TypeScript SDK (`packages/sdk`) against the running services: a seeded localnet, the
//! Rust facilitator and the Rust demo on loopback. Rust computes what the TypeScript side
//! must equal (decisions, composed settlements, builders, payment-channel instructions), then
//! the package's Node tests run against the same servers: the SDK's decisions and
//! settlements, `@x402/fetch` paying the demo with the trust-gate scheme, an `@x402/express`
//! resource server settling through the facilitator, a stock exact-scheme client refused
//! cleanly, and the Express mount answering as the facilitator does. Then a payment the payer's
//! policy holds a share of (docs/holdback.md): challenge messages with holdback terms signed as
//! the Rust SDK signs them, the held settlement composed from a challenge of a second demo (the
//! low-tier payee's), paid by `@x402/fetch` to that demo and through an `@x402/express` server.

use crate::node;
use crate::services::{self, Services};
use serde_json::{json, Value};
use solana_sdk::hash::Hash;
use solana_sdk::instruction::Instruction;
use solana_sdk::signer::Signer;
use std::path::PathBuf;
use trust_gate_client::decode::{hex, DecisionView};
use trust_gate_client::settle;
use trust_gate_client::simulate::{self, Caller, PaymentQuery};
use trust_gate_client::Overrides;
use trust_gate_migrations::{demo, DemoWorld};
use trust_gate_pay::exact as pay;
use trust_gate_x402::holdback::HoldbackTerms;
use trust_gate_x402::{self as x402, GateExtension, PaymentRequired, PaymentRequirements};

/// Runs the package's Node test `file` off the async runtime, so that the servers keep
/// answering while it runs.
async fn node_test(dir: PathBuf, file: &'static str, fixture: Value) -> String {
    tokio::task::spawn_blocking(move || node::node_test(&dir, file, &fixture))
        .await
        .expect("the node run finishes")
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

/// A challenge of the demo at `demo_url` for `payer` (its agent asset).
async fn challenge(
    s: &Services,
    demo_url: &str,
    payer: &solana_sdk::pubkey::Pubkey,
) -> PaymentRequired {
    let r = s
        .http
        .get(format!("{demo_url}/protected"))
        .header(trust_gate_demo::X_DEMO_PAYER_AGENT, payer.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 402);
    x402::decode_header(
        x402::PAYMENT_REQUIRED,
        &services::header(&r, x402::PAYMENT_REQUIRED),
    )
    .unwrap()
}

/// What the Rust SDK composes for a challenge of the demo at `demo_url` paid by `label`'s key:
/// the instructions and the v0 message (with the facilitator's lookup tables and a fixed
/// blockhash).
async fn composed(
    s: &Services,
    demo_url: &str,
    label: &str,
    payer: &demo::DemoAgent,
    budget: settle::ComputeBudget,
) -> Value {
    let required = challenge(s, demo_url, &payer.asset()).await;
    let signer = payer.signer();
    let mut prepared = pay::prepare(
        &s.env.rpc,
        &required,
        &signer.pubkey(),
        Overrides::default(),
    )
    .await
    .unwrap();
    // As the paying clients do: a unit limit given replaces the SDK's, a price is added.
    if budget.unit_limit.is_some() {
        prepared.settlement.compute_budget.unit_limit = budget.unit_limit;
    }
    prepared.settlement.compute_budget.unit_price_micro_lamports = budget.unit_price_micro_lamports;
    let ixs = prepared.instructions().unwrap();
    let blockhash = Hash::new_from_array([7; 32]);
    let tx =
        settle::transaction(&prepared.fee_payer, &ixs, &prepared.tables, blockhash, &[]).unwrap();
    json!({
        "label": label,
        "requirements": required.accepts[0],
        "resourceUrl": required.resource.url,
        "computeBudget": {
            "unitLimit": budget.unit_limit,
            "unitPriceMicroLamports": budget.unit_price_micro_lamports.map(|p| p.to_string()),
        },
        "instructions": ixs.iter().map(instruction_json).collect::<Vec<_>>(),
        "blockhash": blockhash.to_string(),
        "message": hex(&tx.message.serialize()),
    })
}

/// Builders of the Rust SDK for fixed inputs (keys from the demo world), which the TypeScript
/// builders must equal instruction for instruction.
fn builders(s: &Services) -> Value {
    use trust_gate_client::instructions::{capability_hash, ed25519_verify, Claim};
    let (w, b) = (&s.env.world, &s.env.b);
    let owner = w.payer(3).unwrap().owner.pubkey();
    let subject = w.payer(0).unwrap().asset();
    let capability = capability_hash("kyc.tier-1.v1");
    let claim = Claim {
        subject,
        capability,
        payload_hash: [1; 32],
        uri_hash: [2; 32],
        expires_at_slot: 1_000_000,
    };
    let ixs = [
        b.register_namespace(
            &owner,
            "trust-gate.example.v1",
            "1",
            "https://schema.example/v1",
        ),
        b.register_attestor(&w.attestor.pubkey(), "https://attestor.example"),
        b.request_validation(&owner, &subject, &capability, [2; 32], 500_000),
        ed25519_verify(&w.attestor, &claim.message()),
        b.respond_to_validation(&w.attestor.pubkey(), &claim),
        b.revoke_validation(&w.attestor.pubkey(), &subject, &capability, [3; 32]),
        b.register_agent_via_cpi(
            &owner,
            &w.service_key.pubkey(),
            &s.env.collection,
            "https://agent.example".into(),
        ),
    ]
    .into_iter()
    // The registry's agent wallet flow: the Ed25519 check, then set_agent_wallet.
    .chain(b.set_agent_wallet(&owner, &subject, &w.attestor, 1_700_000_000))
    .chain(policy_builders(s))
    .collect::<Vec<_>>();
    let r = b.registration_accounts(&s.env.collection, &w.service_key.pubkey());
    json!({
        "owner": "payer-tier-3",
        "attestor": "attestor",
        "newAsset": "service-key",
        "subject": subject.to_string(),
        "collection": s.env.collection.to_string(),
        "mint": w.mint().to_string(),
        "service": w.service.asset().to_string(),
        "removed": w.payer(1).unwrap().asset().to_string(),
        "instructions": ixs.iter().map(instruction_json).collect::<Vec<_>>(),
        "registrationAccounts": {
            "rootConfig": r.root_config.to_string(),
            "registryConfig": r.registry_config.to_string(),
            "agentAccount": r.agent_account.to_string(),
            "atomConfig": r.atom_config.to_string(),
            "atomStats": r.atom_stats.to_string(),
        },
    })
}

/// The policy builders for fixed inputs, which the Node test repeats: a policy without limits
/// and one with every limit set (the list account named) and an approval threshold, of the
/// tier-0 payer, created by the tier-3 payer's owner with the attestor as a second member, and
/// a list edit.
fn policy_builders(s: &Services) -> Vec<Instruction> {
    use policy_vault::state::{funding, PolicyParams, PolicyRules};
    let (w, b) = (&s.env.world, &s.env.b);
    let owner = w.payer(3).unwrap().owner.pubkey();
    let cosigners = [w.attestor.pubkey()];
    let asset = w.payer(0).unwrap().asset();
    let params = PolicyParams {
        kinds: 3,
        gate_mode: 1,
        mint: w.mint(),
        per_tx_cap: 1,
        daily_cap: 2,
        weekly_cap: 3,
        velocity_window_secs: 0,
        velocity_max_in_window: 0,
        tier0_decay_bps: 0,
        min_counterparty_tier: 0,
        max_counterparty_risk: 255,
        min_counterparty_confidence: 0,
        unrated_treatment: 1,
        required_capability: [0; 32],
        accepted_attestors: [Default::default(); 2],
        funding: funding::WALLET,
    };
    let mut payees = [Default::default(); 4];
    payees[0] = w.service.asset();
    // An approval of 42 to the service under policy 9, then its close.
    let terms = policy_vault::state::ApprovalTerms {
        payer_asset: asset,
        payee_asset: w.service.asset(),
        mint: w.mint(),
        amount: 42,
        policy_id: 9,
    };
    let rules = b.payee_list_rules(
        &asset,
        9,
        PolicyRules {
            payee_list_mode: 1,
            payees,
            payee_list: Default::default(),
            not_before: 10,
            not_after: 20,
            monthly_cap: 4,
            lifetime_cap: 5,
            payee_daily_cap: 6,
        },
    );
    vec![
        b.init_policy(
            &owner,
            &cosigners,
            &asset,
            8,
            params.clone(),
            Default::default(),
            0,
        ),
        b.init_policy(&owner, &cosigners, &asset, 9, params, rules, 7),
        b.edit_payee_list(
            &owner,
            &cosigners,
            &asset,
            9,
            vec![w.service.asset()],
            vec![w.payer(1).unwrap().asset()],
        ),
        b.approve_payment(&owner, &cosigners, terms, 1_800_000_000),
        b.close_approval(&cosigners[0], &b.pda.approval(&terms), &owner),
    ]
}

/// The payment-channel builders for fixed inputs, which the Node test repeats: a channel of
/// the tier-3 payer's owner held by the facilitator (payee and rent payer), whose vouchers the
/// attestor's key signs, with two shares; every instruction of its life (a top-up under the
/// token program, a withdrawal under Token-2022), the gate's open (without and with optional
/// accounts), close and record close; its address, escrow, payment id, distribution and
/// voucher message; and a channel account decoded (amounts past 2^53, a negative time).
fn channel_builders(s: &Services) -> Value {
    use anchor_lang::AccountSerialize;
    use gate::state::ChannelRecord;
    use trust_gate_client::channels::{self, Channel, Distribute, Open, Split};
    use trust_gate_client::instructions::{Attestations, FeedbackDetails};
    use trust_gate_client::token::TokenProgram;
    let (w, b) = (&s.env.world, &s.env.b);
    let payer = w.payer(3).unwrap();
    let facilitator = w.facilitator.pubkey();
    let splits = vec![
        Split {
            recipient: w.service.owner.pubkey(),
            bps: 2_500,
        },
        Split {
            recipient: w.payer(0).unwrap().owner.pubkey(),
            bps: 1_000,
        },
    ];
    let open = Open {
        payer: payer.owner.pubkey(),
        rent_payer: facilitator,
        payee: facilitator,
        mint: w.mint(),
        token_program: TokenProgram::SplToken,
        authorized_signer: w.attestor.pubkey(),
        salt: 7,
        deposit: 1_000_000,
        grace_period: 600,
        open_slot: 123_456,
        splits: splits.clone(),
    };
    let (channel, bump) = channels::channel_address(
        &open.payer,
        &open.payee,
        &open.mint,
        &open.authorized_signer,
        open.salt,
        open.open_slot,
    );
    assert_eq!(channel, open.channel());
    let record = ChannelRecord {
        channel,
        payer_asset: payer.asset(),
        payee_asset: w.service.asset(),
        payer_signer: payer.owner.pubkey(),
        facilitator,
        mint: w.mint(),
        decimals: 6,
        authorized_signer: w.attestor.pubkey(),
        policy_id: demo::POLICY_ID,
        deposit: 1_000_000,
        open_slot: 123_456,
        day_index: 20_000,
        week_index: 2_857,
        month_index: 657,
        created_at: 1_700_000_000,
        bump: 254,
    };
    let mut record_bytes = Vec::new();
    record.try_serialize(&mut record_bytes).unwrap();
    let feedback = FeedbackDetails {
        score: 80,
        tag1: "channel".into(),
        tag2: "x402".into(),
        endpoint: "https://api.example/v1".into(),
        feedback_uri: "https://feedback.example/1".into(),
    };
    let full = Attestations {
        payer: Some(w.payer(1).unwrap().asset()),
        payee: Some(w.service_key.pubkey()),
        payee_list: Some(w.payer(0).unwrap().asset()),
    };
    let gate_open = |att: Attestations| {
        b.gate_channel_open(
            &payer.owner.pubkey(),
            &payer.asset(),
            &w.service.asset(),
            &facilitator,
            &w.mint(),
            1_000_000,
            demo::POLICY_ID,
            &channel,
            att,
        )
    };
    let ixs = [
        gate_open(Attestations::default()),
        gate_open(full),
        open.instruction(),
        channels::voucher(&w.attestor, &channel, 250_000, 1_700_000_600),
        channels::voucher(&w.attestor, &channel, u64::MAX, -1),
        channels::settle(&channel),
        channels::settle_and_seal(&facilitator, &channel, true),
        channels::settle_and_seal(&facilitator, &channel, false),
        channels::top_up(
            &open.payer,
            &channel,
            &open.mint,
            TokenProgram::SplToken,
            u64::MAX - 1,
        ),
        channels::request_close(&open.payer, &channel),
        channels::seal(&channel),
        Distribute::of(&open).instruction(),
        channels::withdraw_payer(&open.payer, &channel, &open.mint, TokenProgram::Token2022),
        channels::reclaim(&channel, &facilitator),
        b.gate_channel_close(&record, &s.env.collection, feedback),
        b.close_channel_record(&channel, &facilitator),
    ];
    // A channel account: closing, amounts past 2^53 and a negative time.
    let mut data = vec![0u8; channels::CHANNEL_LEN];
    data[..4].copy_from_slice(&[1, 1, bump, 2]);
    for (at, v) in [
        (4, 7u64),
        (12, u64::MAX - 5),
        (20, (1u64 << 53) + 1),
        (28, 3),
        (36, 1_700_000_000),
        (44, (-5i64) as u64),
        (248, 123_456),
    ] {
        data[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }
    data[52..56].copy_from_slice(&600u32.to_le_bytes());
    data[56..88].copy_from_slice(&channels::distribution_hash(&splits));
    for (at, k) in [
        (88, open.payer),
        (120, open.payee),
        (152, open.authorized_signer),
        (184, open.mint),
        (216, open.rent_payer),
    ] {
        data[at..at + 32].copy_from_slice(k.as_ref());
    }
    let c = Channel::decode(&data).unwrap();
    json!({
        "payer": "payer-tier-3",
        "facilitator": "facilitator",
        "authorizedSigner": "attestor",
        "payerAsset": payer.asset().to_string(),
        "service": w.service.asset().to_string(),
        "mint": w.mint().to_string(),
        "collection": s.env.collection.to_string(),
        "policyId": demo::POLICY_ID,
        "splits": splits.iter().map(|s| json!({"recipient": s.recipient.to_string(), "bps": s.bps})).collect::<Vec<_>>(),
        "attestations": {
            "payer": full.payer.unwrap().to_string(),
            "payee": full.payee.unwrap().to_string(),
            "payeeList": full.payee_list.unwrap().to_string(),
        },
        "record": hex(&record_bytes),
        "programId": channels::PROGRAM_ID.to_string(),
        "treasuryOwner": channels::TREASURY_OWNER.to_string(),
        "eventAuthority": channels::event_authority().to_string(),
        "channel": channel.to_string(),
        "bump": bump,
        "escrow": open.escrow().to_string(),
        "channelRecord": b.pda.channel_record(&channel).to_string(),
        "paymentIdHash": hex(&gate::channel::payment_id_hash(&channel)),
        "distributionPreimage": hex(&channels::distribution_preimage(&splits)),
        "distributionHash": hex(&channels::distribution_hash(&splits)),
        "voucherMessage": hex(&channels::voucher_message(&channel, 250_000, 1_700_000_600)),
        "instructions": ixs.iter().map(instruction_json).collect::<Vec<_>>(),
        "account": hex(&data),
        "decoded": {
            "bump": c.bump,
            "status": format!("{:?}", c.status),
            "salt": c.salt.to_string(),
            "deposit": c.deposit.to_string(),
            "settled": c.settled.to_string(),
            "payoutWatermark": c.payout_watermark.to_string(),
            "closureStartedAt": c.closure_started_at.to_string(),
            "payerWithdrawnAt": c.payer_withdrawn_at.to_string(),
            "gracePeriod": c.grace_period,
            "distributionHash": hex(&c.distribution_hash),
            "payer": c.payer.to_string(),
            "payee": c.payee.to_string(),
            "authorizedSigner": c.authorized_signer.to_string(),
            "mint": c.mint.to_string(),
            "rentPayer": c.rent_payer.to_string(),
            "openSlot": c.open_slot.to_string(),
        },
    })
}

/// Settlements that use an approval on chain, for fixed inputs, which the Node test repeats:
/// the tier-3 payer pays the service 7 000 000 under the demo policy, from its wallet under
/// SPL Token and from its vault under Token-2022 with a compute budget; the approval of the
/// terms (its rent paid by the tier-0 payer's owner) ends the strict gate's accounts, after
/// the vault release's. And the gate's open of a channel with the approval of its deposit.
fn approval_builders(s: &Services) -> Value {
    use trust_gate_client::instructions::{ApprovalUse, Attestations};
    use trust_gate_client::settle::{Feedback, Funding, Settlement, TokenProgram};
    let (w, b) = (&s.env.world, &s.env.b);
    let payer = w.payer(3).unwrap();
    let member = w.payer(0).unwrap().owner.pubkey();
    let settlement = |funding: Funding, program: TokenProgram, budget: settle::ComputeBudget| {
        let mut t = Settlement {
            facilitator: w.facilitator.pubkey(),
            payer_signer: payer.owner.pubkey(),
            payer_asset: payer.asset(),
            payee_asset: w.service.asset(),
            policy_id: demo::POLICY_ID,
            deadline: 1_800_000_000,
            mint: w.mint(),
            decimals: demo::DECIMALS,
            token_program: program,
            amount: 7_000_000,
            source_token: program.associated_account(&payer.owner.pubkey(), &w.mint()),
            destination_token: program.associated_account(&w.service.owner.pubkey(), &w.mint()),
            collection: s.env.collection,
            attestations: Attestations::default(),
            feedback: Feedback {
                payment_id_hash: [4; 32],
                score: 90,
                tag1: "x402".into(),
                tag2: String::new(),
                endpoint: "https://api.example/v1".into(),
                feedback_uri: String::new(),
            },
            compute_budget: budget,
            funding,
            approval: None,
            holdback: None,
        };
        t.approval = Some(ApprovalUse {
            address: b.pda.approval(&t.approval_terms()),
            rent_payer: member,
        });
        let ixs =
            settle::compose(b, &t, trust_gate_client::AtomicityEnforced::TRUE).expect("composes");
        let approval = t.approval.expect("set above");
        // The approval and its rent payer, writable, after everything the gate had.
        let gate = &ixs[ixs.len() - 3];
        assert_eq!(
            gate.accounts[gate.accounts.len() - 2..],
            [
                solana_sdk::instruction::AccountMeta::new(approval.address, false),
                solana_sdk::instruction::AccountMeta::new(member, false),
            ]
        );
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
            "paymentIdHash": hex(&t.feedback.payment_id_hash),
            "score": t.feedback.score,
            "tag1": t.feedback.tag1,
            "tag2": t.feedback.tag2,
            "endpoint": t.feedback.endpoint,
            "feedbackUri": t.feedback.feedback_uri,
            "funding": t.funding,
            "computeBudget": {
                "unitLimit": budget.unit_limit,
                "unitPriceMicroLamports": budget.unit_price_micro_lamports.map(|p| p.to_string()),
            },
            "approval": {
                "address": approval.address.to_string(),
                "rentPayer": approval.rent_payer.to_string(),
            },
            "instructions": ixs.iter().map(instruction_json).collect::<Vec<_>>(),
        })
    };
    // The gated open of a channel of 1 000 000 (the channel builders' inputs) with the
    // approval of its deposit.
    let channel = trust_gate_client::channels::Open {
        payer: payer.owner.pubkey(),
        rent_payer: w.facilitator.pubkey(),
        payee: w.facilitator.pubkey(),
        mint: w.mint(),
        token_program: TokenProgram::SplToken,
        authorized_signer: w.attestor.pubkey(),
        salt: 7,
        deposit: 1_000_000,
        grace_period: 600,
        open_slot: 123_456,
        splits: Vec::new(),
    }
    .channel();
    let deposit_terms = policy_vault::state::ApprovalTerms {
        payer_asset: payer.asset(),
        payee_asset: w.service.asset(),
        mint: w.mint(),
        amount: 1_000_000,
        policy_id: demo::POLICY_ID,
    };
    let open_approval = ApprovalUse {
        address: b.pda.approval(&deposit_terms),
        rent_payer: member,
    };
    let mut gate_open = b.gate_channel_open(
        &payer.owner.pubkey(),
        &payer.asset(),
        &w.service.asset(),
        &w.facilitator.pubkey(),
        &w.mint(),
        1_000_000,
        demo::POLICY_ID,
        &channel,
        Attestations::default(),
    );
    open_approval.append_to(&mut gate_open);
    json!({
        "payer": "payer-tier-3",
        "member": member.to_string(),
        "settlements": [
            settlement(Funding::Wallet, TokenProgram::SplToken, settle::ComputeBudget::default()),
            settlement(
                Funding::Vault,
                TokenProgram::Token2022,
                settle::ComputeBudget {
                    unit_limit: Some(300_000),
                    unit_price_micro_lamports: Some(1_000),
                },
            ),
        ],
        "gatedOpen": {
            "channel": channel.to_string(),
            "facilitator": w.facilitator.pubkey().to_string(),
            "payerAsset": payer.asset().to_string(),
            "payeeAsset": w.service.asset().to_string(),
            "mint": w.mint().to_string(),
            "deposit": "1000000",
            "policyId": demo::POLICY_ID,
            "approval": {
                "address": open_approval.address.to_string(),
                "rentPayer": open_approval.rent_payer.to_string(),
            },
            "instruction": instruction_json(&gate_open),
        },
    })
}

/// Every fact the Node tests compare with, computed by the Rust SDK and the servers.
async fn fixture(s: &Services) -> Value {
    let w: &DemoWorld = &s.env.world;
    let caip2 = s.get_json(s.f("/supported")).await["kinds"][0]["network"]
        .as_str()
        .unwrap()
        .to_string();
    let mut decisions = Vec::new();
    for p in &w.payers {
        let q = PaymentQuery {
            payer_asset: p.asset(),
            payee_asset: w.service.asset(),
            amount: demo::PRICE,
            mint: w.mint(),
            policy_id: demo::POLICY_ID,
        };
        let caller = Caller::Pubkey(w.facilitator.pubkey());
        let d = simulate::gate_payment(&s.env.rpc, &s.env.b, caller, q)
            .await
            .unwrap();
        decisions.push(json!({
            "name": p.name, "tier": p.tier, "asset": p.asset().to_string(),
            "decision": DecisionView::from(&d),
        }));
    }
    let mut reputations = Vec::new();
    for asset in w
        .payers
        .iter()
        .map(|p| p.asset())
        .chain([w.service.asset(), w.mint()])
    {
        let r = trust_gate_client::chain::engine_reputation(&s.env.rpc, &s.env.b.ids, &asset)
            .await
            .unwrap();
        reputations.push(match r {
            Ok(rep) => json!({"asset": asset.to_string(), "reputation": rep}),
            Err(e) => {
                json!({"asset": asset.to_string(), "error": e.code(), "message": e.to_string()})
            }
        });
    }
    // Kinds 0, 1, 3 and the vault-funded 3: at least one Allow and one Deny to compare.
    assert!(decisions.iter().any(|d| d["decision"]["kind"] == "Allow"));
    assert!(decisions.iter().any(|d| d["decision"]["kind"] == "Deny"));
    let tier3 = w.payer(3).unwrap();
    let vault = w.vault_payer();
    let demo_url = s.demo.url();
    let budget = settle::ComputeBudget {
        unit_limit: Some(300_000),
        unit_price_micro_lamports: Some(1_000),
    };
    let keys: serde_json::Map<String, Value> = w
        .keys()
        .into_iter()
        .map(|(label, k)| (label, json!(k.to_bytes().to_vec())))
        .collect();
    json!({
        "rpcUrl": s.env.localnet.rpc_url(),
        "facilitatorUrl": s.facilitator.url(),
        "demoUrl": s.demo.url(),
        "network": caip2,
        "networkName": "solana-localnet",
        "demoPayerHeader": trust_gate_demo::X_DEMO_PAYER_AGENT,
        "world": w.summary(),
        "payTo": w.service.owner.pubkey().to_string(),
        "keys": keys,
        "decisions": decisions,
        "builders": builders(s),
        "channels": channel_builders(s),
        "approvals": approval_builders(s),
        "reputations": reputations,
        "composed": [
            composed(s, &demo_url, "payer-tier-3", tier3, settle::ComputeBudget::default()).await,
            composed(s, &demo_url, &format!("{}/hot-key", vault.name), vault, budget).await,
        ],
    })
}

/// Challenges for fixed inputs, without and with holdback terms (an arbiter, none, every
/// number at its type's largest), signed by the service key: the gate as the Rust SDK
/// serializes it and the bytes its signature covers, which the TypeScript SDK must equal.
fn challenge_messages(s: &Services, caip2: &str) -> Value {
    let w = &s.env.world;
    let escrow = s
        .env
        .b
        .pda
        .holdback_escrow(&w.held_service.asset(), &w.mint());
    let r = PaymentRequirements {
        scheme: x402::SCHEME_TRUST_GATE.into(),
        network: caip2.into(),
        amount: demo::PRICE.to_string(),
        asset: w.mint().to_string(),
        pay_to: w.held_service.owner.pubkey().to_string(),
        max_timeout_seconds: 60,
        extra: json!({"feePayer": w.facilitator.pubkey().to_string(), "memo": "order 7"})
            .as_object()
            .unwrap()
            .clone(),
    };
    let url = "https://api.example/v1/report?q=é";
    let terms =
        |tier: u8, share_bps: u16, hold_seconds: u32, held: &str, arbiter: Option<String>| {
            Some(HoldbackTerms {
                payee_tier: tier,
                share_bps,
                hold_seconds,
                held: held.into(),
                escrow: escrow.to_string(),
                arbiter,
            })
        };
    let cases = [
        ("plain", None),
        (
            "held",
            terms(1, 1_000, 120, "10000", Some(w.arbiter.pubkey().to_string())),
        ),
        ("held without an arbiter", terms(5, 2_000, 600, "0", None)),
        (
            "held at the largest numbers",
            terms(u8::MAX, u16::MAX, u32::MAX, &u64::MAX.to_string(), None),
        ),
    ];
    let out = cases
        .into_iter()
        .map(|(label, holdback)| {
            let mut g = GateExtension {
                payer_agent_asset: w.holdback_payer().asset().to_string(),
                payee_agent_asset: w.held_service.asset().to_string(),
                payee_recipient: r.pay_to.clone(),
                policy_id: demo::HOLDBACK_POLICY_ID,
                issued_at: 1_700_000_000,
                holdback,
                service_signature: String::new(),
            };
            x402::sign_challenge(&w.service_key, &r, url, &mut g);
            assert!(x402::challenge_signed_by(
                &w.service_key.pubkey(),
                &r,
                url,
                &g
            ));
            let mut signed = r.clone();
            signed.extra.insert(x402::GATE_EXTENSION.into(), json!(g));
            json!({
                "label": label,
                "requirements": signed,
                "resourceUrl": url,
                "gate": g,
                "message": hex(&x402::challenge_message(&r, url, &g)),
            })
        })
        .collect::<Vec<_>>();
    json!(out)
}

/// The held payment's facts: the low-tier payee's demo, the terms the gate decides for the
/// holdback payer paying it (tier 1's: 10 % held), its escrow, what the Rust SDK composes for
/// that demo's challenge, that challenge's message, and the fixed challenge messages.
async fn holdback_fixture(s: &Services, held_demo_url: &str, caip2: &str) -> Value {
    let w = &s.env.world;
    let payer = w.holdback_payer();
    let escrow = s
        .env
        .b
        .pda
        .holdback_escrow(&w.held_service.asset(), &w.mint());
    let term = w.holdback_schedule().terms[1];
    let held = demo::PRICE * u64::from(term.share_bps) / 10_000;
    let terms = HoldbackTerms {
        payee_tier: 1,
        share_bps: term.share_bps,
        hold_seconds: term.hold_secs,
        held: held.to_string(),
        escrow: escrow.to_string(),
        arbiter: Some(w.arbiter.pubkey().to_string()),
    };
    let required = challenge(s, held_demo_url, &payer.asset()).await;
    let r = &required.accepts[0];
    let g = GateExtension::from_requirements(r).unwrap();
    assert_eq!(
        g.holdback.as_ref(),
        Some(&terms),
        "the held demo states the gate's terms"
    );
    let composed = composed(
        s,
        held_demo_url,
        payer.name,
        payer,
        settle::ComputeBudget::default(),
    )
    .await;
    json!({
        "demoUrl": held_demo_url,
        "payer": payer.name,
        "terms": terms,
        "escrow": escrow.to_string(),
        "held": held.to_string(),
        "challenge": {
            "requirements": r,
            "resourceUrl": required.resource.url,
            "message": hex(&x402::challenge_message(r, &required.resource.url, &g)),
        },
        "composed": composed,
        "challenges": challenge_messages(s, caip2),
    })
}

#[tokio::test]
async fn the_typescript_sdk_decides_composes_and_pays_through_the_rust_services() {
    let dir = node::build_sdk();
    let s = services::start().await;
    let held = crate::holdback::held_demo(&s).await;
    let mut f = fixture(&s).await;
    let caip2 = f["network"].as_str().unwrap().to_string();
    f["holdback"] = holdback_fixture(&s, &held.url(), &caip2).await;
    // sdk.test.mjs first: it compares reputations read before any payment or dispute.
    node_test(dir.clone(), "test/sdk.test.mjs", f.clone()).await;
    node_test(dir.clone(), "test/services.test.mjs", f.clone()).await;
    node_test(dir.clone(), "test/express.test.mjs", f.clone()).await;
    node_test(dir.clone(), "test/examples.test.mjs", f.clone()).await;
    // Last: its payments to the low-tier payee change what the others read.
    node_test(dir, "test/holdback-x402.test.mjs", f).await;
}
