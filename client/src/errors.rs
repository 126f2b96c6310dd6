//! Names for on-chain error codes: Anchor's framework codes, the codes of our three programs
//! (read from the bundled IDLs, so the table cannot drift from the programs), and those of the
//! external registry and engine that the gate's feedback can meet.

pub use crate::error::NamedError;
use crate::idl;
use anchor_lang::prelude::Pubkey;
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

/// Errors of the external agent registry and its reputation engine that reach the gate's
/// callers through its feedback CPI: the codes and names the real programs answer with (the
/// localnet's stand-in answers the same), described in our words.
const EXTERNAL_REGISTRY: &[(u32, &str, &str)] = &[
    (
        12000,
        "UriTooLong",
        "a feedback URI is longer than 250 bytes",
    ),
    (12004, "Unauthorized", "the signer is not the agent's owner"),
    (12005, "Overflow", "a registry counter would overflow"),
    (
        12010,
        "InvalidCollection",
        "the collection is not the agent's",
    ),
    (
        12011,
        "InvalidAsset",
        "the asset is not the agent's live MPL Core asset",
    ),
    (12050, "InvalidScore", "a feedback score is above 100"),
    (
        12051,
        "ResponseUriTooLong",
        "a response URI is longer than 250 bytes",
    ),
    (
        12055,
        "InvalidFeedbackIndex",
        "the response's feedback index is not below the agent's feedback count",
    ),
    (
        12056,
        "TagTooLong",
        "a feedback tag is longer than 32 bytes",
    ),
    (
        12060,
        "EndpointTooLong",
        "a feedback endpoint is longer than 250 bytes",
    ),
    (
        12061,
        "InvalidDecimals",
        "a feedback value has more than 18 decimals",
    ),
    (
        12200,
        "DeadlineExpired",
        "the agent wallet's signed deadline has passed",
    ),
    (
        12201,
        "DeadlineTooFar",
        "the agent wallet's signed deadline is more than 5 minutes ahead",
    ),
    (
        12202,
        "MissingSignatureVerification",
        "no Ed25519 check of the agent wallet's signature right before",
    ),
    (
        12203,
        "InvalidSignature",
        "the Ed25519 check is not of the agent wallet's message",
    ),
    (
        12300,
        "SelfFeedbackNotAllowed",
        "the agent's owner cannot give it feedback",
    ),
    (
        12400,
        "InvalidProgram",
        "the engine accounts are incomplete for an agent with stats",
    ),
    (
        12401,
        "InvalidAtomStatsAccount",
        "the stats account is not the agent's",
    ),
];

/// See [`EXTERNAL_REGISTRY`].
const EXTERNAL_ENGINE: &[(u32, &str, &str)] = &[
    (6000, "InvalidScore", "a score is above 100"),
    (
        6001,
        "Unauthorized",
        "the signer is not the engine's authority",
    ),
    (
        6002,
        "UnauthorizedCaller",
        "stats are updated only through the registry",
    ),
    (
        6004,
        "Paused",
        "the reputation engine is paused: feedback to agents it rates fails until it resumes",
    ),
    (
        6005,
        "StatsNotInitialized",
        "the agent's stats are not initialized",
    ),
    (6006, "NotAssetOwner", "the signer does not own the asset"),
    (
        6007,
        "InvalidAsset",
        "the asset is not an MPL Core asset of the agent",
    ),
    (
        6010,
        "CollectionMismatch",
        "the stats belong to another collection",
    ),
];

/// Whether `program` is the reputation engine, on any network.
fn is_engine(program: &Pubkey) -> bool {
    use crate::ids::external;
    [
        external::DEVNET_REPUTATION_ENGINE,
        external::MAINNET_REPUTATION_ENGINE,
    ]
    .contains(program)
}

/// The external registry's or engine's error table, for their ids on every network.
fn external_table(program: &Pubkey) -> Option<&'static [(u32, &'static str, &'static str)]> {
    use crate::ids::external;
    if [
        external::DEVNET_AGENT_REGISTRY,
        external::MAINNET_AGENT_REGISTRY,
    ]
    .contains(program)
    {
        Some(EXTERNAL_REGISTRY)
    } else if is_engine(program) {
        Some(EXTERNAL_ENGINE)
    } else {
        None
    }
}

/// The engine's Paused (6004): while its authority has paused it, every feedback to an agent
/// it rates fails, and with it every settlement and dispute paying or disputing such an agent.
pub const ENGINE_PAUSED: u32 = 6004;

