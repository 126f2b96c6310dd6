//! Names for on-chain error codes: Anchor's framework codes and the codes of our three
//! programs (read from the bundled IDLs, so the table cannot drift from the programs).

use crate::idl;
use anchor_lang::prelude::Pubkey;
use serde::Serialize;
use solana_sdk::instruction::InstructionError;
use solana_sdk::transaction::TransactionError;
use std::collections::HashMap;
use std::str::FromStr;
use std::sync::OnceLock;

/// Anchor framework codes that a caller of our programs can meet.
const ANCHOR: &[(u32, &str)] = &[
    (100, "InstructionMissing"),
    (101, "InstructionFallbackNotFound"),
    (102, "InstructionDidNotDeserialize"),
    (103, "InstructionDidNotSerialize"),
    (2000, "ConstraintMut"),
    (2001, "ConstraintHasOne"),
    (2002, "ConstraintSigner"),
    (2003, "ConstraintRaw"),
    (2004, "ConstraintOwner"),
    (2005, "ConstraintRentExempt"),
    (2006, "ConstraintSeeds"),
    (2007, "ConstraintExecutable"),
    (2009, "ConstraintAssociated"),
    (2011, "ConstraintClose"),
    (2012, "ConstraintAddress"),
    (2014, "ConstraintTokenMint"),
    (2015, "ConstraintTokenOwner"),
    (3000, "AccountDiscriminatorAlreadySet"),
    (3001, "AccountDiscriminatorNotFound"),
    (3002, "AccountDiscriminatorMismatch"),
    (3003, "AccountDidNotDeserialize"),
    (3004, "AccountDidNotSerialize"),
    (3005, "AccountNotEnoughKeys"),
    (3006, "AccountNotMutable"),
    (3007, "AccountOwnedByWrongProgram"),
    (3008, "InvalidProgramId"),
    (3009, "InvalidProgramExecutable"),
    (3010, "AccountNotSigner"),
    (3011, "AccountNotSystemOwned"),
    (3012, "AccountNotInitialized"),
    (3013, "AccountNotProgramData"),
    (3014, "AccountNotAssociatedTokenAccount"),
    (3015, "AccountSysvarMismatch"),
    (3016, "AccountReallocExceedsLimit"),
    (3017, "AccountDuplicateReallocs"),
];

/// A named on-chain error.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NamedError {
    pub code: u32,
    pub name: String,
    /// The program's message, when known.
    pub message: Option<String>,
    /// The program that raised it, when known.
    pub program: Option<String>,
}

type Table = HashMap<(Pubkey, u32), (String, String)>;

fn program_table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = Table::new();
        for program in crate::ids::Program::ALL {
            let Ok(doc) = idl::bundled(program) else {
                continue;
            };
            let Some(address) = doc
                .get("address")
                .and_then(|a| a.as_str())
                .and_then(|a| Pubkey::from_str(a).ok())
            else {
                continue;
            };
            for e in doc["errors"].as_array().into_iter().flatten() {
                if let (Some(code), Some(name)) = (e["code"].as_u64(), e["name"].as_str()) {
                    let msg = e["msg"].as_str().unwrap_or_default().to_string();
                    t.insert((address, code as u32), (name.to_string(), msg));
                }
            }
        }
        t
    })
}

/// The name of `code` raised by `program` (or by any of our programs when `program` is
/// unknown and the code is unambiguous).
pub fn lookup(program: Option<&Pubkey>, code: u32) -> Option<NamedError> {
    if let Some((_, name)) = ANCHOR.iter().find(|(c, _)| *c == code) {
        return Some(NamedError {
            code,
            name: (*name).to_string(),
            message: None,
            program: program.map(|p| p.to_string()),
        });
    }
    let table = program_table();
    let hit = match program {
        Some(p) => table.get_key_value(&(*p, code)),
        None => {
            let mut hits = table.iter().filter(|((_, c), _)| *c == code);
            match (hits.next(), hits.next()) {
                (Some(one), None) => Some(one),
                _ => None,
            }
        }
    }?;
    let ((address, _), (name, msg)) = hit;
    Some(NamedError {
        code,
        name: name.clone(),
        message: Some(msg.clone()),
        program: Some(address.to_string()),
    })
}

