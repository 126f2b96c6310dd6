//! The gate's instructions.
use super::*;

pub(super) fn cases(b: &Builder) -> Vec<Case> {
    let none = Attestations::default();
    vec![
        case(
            "gate",
            "gate_payment_strict",
            b.gate_payment_strict(
                &key(SIGNER),
                &key(PAYER_ASSET),
                &key(PAYEE_ASSET),
                AMOUNT,
                &key(MINT),
                POLICY_ID,
                0x0011_2233_4455_6677,
                &key(OTHER),
                none,
                None,
                None,
            ),
            &[
                // discriminator
                "0c833db2e3dc181e",
                // amount: 72623859790382856 (0x102030405060708)
                "0807060504030201",
                // policy_id: 168496141 (0xa0b0c0d)
                "0d0c0b0a",
                // deadline: 4822678189205111 (0x11223344556677)
                "7766554433221100",
                // holdback_tier: None
                "00",
            ],
        ),
        case(
            "gate",
            "emit_feedback",
            b.emit_feedback(
                &key(FACILITATOR),
                &key(OTHER),
                FeedbackArgs {
                    payment_id_hash: PAYMENT_ID,
                    payee_asset: key(PAYEE_ASSET),
                    score: 75,
                    value: AMOUNT,
                    value_decimals: 6,
                    tag1: "tag-1".into(),
                    tag2: "tag-two".into(),
                    endpoint: "https://e.x/p".into(),
                    feedback_uri: "ipfs://fb".into(),
                },
            ),
            &[
                // discriminator
                "a6d3e7a810cdaa4d",
                // payment_id_hash (0xa1 x 32)
                "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1",
                // facilitator (0x44 x 32)
                "4444444444444444444444444444444444444444444444444444444444444444",
                // payee_asset (0x22 x 32)
                "2222222222222222222222222222222222222222222222222222222222222222",
                // score: 75 (0x4b)
                "4b",
                // value: 72623859790382856 (0x102030405060708)
                "0807060504030201",
                // value_decimals: 6
                "06",
                // tag1: 'tag-1'
                "050000007461672d31",
                // tag2: 'tag-two'
                "070000007461672d74776f",
                // endpoint: 'https://e.x/p'
                "0d00000068747470733a2f2f652e782f70",
                // feedback_uri: 'ipfs://fb'
                "09000000697066733a2f2f6662",
            ],
        ),
        case(
            "gate",
            "gate_channel_open",
            b.gate_channel_open(
                &key(SIGNER),
                &key(PAYER_ASSET),
                &key(PAYEE_ASSET),
                &key(FACILITATOR),
                &key(MINT),
                AMOUNT,
                POLICY_ID,
                &key(OTHER),
                none,
            ),
            &[
                // discriminator
                "b5408be24eb1a5ad",
                // deposit: 72623859790382856 (0x102030405060708)
                "0807060504030201",
                // policy_id: 168496141 (0xa0b0c0d)
                "0d0c0b0a",
            ],
        ),
        case(
            "gate",
            "gate_channel_close",
            b.gate_channel_close(
                &channel_record(),
                &key(OTHER),
                FeedbackDetails {
                    score: 99,
                    tag1: "tag-1".into(),
                    tag2: "tag-two".into(),
                    endpoint: "https://e.x/p".into(),
                    feedback_uri: "ipfs://fb".into(),
                },
            ),
            &[
                // discriminator
                "c33e69d5c2645f4e",
                // score: 99 (0x63)
                "63",
                // tag1: 'tag-1'
                "050000007461672d31",
                // tag2: 'tag-two'
                "070000007461672d74776f",
                // endpoint: 'https://e.x/p'
                "0d00000068747470733a2f2f652e782f70",
                // feedback_uri: 'ipfs://fb'
                "09000000697066733a2f2f6662",
            ],
        ),
        case(
            "gate",
            "subscribe",
            b.subscribe(&subscription()),
            &[
                // discriminator
                "fe1cbf8a9cb3b735",
                // policy_id: 168496141 (0xa0b0c0d)
                "0d0c0b0a",
                // terms.nonce: 0x1112131415161718
                "1817161514131211",
                // terms.amount_per_period: 72623859790382856 (0x102030405060708)
                "0807060504030201",
                // terms.period_length_s: 0x2122232425262728
                "2827262524232221",
                // terms.start_ts: 0x3132333435363738
                "3837363534333231",
                // terms.expiry_ts: 0x4142434445464748
                "4847464544434241",
            ],
        ),
        case(
            "gate",
            "gate_pull",
            b.gate_pull(
                &gated_subscription(),
                &recurring_delegation(),
                &key(OTHER),
                trust_gate_client::settle::TokenProgram::SplToken,
                &key(OTHER),
                AMOUNT,
                FeedbackDetails {
                    score: 99,
                    tag1: "tag-1".into(),
                    tag2: "tag-two".into(),
                    endpoint: "https://e.x/p".into(),
                    feedback_uri: "ipfs://fb".into(),
                },
                none,
            ),
            &[
                // discriminator
                "7314edf98dffba25",
                // amount: 72623859790382856 (0x102030405060708)
                "0807060504030201",
                // feedback.score: 99 (0x63)
                "63",
                // feedback.tag1: 'tag-1'
                "050000007461672d31",
                // feedback.tag2: 'tag-two'
                "070000007461672d74776f",
                // feedback.endpoint: 'https://e.x/p'
                "0d00000068747470733a2f2f652e782f70",
                // feedback.feedback_uri: 'ipfs://fb'
                "09000000697066733a2f2f6662",
            ],
        ),
        case(
            "gate",
            "unsubscribe",
            b.unsubscribe(&gated_subscription()),
            &[
                // discriminator
                "0c5ac5cfd6bbc7c6",
            ],
        ),
        case(
            "gate",
            "close_channel_record",
            b.close_channel_record(&key(OTHER), &key(FACILITATOR)),
            &[
                // discriminator
                "032b8126b5210c99",
            ],
        ),
        case(
            "gate",
            "gate_payment",
            b.gate_payment(
                &key(PAYER_ASSET),
                &key(PAYEE_ASSET),
                AMOUNT,
                &key(MINT),
                POLICY_ID,
                none,
            ),
            &[
                // discriminator
                "6345937f44759afa",
                // payer_asset (0x11 x 32)
                "1111111111111111111111111111111111111111111111111111111111111111",
                // payee_asset (0x22 x 32)
                "2222222222222222222222222222222222222222222222222222222222222222",
                // amount: 72623859790382856 (0x102030405060708)
                "0807060504030201",
                // mint (0x33 x 32)
                "3333333333333333333333333333333333333333333333333333333333333333",
                // policy_id: 168496141 (0xa0b0c0d)
                "0d0c0b0a",
            ],
        ),
        case(
            "gate",
            "dispute_payment",
            b.dispute_payment(
                &key(SIGNER),
                &key(FACILITATOR),
                &key(SIGNER),
                &key(OTHER),
                PAYMENT_ID,
                &key(PAYEE_ASSET),
                REASON,
                "ipfs://why".into(),
            ),
            &[
                // discriminator
                "1fc1db3621fc7164",
                // payment_id_hash (0xa1 x 32)
                "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1",
                // facilitator (0x44 x 32)
                "4444444444444444444444444444444444444444444444444444444444444444",
                // payee_asset (0x22 x 32)
                "2222222222222222222222222222222222222222222222222222222222222222",
                // dispute_reason_hash (0xa2 x 32)
                "a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2",
                // feedback_uri: 'ipfs://why'
                "0a000000697066733a2f2f776879",
            ],
        ),
        case(
            "gate",
            "close_payment_records",
            b.close_payment_records(&key(FACILITATOR), &PAYMENT_ID, &key(SIGNER)),
            &[
                // discriminator
                "376f00c368e4c8de",
            ],
        ),
        case(
            "gate",
            "register_agent_via_cpi",
            b.register_agent_via_cpi(
                &key(SIGNER),
                &key(ASSET),
                &key(OTHER),
                "ipfs://agent".into(),
            ),
            &[
                // discriminator
                "2786a6f5dac82c28",
                // metadata_uri: 'ipfs://agent'
                "0c000000697066733a2f2f6167656e74",
            ],
        ),
        case(
            "gate",
            "init_authority",
            b.init_gate_authority(&key(FACILITATOR)),
            &[
                // discriminator
                "88965eac4ac7ec55",
                // facilitator (0x44 x 32)
                "4444444444444444444444444444444444444444444444444444444444444444",
            ],
        ),
        case(
            "gate",
            "init_killswitch",
            b.init_killswitch(&key(SIGNER), &key(ASSET)),
            &[
                // discriminator
                "cee7fd014f9baf8a",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
            ],
        ),
        case(
            "gate",
            "open_holdback_escrow",
            b.open_holdback_escrow(&key(SIGNER), &key(PAYEE_ASSET), &key(MINT), &key(OTHER)),
            &[
                // discriminator
                "5dd65adec3224a2e",
                // payee_asset (0x22 x 32)
                "2222222222222222222222222222222222222222222222222222222222222222",
                // mint (0x33 x 32)
                "3333333333333333333333333333333333333333333333333333333333333333",
            ],
        ),
        case(
            "gate",
            "release_holdback",
            b.release_holdback(&held_payment(), &key(RECOVERY)),
            &[
                // discriminator
                "caac6ac513dea1d7",
            ],
        ),
        case(
            "gate",
            "refund_holdback",
            b.refund_holdback(&key(SIGNER), &held_payment(), &key(OTHER)),
            &[
                // discriminator
                "f86680427f80601b",
            ],
        ),
        case(
            "gate",
            "arbitrate_holdback",
            b.arbitrate_holdback(&held_payment(), true, &key(OTHER), &[]),
            &[
                // discriminator
                "41535605641220f4",
                // uphold: true
                "01",
            ],
        ),
        case(
            "gate",
            "create_arbiter_set",
            b.create_arbiter_set(&key(SIGNER), 2, &[key(PAYEE_ASSET), key(PAYER_ASSET)]),
            &[
                // discriminator
                "907ba8a0a61c6e97",
                // threshold: 2
                "02",
                // members: 2, ascending (0x11 x 32, 0x22 x 32)
                "02000000",
                "1111111111111111111111111111111111111111111111111111111111111111",
                "2222222222222222222222222222222222222222222222222222222222222222",
            ],
        ),
    ]
}

