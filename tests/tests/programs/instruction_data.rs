//! The instruction data of every instruction of the three programs, pinned byte for byte.
//!
//! Each instruction is built the way clients build it (the SDK's builders; the program's
//! `instruction::X` struct where there is no builder) from fixed, distinctive values: keys
//! filled with one byte, hashes with another, numbers whose little-endian bytes show their
//! order. The expected data is spelled out field by field: the 8-byte discriminator
//! (`sha256("global:<name>")[..8]`), then each argument in Borsh (integers little-endian,
//! strings and vectors behind a u32 length, an option behind a 0 or 1 byte). Clients in other
//! languages, and the strict settlement, which reads `emit_feedback`'s data in place, depend
//! on these bytes: a change in how a program takes its arguments must leave them as they are.

use anchor_lang::prelude::Pubkey;
use anchor_lang::InstructionData;
use gate::state::ChannelRecord;
use policy_vault::instructions::{EvaluateArgs, ReleaseArgs};
use policy_vault::state::{AcceptanceParams, ApprovalTerms, PolicyParams, PolicyRules};
use sha2::{Digest, Sha256};
use solana_sdk::instruction::Instruction;
use trust_gate_client::instructions::{Attestations, ChannelFeedback, Claim, FeedbackArgs};
use trust_gate_client::{Builder, Network, ProgramIds};

fn key(fill: u8) -> Pubkey {
    Pubkey::new_from_array([fill; 32])
}

// Keys named in the data.
const PAYER_ASSET: u8 = 0x11;
const PAYEE_ASSET: u8 = 0x22;
const MINT: u8 = 0x33;
const FACILITATOR: u8 = 0x44;
const ASSET: u8 = 0x55;
const RECOVERY: u8 = 0x66;
const SPENDER: u8 = 0x77;
const SUBJECT: u8 = 0x88;
// Keys only in the accounts (they never reach the data).
const SIGNER: u8 = 0xF1;
const OTHER: u8 = 0xF2;

// Hashes.
const PAYMENT_ID: [u8; 32] = [0xA1; 32];
const REASON: [u8; 32] = [0xA2; 32];
const CAPABILITY: [u8; 32] = [0xA3; 32];
const CLAIM_URI: [u8; 32] = [0xA4; 32];
const CLAIM_PAYLOAD: [u8; 32] = [0xA5; 32];

const AMOUNT: u64 = 0x0102_0304_0506_0708;
const POLICY_ID: u32 = 0x0A0B_0C0D;

fn builder() -> Builder {
    Builder::new(ProgramIds::for_network(Network::Devnet)).expect("devnet ids are configured")
}

fn policy_params() -> PolicyParams {
    PolicyParams {
        kinds: 0x07,
        gate_mode: 0x01,
        mint: key(MINT),
        per_tx_cap: 0x1111_1111_0000_0001,
        daily_cap: 0x2222_2222_0000_0002,
        weekly_cap: 0x3333_3333_0000_0003,
        velocity_window_secs: 0x4444_4444_0000_0004,
        velocity_max_in_window: 0x5555_5555_0000_0005,
        tier0_decay_bps: 0x0606,
        min_counterparty_tier: 0x07,
        max_counterparty_risk: 0x08,
        min_counterparty_confidence: 0x0909,
        unrated_treatment: 0x0A,
        required_capability: CAPABILITY,
        accepted_attestors: [key(0xB1), key(0xB2)],
        funding: 0x01,
    }
}

fn policy_rules() -> PolicyRules {
    PolicyRules {
        payee_list_mode: 0x02,
        payees: [key(0xC1), key(0xC2), key(0xC3), key(0xC4)],
        payee_list: key(0xC5),
        not_before: 0x0000_0000_6000_0001,
        not_after: 0x0000_0000_7000_0002,
        monthly_cap: 0x0C0C_0C0C_0000_0003,
        lifetime_cap: 0x0D0D_0D0D_0000_0004,
        payee_daily_cap: 0x0E0E_0E0E_0000_0005,
    }
}

fn terms() -> ApprovalTerms {
    ApprovalTerms {
        payer_asset: key(PAYER_ASSET),
        payee_asset: key(PAYEE_ASSET),
        mint: key(MINT),
        amount: AMOUNT,
        policy_id: POLICY_ID,
    }
}