/// The name of `code` when it is unambiguous without knowing the program.
pub fn error_name(code: u32) -> Option<String> {
    lookup(None, code).map(|e| e.name)
}

/// The custom program error code of a failed transaction.
pub fn custom_code(err: &TransactionError) -> Option<u32> {
    match err {
        TransactionError::InstructionError(_, InstructionError::Custom(c)) => Some(*c),
        _ => None,
    }
}

/// The innermost program that failed with a custom error, read from the logs
/// ("Program <id> failed: custom program error: 0x..").
pub fn failing_program(logs: &[String]) -> Option<Pubkey> {
    logs.iter().find_map(|l| {
        let rest = l.strip_prefix("Program ")?;
        let (id, tail) = rest.split_once(' ')?;
        tail.starts_with("failed: custom program error")
            .then(|| Pubkey::from_str(id).ok())
            .flatten()
    })
}

/// Names the custom error of a failed transaction from its error and logs.
pub fn explain(err: &TransactionError, logs: &[String]) -> Option<NamedError> {
    let code = custom_code(err)?;
    let program = failing_program(logs);
    lookup(program.as_ref(), code).or(Some(NamedError {
        code,
        name: format!("Custom({code})"),
        message: None,
        program: program.map(|p| p.to_string()),
    }))
}

/// About `limit` characters of the logs that matter most: the lines of the failing program and
/// its messages, from the end (where the failure is).
pub fn summarize_logs(logs: &[String], limit: usize) -> String {
    let interesting: Vec<&str> = logs
        .iter()
        .map(|l| l.as_str())
        .filter(|l| !l.ends_with(" success") && !l.contains(" consumed "))
        .collect();
    let mut out: Vec<&str> = Vec::new();
    let mut len = 0;
    for line in interesting.iter().rev() {
        if len + line.len() + 3 > limit && !out.is_empty() {
            break;
        }
        len += line.len() + 3;
        out.push(line);
    }
    out.reverse();
    let mut s = out.join(" | ");
    if s.len() > limit {
        let cut = (0..=limit)
            .rev()
            .find(|i| s.is_char_boundary(*i))
            .unwrap_or(0);
        s.truncate(cut);
    }
    if s.is_empty() {
        "(no logs)".into()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_anchor_and_the_bundled_idls() {
        assert_eq!(error_name(3012).as_deref(), Some("AccountNotInitialized"));
        let gate_6006 = lookup(Some(&gate::ID), 6006).unwrap();
        assert_eq!(gate_6006.name, "CounterpartyTierBelowMin");
        // 6000 means something different in each program: ambiguous without the program.
        assert!(lookup(None, 6000).is_none());
        let pv = lookup(Some(&policy_vault::ID), 6000).unwrap();
        assert_eq!(pv.name, "UnknownKindBits");
    }

    #[test]
    fn the_failing_program_is_read_from_the_logs() {
        let logs: Vec<String> = vec![
            format!("Program {} invoke [1]", gate::ID),
            format!("Program {} invoke [2]", policy_vault::ID),
            format!(
                "Program {} failed: custom program error: 0xbc4",
                policy_vault::ID
            ),
            format!("Program {} failed: custom program error: 0xbc4", gate::ID),
        ];
        assert_eq!(failing_program(&logs), Some(policy_vault::ID));
        let err = TransactionError::InstructionError(0, InstructionError::Custom(3012));
        assert_eq!(explain(&err, &logs).unwrap().name, "AccountNotInitialized");
    }

    #[test]
    fn log_summaries_keep_the_end_and_stay_near_the_limit() {
        let logs: Vec<String> = (0..100).map(|i| format!("Program log: line {i}")).collect();
        let s = summarize_logs(&logs, 400);
        assert!(s.len() <= 400, "{}", s.len());
        assert!(s.ends_with("line 99"), "{s}");
        assert!(s.len() > 300);
        assert_eq!(summarize_logs(&[], 400), "(no logs)");
    }
}