/// A held payment of fixed keys (its moves' data does not depend on them).
fn held_payment() -> trust_gate_client::holdback::HeldPayment {
    trust_gate_client::holdback::HeldPayment {
        facilitator: key(FACILITATOR),
        payment_id_hash: PAYMENT_ID,
        payee_asset: key(PAYEE_ASSET),
        payer_wallet: key(SIGNER),
        mint: key(MINT),
        token_program: key(OTHER),
        escrow: key(ASSET),
        recipient: key(RECOVERY),
        arbiter: key(SPENDER),
        held: AMOUNT,
        hold_until: 0,
        state: trust_gate_client::holdback::HoldState::Held,
        disputed: false,
        arbitration_ends: 0,
    }
}

fn subscription() -> trust_gate_client::instructions::Subscription {
    trust_gate_client::instructions::Subscription {
        delegator: key(SIGNER),
        payer_asset: key(PAYER_ASSET),
        payee_asset: key(PAYEE_ASSET),
        facilitator: key(FACILITATOR),
        mint: key(MINT),
        token_program: trust_gate_client::settle::TokenProgram::SplToken,
        policy_id: POLICY_ID,
        terms: trust_gate_client::subscriptions::RecurringTerms {
            nonce: 0x1112_1314_1516_1718,
            amount_per_period: AMOUNT,
            period_length_s: 0x2122_2324_2526_2728,
            start_ts: 0x3132_3334_3536_3738,
            expiry_ts: 0x4142_4344_4546_4748,
        },
    }
}

fn gated_subscription() -> gate::state::GatedSubscription {
    gate::state::GatedSubscription {
        payer_asset: key(PAYER_ASSET),
        payee_asset: key(PAYEE_ASSET),
        facilitator: key(FACILITATOR),
        delegation: key(OTHER),
        delegator: key(SIGNER),
        policy_id: POLICY_ID,
        delegate_bump: 255,
        created_at: 1,
        bump: 255,
    }
}

fn recurring_delegation() -> trust_gate_client::subscriptions::RecurringDelegation {
    trust_gate_client::subscriptions::RecurringDelegation {
        delegator: key(SIGNER),
        delegatee: key(OTHER),
        payer: key(SIGNER),
        init_id: 1,
        subscription_authority: key(OTHER),
        mint: key(MINT),
        current_period_start_ts: 1,
        period_length_s: 86_400,
        expiry_ts: 0,
        amount_per_period: AMOUNT,
        amount_pulled_in_period: 0,
    }
}