fn evaluate_args() -> EvaluateArgs {
    EvaluateArgs {
        payer_asset: key(PAYER_ASSET),
        payee_asset: key(PAYEE_ASSET),
        amount: AMOUNT,
        mint: key(MINT),
        policy_id: POLICY_ID,
    }
}

fn channel_record() -> ChannelRecord {
    ChannelRecord {
        channel: key(OTHER),
        payer_asset: key(PAYER_ASSET),
        payee_asset: key(PAYEE_ASSET),
        payer_signer: key(SIGNER),
        facilitator: key(FACILITATOR),
        mint: key(MINT),
        decimals: 6,
        authorized_signer: key(SIGNER),
        policy_id: POLICY_ID,
        deposit: AMOUNT,
        open_slot: 1,
        day_index: 2,
        week_index: 3,
        month_index: 4,
        created_at: 5,
        bump: 255,
    }
}

/// One instruction: its program, its name and the expected data, one hex segment per field.
struct Case {
    program: &'static str,
    name: &'static str,
    ix: Instruction,
    want: &'static [&'static str],
}

fn case(
    program: &'static str,
    name: &'static str,
    ix: Instruction,
    want: &'static [&'static str],
) -> Case {
    Case {
        program,
        name,
        ix,
        want,
    }
}

fn program_id(program: &str) -> Pubkey {
    match program {
        "gate" => gate::ID,
        "policy_vault" => policy_vault::ID,
        "validation_registry" => validation_registry::ID,
        other => panic!("no program {other}"),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn gate_cases(b: &Builder) -> Vec<Case> {
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
                ChannelFeedback {
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
    ]
}

fn policy_vault_cases(b: &Builder) -> Vec<Case> {
    let s = key(SIGNER);
    let cosigners = [key(OTHER)];
    let asset = key(ASSET);
    vec![
        case(
            "policy_vault",
            "evaluate_and_commit",
            b.evaluate(&s, evaluate_args(), Attestations::default(), true),
            &[
                // discriminator
                "f3e29aeac4b231c1",
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
            "policy_vault",
            "evaluate",
            b.evaluate(&s, evaluate_args(), Attestations::default(), false),
            &[
                // discriminator
                "b3d38eb76c6814d6",
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
            "policy_vault",
            "release_reservation",
            Instruction::new_with_bytes(
                policy_vault::ID,
                &policy_vault::instruction::ReleaseReservation {
                    args: ReleaseArgs {
                        payer_asset: key(PAYER_ASSET),
                        policy_id: POLICY_ID,
                        payee_asset: key(PAYEE_ASSET),
                        amount: AMOUNT,
                        day_index: 0x0000_0000_0000_4D01,
                        week_index: 0x0000_0000_0000_0B02,
                        month_index: 0x0000_0000_0000_0303,
                        reserved_at: -2,
                    },
                }
                .data(),
                vec![],
            ),
            &[
                // discriminator
                "390f65877115a8f7",
                // payer_asset (0x11 x 32)
                "1111111111111111111111111111111111111111111111111111111111111111",
                // policy_id: 168496141 (0xa0b0c0d)
                "0d0c0b0a",
                // payee_asset (0x22 x 32)
                "2222222222222222222222222222222222222222222222222222222222222222",
                // amount: 72623859790382856 (0x102030405060708)
                "0807060504030201",
                // day_index: 19713 (0x4d01)
                "014d000000000000",
                // week_index: 2818 (0xb02)
                "020b000000000000",
                // month_index: 771 (0x303)
                "0303000000000000",
                // reserved_at: -2
                "feffffffffffffff",
            ],
        ),
        case(
            "policy_vault",
            "init_authority",
            b.init_authority(&s, &asset, vec![key(0xD1), key(0xD2)], 2),
            &[
                // discriminator
                "88965eac4ac7ec55",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // members: 2 entries
                "02000000",
                // members[0] (0xd1 x 32)
                "d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1",
                // members[1] (0xd2 x 32)
                "d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2",
                // threshold: 2
                "02",
            ],
        ),
        case(
            "policy_vault",
            "request_take_over",
            b.request_take_over(&s, &asset, vec![key(0xD3)], 1),
            &[
                // discriminator
                "1e5a71ec94a2cedd",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // members: 1 entry
                "01000000",
                // members[0] (0xd3 x 32)
                "d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3",
                // threshold: 1
                "01",
            ],
        ),
        case(
            "policy_vault",
            "complete_take_over",
            b.complete_take_over(&asset, &key(OTHER)),
            &[
                // discriminator
                "60b876fade030e01",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
            ],
        ),
        case(
            "policy_vault",
            "cancel_take_over",
            b.cancel_take_over(&s, &cosigners, &asset, &key(OTHER)),
            &[
                // discriminator
                "ff444614dcc5df61",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
            ],
        ),
        case(
            "policy_vault",
            "accept_take_over",
            b.accept_take_over(&s, &cosigners, &asset, &key(OTHER)),
            &[
                // discriminator
                "1088616796da9d5e",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
            ],
        ),
        case(
            "policy_vault",
            "close_lapsed_take_over",
            b.close_lapsed_take_over(&asset, &key(OTHER)),
            &[
                // discriminator
                "32559370fe4cd0a6",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
            ],
        ),
        case(
            "policy_vault",
            "set_authority_guard",
            b.set_authority_guard(&s, &cosigners, &asset, 0x0001_5180, &key(RECOVERY)),
            &[
                // discriminator
                "0cb6fc49b969cf61",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // take_over_delay_secs: 86400 (0x15180)
                "80510100",
                // recovery (0x66 x 32)
                "6666666666666666666666666666666666666666666666666666666666666666",
            ],
        ),
        case(
            "policy_vault",
            "rotate_authority",
            b.rotate_authority(
                &s,
                &cosigners,
                &asset,
                vec![key(0xD4), key(0xD5), key(0xD6)],
                3,
            ),
            &[
                // discriminator
                "f8e197231c0f550c",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // members: 3 entries
                "03000000",
                // members[0] (0xd4 x 32)
                "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4",
                // members[1] (0xd5 x 32)
                "d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5",
                // members[2] (0xd6 x 32)
                "d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6",
                // threshold: 3
                "03",
            ],
        ),
        case(
            "policy_vault",
            "init_killswitch",
            b.init_killswitch_direct(&s, &asset),
            &[
                // discriminator
                "cee7fd014f9baf8a",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
            ],
        ),
        case(
            "policy_vault",
            "set_killswitch",
            b.set_killswitch(&s, &cosigners, &asset, true),
            &[
                // discriminator
                "227dea7a9914192f",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // paused: true
                "01",
            ],
        ),
        // Without limits: the client sends no rules (one byte).
        case(
            "policy_vault",
            "init_policy",
            b.init_policy(
                &s,
                &cosigners,
                &asset,
                POLICY_ID,
                policy_params(),
                PolicyRules::default(),
                0,
            ),
            &[
                // discriminator
                "2dea6e64d192bf56",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // policy_id: 168496141 (0xa0b0c0d)
                "0d0c0b0a",
                // params.kinds: 7
                "07",
                // params.gate_mode: 1
                "01",
                // params.mint (0x33 x 32)
                "3333333333333333333333333333333333333333333333333333333333333333",
                // params.per_tx_cap: 1229782937960972289 (0x1111111100000001)
                "0100000011111111",
                // params.daily_cap: 2459565875921944578 (0x2222222200000002)
                "0200000022222222",
                // params.weekly_cap: 3689348813882916867 (0x3333333300000003)
                "0300000033333333",
                // params.velocity_window_secs: 4919131751843889156 (0x4444444400000004)
                "0400000044444444",
                // params.velocity_max_in_window: 6148914689804861445 (0x5555555500000005)
                "0500000055555555",
                // params.tier0_decay_bps: 1542 (0x606)
                "0606",
                // params.min_counterparty_tier: 7
                "07",
                // params.max_counterparty_risk: 8
                "08",
                // params.min_counterparty_confidence: 2313 (0x909)
                "0909",
                // params.unrated_treatment: 10 (0xa)
                "0a",
                // params.required_capability (0xa3 x 32)
                "a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3",
                // params.accepted_attestors[0] (0xb1 x 32)
                "b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1",
                // params.accepted_attestors[1] (0xb2 x 32)
                "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2",
                // params.funding: 1
                "01",
                // rules: None
                "00",
                // approval_threshold: 0
                "0000000000000000",
            ],
        ),
        case(
            "policy_vault",
            "init_policy",
            b.init_policy(
                &s,
                &cosigners,
                &asset,
                POLICY_ID,
                policy_params(),
                policy_rules(),
                0x0F0F_0F0F_0000_0006,
            ),
            &[
                // discriminator
                "2dea6e64d192bf56",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // policy_id: 168496141 (0xa0b0c0d)
                "0d0c0b0a",
                // params.kinds: 7
                "07",
                // params.gate_mode: 1
                "01",
                // params.mint (0x33 x 32)
                "3333333333333333333333333333333333333333333333333333333333333333",
                // params.per_tx_cap: 1229782937960972289 (0x1111111100000001)
                "0100000011111111",
                // params.daily_cap: 2459565875921944578 (0x2222222200000002)
                "0200000022222222",
                // params.weekly_cap: 3689348813882916867 (0x3333333300000003)
                "0300000033333333",
                // params.velocity_window_secs: 4919131751843889156 (0x4444444400000004)
                "0400000044444444",
                // params.velocity_max_in_window: 6148914689804861445 (0x5555555500000005)
                "0500000055555555",
                // params.tier0_decay_bps: 1542 (0x606)
                "0606",
                // params.min_counterparty_tier: 7
                "07",
                // params.max_counterparty_risk: 8
                "08",
                // params.min_counterparty_confidence: 2313 (0x909)
                "0909",
                // params.unrated_treatment: 10 (0xa)
                "0a",
                // params.required_capability (0xa3 x 32)
                "a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3",
                // params.accepted_attestors[0] (0xb1 x 32)
                "b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1",
                // params.accepted_attestors[1] (0xb2 x 32)
                "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2",
                // params.funding: 1
                "01",
                // rules: Some
                "01",
                // rules.payee_list_mode: 2
                "02",
                // rules.payees[0] (0xc1 x 32)
                "c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1",
                // rules.payees[1] (0xc2 x 32)
                "c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2",
                // rules.payees[2] (0xc3 x 32)
                "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3",
                // rules.payees[3] (0xc4 x 32)
                "c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4",
                // rules.payee_list (0xc5 x 32)
                "c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5",
                // rules.not_before: 1610612737 (0x60000001)
                "0100006000000000",
                // rules.not_after: 1879048194 (0x70000002)
                "0200007000000000",
                // rules.monthly_cap: 868082073854803971 (0xc0c0c0c00000003)
                "030000000c0c0c0c",
                // rules.lifetime_cap: 940422246676037636 (0xd0d0d0d00000004)
                "040000000d0d0d0d",
                // rules.payee_daily_cap: 1012762419497271301 (0xe0e0e0e00000005)
                "050000000e0e0e0e",
                // approval_threshold: 1085102592318504966 (0xf0f0f0f00000006)
                "060000000f0f0f0f",
            ],
        ),
        case(
            "policy_vault",
            "approve_payment",
            b.approve_payment(&s, &cosigners, terms(), 0x0000_0000_6500_0007),
            &[
                // discriminator
                "157bc38b6b8d22bb",
                // terms.payer_asset (0x11 x 32)
                "1111111111111111111111111111111111111111111111111111111111111111",
                // terms.payee_asset (0x22 x 32)
                "2222222222222222222222222222222222222222222222222222222222222222",
                // terms.mint (0x33 x 32)
                "3333333333333333333333333333333333333333333333333333333333333333",
                // terms.amount: 72623859790382856 (0x102030405060708)
                "0807060504030201",
                // terms.policy_id: 168496141 (0xa0b0c0d)
                "0d0c0b0a",
                // expires_at: 1694498823 (0x65000007)
                "0700006500000000",
            ],
        ),
        case(
            "policy_vault",
            "close_approval",
            b.close_approval(&s, &key(OTHER), &key(SIGNER)),
            &[
                // discriminator
                "8632e5cf43a194cb",
            ],
        ),
        case(
            "policy_vault",
            "edit_payee_list",
            b.edit_payee_list(
                &s,
                &cosigners,
                &asset,
                POLICY_ID,
                vec![key(0xE1), key(0xE2)],
                vec![key(0xE3)],
            ),
            &[
                // discriminator
                "344fc701d0161e6d",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // policy_id: 168496141 (0xa0b0c0d)
                "0d0c0b0a",
                // add: 2 entries
                "02000000",
                // add[0] (0xe1 x 32)
                "e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1",
                // add[1] (0xe2 x 32)
                "e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2",
                // remove: 1 entry
                "01000000",
                // remove[0] (0xe3 x 32)
                "e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3",
            ],
        ),
        case(
            "policy_vault",
            "retire_policy",
            b.retire_policy(&s, &cosigners, &asset, POLICY_ID),
            &[
                // discriminator
                "2b6191480b51ca4c",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // policy_id: 168496141 (0xa0b0c0d)
                "0d0c0b0a",
            ],
        ),
        case(
            "policy_vault",
            "set_vault_spender",
            b.set_vault_spender(&s, &cosigners, &asset, POLICY_ID, &key(SPENDER)),
            &[
                // discriminator
                "99f91bedc17b2053",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // policy_id: 168496141 (0xa0b0c0d)
                "0d0c0b0a",
                // spender (0x77 x 32)
                "7777777777777777777777777777777777777777777777777777777777777777",
            ],
        ),
        case(
            "policy_vault",
            "set_acceptance_policy",
            b.set_acceptance_policy(
                &s,
                &cosigners,
                &asset,
                AcceptanceParams {
                    min_payer_tier: 0x02,
                    gate_mode: 0x01,
                    max_payer_risk: 0x03,
                    min_payer_confidence: 0x0404,
                    unrated_treatment: 0x05,
                    required_capability: CAPABILITY,
                    accepted_attestors: [key(0xB1), key(0xB2)],
                },
            ),
            &[
                // discriminator
                "6d2c5bd787d91599",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // params.min_payer_tier: 2
                "02",
                // params.gate_mode: 1
                "01",
                // params.max_payer_risk: 3
                "03",
                // params.min_payer_confidence: 1028 (0x404)
                "0404",
                // params.unrated_treatment: 5
                "05",
                // params.required_capability (0xa3 x 32)
                "a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3",
                // params.accepted_attestors[0] (0xb1 x 32)
                "b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1",
                // params.accepted_attestors[1] (0xb2 x 32)
                "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2",
            ],
        ),
        case(
            "policy_vault",
            "open_vault",
            b.open_vault(&s, &cosigners, &asset, &key(MINT), &key(OTHER)),
            &[
                // discriminator
                "b5f8e44306af25a7",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // mint (0x33 x 32)
                "3333333333333333333333333333333333333333333333333333333333333333",
            ],
        ),
        case(
            "policy_vault",
            "withdraw",
            b.withdraw(
                &s,
                &cosigners,
                &asset,
                &key(MINT),
                &key(OTHER),
                &key(OTHER),
                AMOUNT,
            ),
            &[
                // discriminator
                "b712469c946da122",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // mint (0x33 x 32)
                "3333333333333333333333333333333333333333333333333333333333333333",
                // amount: 72623859790382856 (0x102030405060708)
                "0807060504030201",
            ],
        ),
    ]
}

fn validation_registry_cases(b: &Builder) -> Vec<Case> {
    let s = key(SIGNER);
    vec![
        case(
            "validation_registry",
            "register_namespace",
            b.register_namespace(&s, "pay.v1", "1.0.0", "https://s.x/p"),
            &[
                // discriminator
                "a88f90912d505d7e",
                // name: 'pay.v1'
                "060000007061792e7631",
                // version: '1.0.0'
                "05000000312e302e30",
                // schema_uri: 'https://s.x/p'
                "0d00000068747470733a2f2f732e782f70",
            ],
        ),
        case(
            "validation_registry",
            "register_attestor",
            b.register_attestor(&s, "ipfs://attestor"),
            &[
                // discriminator
                "44c956f433710f5e",
                // display_name_uri: 'ipfs://attestor'
                "0f000000697066733a2f2f6174746573746f72",
            ],
        ),
        case(
            "validation_registry",
            "request_validation",
            b.request_validation(
                &s,
                &key(SUBJECT),
                &CAPABILITY,
                CLAIM_URI,
                0x0000_0000_0BAD_F00D,
            ),
            &[
                // discriminator
                "481a3543e41e9035",
                // subject_asset (0x88 x 32)
                "8888888888888888888888888888888888888888888888888888888888888888",
                // capability_hash (0xa3 x 32)
                "a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3",
                // claim_uri_hash (0xa4 x 32)
                "a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4",
                // deadline_slot: 195948557 (0xbadf00d)
                "0df0ad0b00000000",
            ],
        ),
        case(
            "validation_registry",
            "respond_to_validation",
            b.respond_to_validation(
                &s,
                &Claim {
                    subject: key(SUBJECT),
                    capability: CAPABILITY,
                    payload_hash: CLAIM_PAYLOAD,
                    uri_hash: CLAIM_URI,
                    expires_at_slot: 0x0000_0000_0DEC_AF00,
                },
            ),
            &[
                // discriminator
                "40d4f4064186d47a",
                // subject_asset (0x88 x 32)
                "8888888888888888888888888888888888888888888888888888888888888888",
                // capability_hash (0xa3 x 32)
                "a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3",
                // claim_payload_hash (0xa5 x 32)
                "a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5",
                // claim_uri_hash (0xa4 x 32)
                "a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4",
                // expires_at_slot: 233615104 (0xdecaf00)
                "00afec0d00000000",
            ],
        ),
        case(
            "validation_registry",
            "revoke_validation",
            b.revoke_validation(&s, &key(SUBJECT), &CAPABILITY, REASON),
            &[
                // discriminator
                "2194b288de600de3",
                // subject_asset (0x88 x 32)
                "8888888888888888888888888888888888888888888888888888888888888888",
                // capability_hash (0xa3 x 32)
                "a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3",
                // reason_hash (0xa2 x 32)
                "a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2",
            ],
        ),
    ]
}

fn cases() -> Vec<Case> {
    let b = builder();
    let mut all = gate_cases(&b);
    all.extend(policy_vault_cases(&b));
    all.extend(validation_registry_cases(&b));
    all
}

#[test]
fn every_instructions_data_is_what_it_was() {
    let mut wrong = vec![];
    for c in cases() {
        let disc: [u8; 8] = Sha256::digest(format!("global:{}", c.name))[..8]
            .try_into()
            .unwrap();
        assert_eq!(
            c.want.first().copied(),
            Some(hex(&disc).as_str()),
            "{}::{}: the first segment is the discriminator",
            c.program,
            c.name
        );
        assert_eq!(c.ix.program_id, program_id(c.program), "{}", c.name);
        let (got, want) = (hex(&c.ix.data), c.want.concat());
        if got != want {
            wrong.push(format!(
                "{}::{}:\n  got  {got}\n  want {want}",
                c.program, c.name
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "instruction data changed:\n{}",
        wrong.join("\n")
    );
}

/// The cases cover every instruction the programs' IDLs (`idl/`, checked against the code in
/// CI) list.
#[test]
fn every_instruction_of_the_three_programs_is_pinned() {
    let idls = [
        ("gate", include_str!("../../../idl/gate.json")),
        (
            "policy_vault",
            include_str!("../../../idl/policy_vault.json"),
        ),
        (
            "validation_registry",
            include_str!("../../../idl/validation_registry.json"),
        ),
    ];
    let cases = cases();
    for (program, idl) in idls {
        let idl: serde_json::Value = serde_json::from_str(idl).unwrap();
        let names: Vec<&str> = idl["instructions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|ix| ix["name"].as_str().unwrap())
            .collect();
        for name in &names {
            assert!(
                cases
                    .iter()
                    .any(|c| c.program == program && c.name == *name),
                "{program}::{name} has no pinned data"
            );
        }
        for c in cases.iter().filter(|c| c.program == program) {
            assert!(
                names.contains(&c.name),
                "{program}::{} is not in the IDL",
                c.name
            );
        }
    }
}