/// Whether `named` is the reputation engine's Paused.
pub fn is_engine_paused(named: &NamedError) -> bool {
    named.code == ENGINE_PAUSED
        && named
            .program
            .as_deref()
            .and_then(|p| Pubkey::from_str(p).ok())
            .is_some_and(|p| is_engine(&p))
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
    if let Some(table) = program.and_then(external_table) {
        let (_, name, msg) = table.iter().find(|(c, ..)| *c == code)?;
        return Some(NamedError {
            code,
            name: (*name).to_string(),
            message: Some((*msg).to_string()),
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

/// How long a summary of a transaction's logs is, at most (characters).
pub const LOG_SUMMARY_CHARS: usize = 400;

/// At most [`LOG_SUMMARY_CHARS`] characters of the logs that matter most: the lines of the
/// failing program and its messages, from the end (where the failure is).
pub fn summarize_logs(logs: &[String]) -> String {
    summarize_logs_within(logs, LOG_SUMMARY_CHARS)
}

/// [`summarize_logs`] in at most `max_chars` characters; a line too long for them is cut
/// between words, and the cut is marked with `…`.
fn summarize_logs_within(logs: &[String], max_chars: usize) -> String {
    let interesting: Vec<&str> = logs
        .iter()
        .map(|l| l.as_str())
        .filter(|l| !l.ends_with(" success") && !l.contains(" consumed "))
        .collect();
    let mut out: Vec<&str> = Vec::new();
    let mut len = 0;
    for line in interesting.iter().rev() {
        if len + line.len() + 3 > max_chars && !out.is_empty() {
            break;
        }
        len += line.len() + 3;
        out.push(line);
    }
    out.reverse();
    let mut s = out.join(" | ");
    if s.len() > max_chars {
        // At the last space that leaves room for the mark (else a character boundary).
        let mut cut = max_chars.saturating_sub('…'.len_utf8());
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        if let Some(space) = s[..cut].rfind(' ').filter(|at| *at > 0) {
            cut = space;
        }
        s.truncate(cut);
        s.push('…');
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
    fn the_external_registry_and_engine_are_named_on_every_network() {
        use crate::ids::external;
        for engine in [
            external::DEVNET_REPUTATION_ENGINE,
            external::MAINNET_REPUTATION_ENGINE,
        ] {
            let paused = lookup(Some(&engine), ENGINE_PAUSED).unwrap();
            assert_eq!(paused.name, "Paused");
            assert!(is_engine_paused(&paused));
        }
        let registry = lookup(Some(&external::DEVNET_AGENT_REGISTRY), 12300).unwrap();
        assert_eq!(registry.name, "SelfFeedbackNotAllowed");
        // A 6004 of the registry, or of one of our programs, is not the engine's pause.
        assert!(lookup(Some(&external::DEVNET_AGENT_REGISTRY), ENGINE_PAUSED).is_none());
        let ours = lookup(Some(&policy_vault::ID), ENGINE_PAUSED).unwrap();
        assert!(!is_engine_paused(&ours));
        // Framework codes keep their Anchor names whoever raised them.
        let short = lookup(Some(&external::DEVNET_AGENT_REGISTRY), 3005).unwrap();
        assert_eq!(short.name, "AccountNotEnoughKeys");
    }

    #[test]
    fn log_summaries_keep_the_end_and_stay_near_the_limit() {
        let logs: Vec<String> = (0..100).map(|i| format!("Program log: line {i}")).collect();
        let s = summarize_logs(&logs);
        assert!(s.len() <= LOG_SUMMARY_CHARS, "{}", s.len());
        assert!(s.ends_with("line 99"), "{s}");
        assert!(s.len() > 300);
        assert_eq!(summarize_logs(&[]), "(no logs)");
    }

    /// A warning once printed `Pro`: the summary's bound was read as lines by a caller. A
    /// line too long for the bound is cut between words and says so.
    #[test]
    fn a_line_too_long_is_cut_between_words_and_marked() {
        let long = vec![format!(
            "Program CHNLxYvVA28MJP9PrFuDXccuoGXAx7jBacfLEkahyGsX failed: {}",
            "invalid channel status ".repeat(30)
        )];
        let s = summarize_logs(&long);
        assert!(s.len() <= LOG_SUMMARY_CHARS, "{}", s.len());
        assert!(
            s.ends_with("status…") || s.ends_with("channel…") || s.ends_with("invalid…"),
            "{s}"
        );
        assert!(s.starts_with("Program CHNLxYvVA28MJP9PrFuDXccuoGXAx7jBacfLEkahyGsX failed"));
        let tiny = summarize_logs_within(&long, 12);
        assert_eq!(tiny, "Program…");
    }
}
