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
use policy_vault::state::{
    AcceptanceParams, ApprovalTerms, HoldbackAcceptance, HoldbackSchedule, HoldbackTerm,
    PolicyParams, PolicyRules,
};
use sha2::{Digest, Sha256};
use solana_sdk::instruction::Instruction;
use trust_gate_client::instructions::{Attestations, Claim, FeedbackArgs, FeedbackDetails};
use trust_gate_client::{Builder, Network, ProgramIds};

mod gate_cases;
mod policy_vault_cases;
mod validation_registry_cases;

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
fn cases() -> Vec<Case> {
    let b = builder();
    let mut all = gate_cases::cases(&b);
    all.extend(policy_vault_cases::cases(&b));
    all.extend(validation_registry_cases::cases(&b));
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
        ("gate", include_str!("../../../../idl/gate.json")),
        (
            "policy_vault",
            include_str!("../../../../idl/policy_vault.json"),
        ),
        (
            "validation_registry",
            include_str!("../../../../idl/validation_registry.json"),
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
