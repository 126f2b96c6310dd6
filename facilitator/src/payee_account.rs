//! The payee's token account as the settlement's transfer pays into it.
//!
//! A Token-2022 account with the MemoTransfer extension and `require_incoming_transfer_memos`
//! set refuses every transfer not preceded by a memo instruction (Token-2022's `NoMemo`).
//! A trust-gate settlement is exactly [gate_payment_strict, TransferChecked, emit_feedback]
//! and carries no memo, so such a payee can never be paid: /verify refuses it up front, from
//! the copy of the account that its decision's simulation returns, and /settle names the
//! refusal when the send's preflight meets it.

use crate::reject::{Reason, Rejection};
use solana_sdk::account::Account;
use solana_sdk::pubkey::Pubkey;
use trust_gate_client::settle::TokenProgram;

/// The base token account, in both programs.
const ACCOUNT_LEN: usize = 165;
/// Token-2022's `AccountType::Account`, the byte after the base of an extended account.
const ACCOUNT_TYPE_ACCOUNT: u8 = 2;
/// Token-2022's `ExtensionType::MemoTransfer`.
const MEMO_TRANSFER: u16 = 8;
/// Token-2022's `TokenError::NoMemo`.
pub const NO_MEMO: u32 = 36;

/// Whether a token account (as read) requires a memo before every incoming transfer: the
/// TLV walk over an extended Token-2022 account's data, type (u16), length (u16), value.
pub fn requires_memo(account: &Account) -> bool {
    let data = &account.data;
    if account.owner != TokenProgram::Token2022.id()
        || data.get(ACCOUNT_LEN) != Some(&ACCOUNT_TYPE_ACCOUNT)
    {
        return false;
    }
    let mut at = ACCOUNT_LEN + 1;
    while let Some(head) = data.get(at..at + 4) {
        let kind = u16::from_le_bytes([head[0], head[1]]);
        let len = usize::from(u16::from_le_bytes([head[2], head[3]]));
        let Some(value) = data.get(at + 4..at + 4 + len) else {
            return false;
        };
        // Type 0 ends the initialized extensions.
        if kind == 0 {
            return false;
        }
        if kind == MEMO_TRANSFER {
            return value.first().is_some_and(|b| *b != 0);
        }
        at += 4 + len;
    }
    false
}

/// 422 `payee_requires_memo` for the payee token account `account`.
pub fn refusal(account: &Pubkey) -> Rejection {
    Rejection::new(
        Reason::PayeeRequiresMemo,
        format!(
            "the payee's token account {account} requires a memo before every incoming transfer (Token-2022 MemoTransfer); a trust-gate settlement carries none, so it can never pay this account"
        ),
    )
    .hint("the payee's owner turns it off with Token-2022 DisableRequiredMemoTransfers")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn extended(extensions: &[(u16, &[u8])]) -> Vec<u8> {
        let mut d = vec![0u8; ACCOUNT_LEN];
        d.push(ACCOUNT_TYPE_ACCOUNT);
        for (kind, value) in extensions {
            d.extend_from_slice(&kind.to_le_bytes());
            d.extend_from_slice(&(value.len() as u16).to_le_bytes());
            d.extend_from_slice(value);
        }
        d
    }

    fn account(program: TokenProgram, data: Vec<u8>) -> Account {
        Account {
            lamports: 1,
            data,
            owner: program.id(),
            executable: false,
            rent_epoch: 0,
        }
    }

    #[test]
    fn only_a_set_memo_transfer_extension_requires_a_memo() {
        let t22 = |exts: &[(u16, &[u8])]| {
            requires_memo(&account(TokenProgram::Token2022, extended(exts)))
        };
        // ImmutableOwner (7, empty), then MemoTransfer (8) set: as an associated account
        // with required memos looks.
        assert!(t22(&[(7, &[]), (MEMO_TRANSFER, &[1])]));
        assert!(t22(&[(MEMO_TRANSFER, &[1])]));
        assert!(!t22(&[(7, &[]), (MEMO_TRANSFER, &[0])]));
        assert!(!t22(&[(7, &[])]));
        assert!(!t22(&[]));
        // Past an uninitialized entry, or a truncated one, nothing counts.
        assert!(!t22(&[(0, &[]), (MEMO_TRANSFER, &[1])]));
        let mut truncated = extended(&[(MEMO_TRANSFER, &[1])]);
        truncated.truncate(truncated.len() - 1);
        assert!(!requires_memo(&account(TokenProgram::Token2022, truncated)));
        // A plain account, an SPL Token account, or a mint (account type 1).
        assert!(!requires_memo(&account(
            TokenProgram::Token2022,
            vec![0; ACCOUNT_LEN]
        )));
        assert!(!requires_memo(&account(
            TokenProgram::SplToken,
            extended(&[(MEMO_TRANSFER, &[1])])
        )));
        let mut mint = extended(&[(MEMO_TRANSFER, &[1])]);
        mint[ACCOUNT_LEN] = 1;
        assert!(!requires_memo(&account(TokenProgram::Token2022, mint)));
    }
}
