//! The PDAs of accounts whose address a program checks without Anchor's `seeds` constraint,
//! and the strict gate's errors outside its error enum.
//!
//! Anchor writes an account's seeds into the IDL only from a `seeds` constraint, which costs
//! 1 500 compute units per check (a bump search: that much per bump tried). On the hot paths
//! of a settlement the programs check these addresses more cheaply instead: by the fields an
//! existing account stores (the owning program creates it only at the PDA of those fields),
//! or by `trust_gate_program_common::pda`. The addresses are the same as before, so the IDL
//! still tells clients how to derive them, and the generated clients keep their PDA helpers
//! and account defaults. Each entry must fill an account that has no seeds of its own, or
//! the build fails (an entry left behind, or a renamed account).

use anchor_lang_idl::types::{
    Idl, IdlInstructionAccountItem, IdlPda, IdlSeed, IdlSeedAccount, IdlSeedArg, IdlSeedConst,
};
use trust_gate_program_common::external::{ids, seeds as ext};

enum Seed {
    Const(&'static [u8]),
    Arg(&'static str),
    Account(&'static str),
}
use Seed::*;

struct Declared {
    program: &'static str,
    instruction: &'static str,
    /// The account's path in the instruction: `target.atom_stats` for a nested struct.
    account: &'static str,
    seeds: &'static [Seed],
    /// The deriving program when it is not the instruction's own.
    owner: Option<[u8; 32]>,
}

const REGISTRY: Option<[u8; 32]> = Some(ids::AGENT_REGISTRY.to_bytes());
const ENGINE: Option<[u8; 32]> = Some(ids::REPUTATION_ENGINE.to_bytes());
// emit_feedback and dispute_payment take their arguments as one `args` struct.
const GATE_AUTHORITY: &[Seed] = &[
    Const(gate::state::seeds::GATE_AUTHORITY),
    Arg("args.facilitator"),
];
const FEEDBACK_LOG: &[Seed] = &[
    Const(gate::state::seeds::FEEDBACK_LOG),
    Arg("args.facilitator"),
    Arg("args.payment_id_hash"),
];
const TARGET_AGENT: &[Seed] = &[Const(ext::AGENT), Account("asset")];
const TARGET_STATS: &[Seed] = &[Const(ext::ATOM_STATS), Account("asset")];
const PAYER_STATS: &[Seed] = &[Const(ext::ATOM_STATS), Arg("args.payer_asset")];
const PAYEE_STATS: &[Seed] = &[Const(ext::ATOM_STATS), Arg("args.payee_asset")];
const ACCEPTANCE: &[Seed] = &[
    Const(policy_vault::state::seeds::ACCEPTANCE),
    Arg("args.payee_asset"),
];

/// An account of the gate at a PDA of the gate.
const fn gate(
    instruction: &'static str,
    account: &'static str,
    seeds: &'static [Seed],
) -> Declared {
    Declared {
        program: "gate",
        instruction,
        account,
        seeds,
        owner: None,
    }
}

/// An account of `program` at a PDA of `owner` (`None`: of `program` itself).
const fn pda(
    program: &'static str,
    instruction: &'static str,
    account: &'static str,
    seeds: &'static [Seed],
    owner: Option<[u8; 32]>,
) -> Declared {
    Declared {
        program,
        instruction,
        account,
        seeds,
        owner,
    }
}

const POLICY: &[Seed] = &[
    Const(policy_vault::state::seeds::POLICY),
    Arg("asset"),
    Arg("policy_id"),
];

/// The gate's evaluate signer: policy_vault checks its address, and the gate signs for it.
const EVALUATE_SIGNER: &[Seed] = &[Const(gate::state::seeds::EVALUATE_SIGNER)];

const DECLARED: &[Declared] = &[
    gate(
        "gate_payment",
        "evaluation.evaluate_signer",
        EVALUATE_SIGNER,
    ),
    gate(
        "gate_payment_strict",
        "evaluation.evaluate_signer",
        EVALUATE_SIGNER,
    ),
    gate(
        "gate_channel_open",
        "evaluation.evaluate_signer",
        EVALUATE_SIGNER,
    ),
    gate(
        "gate_channel_close",
        "release.evaluate_signer",
        EVALUATE_SIGNER,
    ),
    pda("policy_vault", "retire_policy", "policy", POLICY, None),
    pda("policy_vault", "set_vault_spender", "policy", POLICY, None),
    pda(
        "policy_vault",
        "edit_payee_list",
        "policy",
        &[
            Const(policy_vault::state::seeds::POLICY),
            Arg("args.asset"),
            Arg("args.policy_id"),
        ],
        None,
    ),
    pda(
        "policy_vault",
        "edit_payee_list",
        "payee_list",
        &[
            Const(policy_vault::state::seeds::PAYEE_LIST),
            Arg("args.asset"),
            Arg("args.policy_id"),
        ],
        None,
    ),
    gate("emit_feedback", "gate_authority", GATE_AUTHORITY),
    gate("emit_feedback", "feedback_log", FEEDBACK_LOG),
    pda(
        "gate",
        "emit_feedback",
        "target.agent_account",
        TARGET_AGENT,
        REGISTRY,
    ),
    pda(
        "gate",
        "emit_feedback",
        "target.atom_stats",
        TARGET_STATS,
        ENGINE,
    ),
    gate("dispute_payment", "gate_authority", GATE_AUTHORITY),
    gate("dispute_payment", "feedback_log", FEEDBACK_LOG),
    gate(
        "dispute_payment",
        "dispute",
        &[
            Const(gate::state::seeds::DISPUTE),
            Arg("args.facilitator"),
            Arg("args.payment_id_hash"),
        ],
    ),
    pda(
        "gate",
        "dispute_payment",
        "target.agent_account",
        TARGET_AGENT,
        REGISTRY,
    ),
    pda(
        "gate",
        "dispute_payment",
        "target.atom_stats",
        TARGET_STATS,
        ENGINE,
    ),
    pda(
        "gate",
        "gate_payment_strict",
        "payer_agent",
        &[Const(ext::AGENT), Account("payer_asset")],
        REGISTRY,
    ),
    pda(
        "gate",
        "gate_payment_strict",
        "payee_agent",
        &[Const(ext::AGENT), Account("payee_asset")],
        REGISTRY,
    ),
    pda(
        "policy_vault",
        "evaluate",
        "payer_stats",
        PAYER_STATS,
        ENGINE,
    ),
    pda(
        "policy_vault",
        "evaluate",
        "payee_stats",
        PAYEE_STATS,
        ENGINE,
    ),
    pda(
        "policy_vault",
        "evaluate",
        "payee_acceptance",
        ACCEPTANCE,
        None,
    ),
    pda(
        "policy_vault",
        "evaluate_and_commit",
        "payer_stats",
        PAYER_STATS,
        ENGINE,
    ),
    pda(
        "policy_vault",
        "evaluate_and_commit",
        "payee_stats",
        PAYEE_STATS,
        ENGINE,
    ),
    pda(
        "policy_vault",
        "evaluate_and_commit",
        "payee_acceptance",
        ACCEPTANCE,
        None,
    ),
];

fn idl_seed(seed: &Seed) -> IdlSeed {
    match seed {
        Const(value) => IdlSeed::Const(IdlSeedConst {
            value: value.to_vec(),
        }),
        Arg(path) => IdlSeed::Arg(IdlSeedArg {
            path: path.to_string(),
        }),
        Account(path) => IdlSeed::Account(IdlSeedAccount {
            path: path.to_string(),
            account: None,
        }),
    }
}

fn find<'a>(
    items: &'a mut [IdlInstructionAccountItem],
    path: &str,
) -> Option<&'a mut anchor_lang_idl::types::IdlInstructionAccount> {
    let (head, rest) = match path.split_once('.') {
        Some((head, rest)) => (head, Some(rest)),
        None => (path, None),
    };
    items.iter_mut().find_map(|item| match (item, rest) {
        (IdlInstructionAccountItem::Single(a), None) if a.name == head => Some(a),
        (IdlInstructionAccountItem::Composite(c), Some(rest)) if c.name == head => {
            find(&mut c.accounts, rest)
        }
        _ => None,
    })
}

/// The strict gate's errors for the deny reasons of a policy's limits: `6100 + code`, numbers
/// outside its error enum (see `gate::instructions::deny_error`), declared so that every
/// client generated from the IDL names them.
fn deny_errors() -> Vec<anchor_lang_idl::types::IdlErrorCode> {
    policy_vault::engine::DenyReason::ALL
        .iter()
        .filter(|r| r.code() > policy_vault::engine::DenyReason::LAST_6000_CODE)
        .map(|r| anchor_lang_idl::types::IdlErrorCode {
            code: r.strict_error_code(),
            name: r.name().to_string(),
            msg: Some(format!(
                "payment denied by the payer's policy: deny reason {} ({})",
                r.code(),
                r.name()
            )),
        })
        .collect()
}

/// Writes the declared seeds of `program` into its IDL (and the gate's deny errors).
pub fn apply(program: &str, idl: &mut Idl) -> Result<(), String> {
    if program == "gate" {
        idl.errors.extend(deny_errors());
    }
    for d in DECLARED.iter().filter(|d| d.program == program) {
        let place = format!("{program}::{}.{}", d.instruction, d.account);
        let instruction = idl
            .instructions
            .iter_mut()
            .find(|i| i.name == d.instruction)
            .ok_or_else(|| format!("declared seeds for {place}: no such instruction"))?;
        let account = find(&mut instruction.accounts, d.account)
            .ok_or_else(|| format!("declared seeds for {place}: no such account"))?;
        if account.pda.is_some() {
            return Err(format!(
                "declared seeds for {place}: the account has seeds of its own"
            ));
        }
        account.pda = Some(IdlPda {
            seeds: d.seeds.iter().map(idl_seed).collect(),
            program: d
                .owner
                .map(|id| IdlSeed::Const(IdlSeedConst { value: id.to_vec() })),
        });
    }
    Ok(())
}
