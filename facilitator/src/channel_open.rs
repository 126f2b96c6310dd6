//! The open verifier of x402's `upto` scheme: what a client-built channel open must be before
//! the facilitator co-signs it (as the fee payer and the channel's rent payer it pays for it).
//! Pure (no RPC): the caller passes the slot, its lookup tables and its compute caps.
//!
//! The stock scheme's open (as `@x402/svm` 2.27 builds and checks it) is [at most a unit limit
//! and a unit price, the payment-channels program's `open`, at most four Memo or Lighthouse
//! instructions], no lookup table, signed by the payer and the fee payer only, writing no
//! account but the open's own. The gated variant puts `gate_channel_open` right before the
//! `open`, allows the facilitator's lookup tables, and ends with at most two Memo
//! instructions without accounts (the gate enforces its layout on chain too).
//!
//! The `open` itself is compared with the one the SDK composes from the payload and the
//! requirements (every account, its privileges and every byte of data): the payer, the
//! channel, the salt, the deposit, the grace period, the slot, 100 % to `payTo`, the
//! facilitator as rent payer and payee, the voucher key. The named mismatches come first.

use crate::config::ComputeCaps;
use crate::inspect::{
    account_keys, approval_pair, check_signatures, compare, optional_accounts_of, resolve, Keys,
    Resolved,
};
use crate::reject::{Reason, Rejection};
use solana_sdk::instruction::Instruction;
use solana_sdk::message::AddressLookupTableAccount;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::transaction::VersionedTransaction;
use trust_gate_client::channels::{self, Open, Split, OPEN_SLOT_WINDOW};
use trust_gate_client::decode::ApprovalTerms;
use trust_gate_client::instructions::{ApprovalUse, Attestations};
use trust_gate_client::settle::{ComputeBudget, TokenProgram};
use trust_gate_client::Builder;
use trust_gate_program_common::external::ids::MEMO;
use trust_gate_x402::upto;

/// The Lighthouse program (assertions a wallet may add to a transaction).
pub const LIGHTHOUSE: Pubkey = solana_sdk::pubkey!("L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95");

/// What a gated open must also be.
#[derive(Clone, Copy, Debug)]
pub struct Gated {
    pub payer_asset: Pubkey,
    pub payee_asset: Pubkey,
    pub policy_id: u32,
}

impl From<&crate::adapter::ChannelGate> for Gated {
    fn from(g: &crate::adapter::ChannelGate) -> Self {
        Gated {
            payer_asset: g.payer_asset,
            payee_asset: g.payee_asset,
            policy_id: g.policy_id,
        }
    }
}

impl From<&crate::sessions::GatedTerms> for Gated {
    fn from(g: &crate::sessions::GatedTerms) -> Self {
        Gated {
            payer_asset: g.payer_asset,
            payee_asset: g.payee_asset,
            policy_id: g.policy_id,
        }
    }
}

/// What the facilitator checking the open brings: its key and programs, the cluster's slot,
/// its compute caps and its own lookup tables (the only ones a gated open may load from).
#[derive(Clone, Copy, Debug)]
pub struct Here<'a> {
    pub builder: &'a Builder,
    pub facilitator: Pubkey,
    /// The cluster's slot now (the open's slot must be at most 1 500 slots older).
    pub slot: u64,
    pub compute: &'a ComputeCaps,
    pub tables: &'a [AddressLookupTableAccount],
}

/// What the open is checked against: the requirements and the payload.
#[derive(Clone, Copy, Debug)]
pub struct Expected<'a> {
    pub mint: Pubkey,
    pub token_program: TokenProgram,
    pub pay_to: Pubkey,
    pub receiver_authorizer: Pubkey,
    pub withdraw_delay: u32,
    /// The ceiling: `maxAmount` and the deposit.
    pub ceiling: u64,
    pub from: Pubkey,
    pub salt: u64,
    pub open_slot: u64,
    pub channel: Pubkey,
    /// `extra.memo`.
    pub memo: Option<&'a str>,
    /// A Memo the open must carry exactly once besides the seller's (`batch-settlement`'s
    /// binding of the receiver's authorizer).
    pub binding_memo: Option<&'a str>,
    pub gated: Option<Gated>,
}

/// An open that passed every check.
#[derive(Clone, Debug)]
pub struct Checked {
    pub tx: VersionedTransaction,
    pub open: Open,
    /// The deposit's approval the gated open uses up.
    pub approval: Option<ApprovalUse>,
}

fn open_tx(message: impl Into<String>) -> Rejection {
    Rejection::new(Reason::UptoOpenTransaction, message)
}

/// `ix` is exactly `want`: its program, then the settlement's own comparison (data, every
/// account and the privileges it needs), each mismatch named as the open's.
fn same_instruction(
    what: &str,
    ix: &Resolved,
    keys: &Keys,
    want: &Instruction,
) -> Result<(), Rejection> {
    if ix.program_id != want.program_id {
        return Err(open_tx(format!(
            "the {what} is a call of {}, not of {}",
            ix.program_id, want.program_id
        )));
    }
    compare(what, ix, want, keys).map_err(|r| open_tx(r.message))
}

/// The attestation accounts a gate_channel_open names (see `inspect::optional_accounts_of`),
/// and how many accounts it has before its remaining accounts.
fn attestations(b: &Builder, gate: &Resolved) -> (Attestations, usize) {
    let none = Pubkey::default();
    let placeholder = b.gate_channel_open(
        &none,
        &none,
        &none,
        &none,
        &none,
        0,
        0,
        &none,
        Attestations::default(),
    );
    (
        optional_accounts_of(b, &placeholder, gate).0,
        placeholder.accounts.len(),
    )
}

/// Runs every check of the open (see the module docs).
pub fn verify(
    tx: VersionedTransaction,
    h: Here<'_>,
    e: Expected<'_>,
) -> Result<Checked, Rejection> {
    let tables = if e.gated.is_some() { h.tables } else { &[] };
    let lookups = tx.message.address_table_lookups().map_or(0, |l| l.len());
    if e.gated.is_none() && lookups > 0 {
        return Err(open_tx("an upto open loads no account from a lookup table"));
    }
    let keys = account_keys(&tx.message, tables)?;
    let ixs = resolve(&tx.message, &keys)?;

    // The fee payer.
    if keys.first().map(|k| k.0) != Some(h.facilitator) {
        return Err(Rejection::new(
            Reason::UptoFacilitatorMismatch,
            format!(
                "the open's fee payer is not this facilitator ({})",
                h.facilitator
            ),
        ));
    }

    // The compute budget prefix, within the scheme's caps and this facilitator's.
    let prefix = ixs
        .iter()
        .take_while(|ix| ix.program_id == gate::settlement::COMPUTE_BUDGET_PROGRAM_ID)
        .count();
    let as_ix = |r: &Resolved| Instruction::new_with_bytes(r.program_id, &r.data, vec![]);
    let budget = ComputeBudget::parse(&ixs[..prefix].iter().map(as_ix).collect::<Vec<_>>())
        .ok_or_else(|| open_tx("the compute budget prefix is at most a unit limit then a unit price, each well formed"))?;
    if budget.unit_limit.unwrap_or(0) > upto::MAX_OPEN_UNIT_LIMIT
        || budget.unit_price_micro_lamports.unwrap_or(0) > upto::MAX_OPEN_UNIT_PRICE_MICRO_LAMPORTS
    {
        return Err(open_tx(format!(
            "the open asks for more than {} compute units or {} micro-lamports a unit",
            upto::MAX_OPEN_UNIT_LIMIT,
            upto::MAX_OPEN_UNIT_PRICE_MICRO_LAMPORTS
        )));
    }
    crate::budget::check(&budget, ixs.len() - prefix, h.compute)?;

    // The gate, for the gated variant.
    let mut at = prefix;
    let open = Open {
        payer: e.from,
        rent_payer: h.facilitator,
        payee: h.facilitator,
        mint: e.mint,
        token_program: e.token_program,
        authorized_signer: e.receiver_authorizer,
        salt: e.salt,
        deposit: e.ceiling,
        grace_period: e.withdraw_delay,
        open_slot: e.open_slot,
        splits: vec![Split {
            recipient: e.pay_to,
            bps: channels::ALL_BPS,
        }],
    };
    let mut writable = vec![
        h.facilitator,
        e.from,
        open.channel(),
        e.token_program.associated_account(&e.from, &e.mint),
        open.escrow(),
    ];
    let mut approval = None;
    if let Some(g) = e.gated {
        let gate = ixs
            .get(at)
            .filter(|ix| ix.program_id == h.builder.ids.gate)
            .ok_or_else(|| {
                open_tx("a gated open has gate_channel_open right before the program's open")
            })?;
        let (att, own) = attestations(h.builder, gate);
        let mut want = h.builder.gate_channel_open(
            &e.from,
            &g.payer_asset,
            &g.payee_asset,
            &h.facilitator,
            &e.mint,
            e.ceiling,
            g.policy_id,
            &open.channel(),
            att,
        );
        // A deposit above the approval threshold passes its approval (and its rent payer).
        let terms = ApprovalTerms {
            payer_asset: g.payer_asset,
            payee_asset: g.payee_asset,
            mint: e.mint,
            amount: e.ceiling,
            policy_id: g.policy_id,
        };
        let want_approval = h.builder.pda.approval(&terms);
        approval = approval_pair("gate_channel_open", gate, own, &want_approval)
            .map_err(|r| open_tx(r.message))?;
        if let Some(a) = &approval {
            a.append_to(&mut want);
        }
        same_instruction("gate_channel_open", gate, &keys, &want)?;
        writable.extend(
            want.accounts
                .iter()
                .filter(|m| m.is_writable)
                .map(|m| m.pubkey),
        );
        at += 1;
    }

    // The open: the named mismatches, then every byte.
    let ix = ixs
        .get(at)
        .filter(|ix| {
            ix.program_id == channels::PROGRAM_ID && ix.data.first() == Some(&channels::tag::OPEN)
        })
        .ok_or_else(|| {
            open_tx("the open transaction has no payment-channels open where it must be")
        })?;
    let account = |i: usize| ix.accounts.get(i).copied().unwrap_or_default();
    if account(0) != e.from {
        return Err(Rejection::new(
            Reason::UptoPayerMismatch,
            format!(
                "the open's payer is {}; the payload's from is {}",
                account(0),
                e.from
            ),
        ));
    }
    let salt = ix
        .data
        .get(1..9)
        .map(|s| u64::from_le_bytes(s.try_into().unwrap_or_default()));
    if salt != Some(e.salt) {
        return Err(Rejection::new(
            Reason::UptoNonce,
            "the open's salt is not the payload's nonce",
        ));
    }
    if open.channel() != e.channel || account(5) != e.channel {
        return Err(Rejection::new(
            Reason::UptoChannelId,
            format!(
                "the payload's channelId {} is not the channel the open creates",
                e.channel
            ),
        ));
    }
    if e.open_slot > h.slot || h.slot - e.open_slot > OPEN_SLOT_WINDOW {
        return Err(open_tx(format!(
            "the open's slot {} is not within the {OPEN_SLOT_WINDOW} slots up to the cluster's {}",
            e.open_slot, h.slot
        )));
    }
    same_instruction("open", ix, &keys, &open.instruction())?;
    at += 1;

    // What may follow: memos (and, stock, Lighthouse assertions), none asking for the
    // facilitator's account.
    let suffix = &ixs[at..];
    let memos: Vec<&Resolved> = suffix.iter().filter(|ix| ix.program_id == MEMO).collect();
    let lighthouse = suffix
        .iter()
        .filter(|ix| ix.program_id == LIGHTHOUSE)
        .count();
    let (max, max_lighthouse) = if e.gated.is_some() {
        (usize::from(gate::channel::MAX_MEMOS), 0)
    } else {
        (upto::MAX_OPEN_SUFFIX, upto::MAX_LIGHTHOUSE)
    };
    if memos.len() + lighthouse != suffix.len() || suffix.len() > max || lighthouse > max_lighthouse
    {
        return Err(open_tx(format!(
            "after the open come at most {max} Memo{} instructions, nothing else",
            if max_lighthouse > 0 {
                " or Lighthouse"
            } else {
                ""
            }
        )));
    }
    if suffix.iter().any(|ix| ix.accounts.contains(&h.facilitator))
        || (e.gated.is_some() && memos.iter().any(|m| !m.accounts.is_empty()))
    {
        return Err(open_tx(
            "a memo after the open names an account (the facilitator's, or any in a gated open)",
        ));
    }
    let mut memos = memos;
    if let Some(binding) = e.binding_memo {
        let bound = memos
            .iter()
            .filter(|m| m.data == binding.as_bytes())
            .count();
        if bound != 1 {
            return Err(open_tx(format!(
                "the open carries exactly one binding Memo {binding:?}"
            )));
        }
        memos.retain(|m| m.data != binding.as_bytes());
    }
    if let Some(memo) = e.memo.filter(|m| !m.is_empty()) {
        if memos.len() != 1 || memos[0].data != memo.as_bytes() {
            return Err(open_tx("the open carries exactly one Memo, of extra.memo"));
        }
    }

    // Nothing else is written.
    if let Some(k) = keys.iter().find(|k| k.2 && !writable.contains(&k.0)) {
        return Err(open_tx(format!(
            "the open transaction writes {}, which no part of an open needs",
            k.0
        )));
    }

    // No signer but the facilitator and the payer (the open makes the payer one), whose
    // signature verifies: the settlement's check, its reasons named as the open's.
    check_signatures(&tx, &keys, &h.facilitator, &e.from).map_err(|r| {
        let reason = match r.reason {
            Reason::MissingClientSignature | Reason::InvalidClientSignature => {
                Reason::UptoPayerMismatch
            }
            _ => Reason::UptoOpenTransaction,
        };
        Rejection::new(reason, r.message)
    })?;
    Ok(Checked { tx, open, approval })
}

#[cfg(test)]
mod tests {
    use super::*;
    use solana_sdk::hash::Hash;
    use solana_sdk::instruction::AccountMeta;
    use solana_sdk::message::{v0, VersionedMessage};
    use solana_sdk::signature::{Keypair, Signature, Signer};
    use trust_gate_client::settle::ComputeBudget;
    use trust_gate_client::{Network, ProgramIds};

    /// A Memo instruction of `data` naming `account`.
    fn memo(data: &[u8], account: AccountMeta) -> Instruction {
        Instruction::new_with_bytes(MEMO, data, vec![account])
    }

    struct Case {
        b: Builder,
        facilitator: Pubkey,
        payer: Keypair,
        mint: Pubkey,
        pay_to: Pubkey,
        voucher_key: Pubkey,
        caps: ComputeCaps,
    }

    fn case() -> Case {
        Case {
            b: Builder::new(ProgramIds::for_network(Network::Localnet)).unwrap(),
            facilitator: Pubkey::new_unique(),
            payer: Keypair::new(),
            mint: Pubkey::new_unique(),
            pay_to: Pubkey::new_unique(),
            voucher_key: Keypair::new().pubkey(),
            caps: ComputeCaps::default(),
        }
    }

    impl Case {
        fn open(&self) -> Open {
            Open {
                payer: self.payer.pubkey(),
                rent_payer: self.facilitator,
                payee: self.facilitator,
                mint: self.mint,
                token_program: TokenProgram::SplToken,
                authorized_signer: self.voucher_key,
                salt: 7,
                deposit: 5_000_000,
                grace_period: 900,
                open_slot: 1_000,
                splits: vec![Split {
                    recipient: self.pay_to,
                    bps: channels::ALL_BPS,
                }],
            }
        }

        fn here<'a>(&'a self, tables: &'a [AddressLookupTableAccount]) -> Here<'a> {
            Here {
                builder: &self.b,
                facilitator: self.facilitator,
                slot: 1_010,
                compute: &self.caps,
                tables,
            }
        }

        fn expected(&self, gated: Option<Gated>) -> Expected<'_> {
            let open = self.open();
            Expected {
                mint: self.mint,
                token_program: TokenProgram::SplToken,
                pay_to: self.pay_to,
                receiver_authorizer: self.voucher_key,
                withdraw_delay: 900,
                ceiling: 5_000_000,
                from: self.payer.pubkey(),
                salt: 7,
                open_slot: 1_000,
                channel: open.channel(),
                memo: Some("seller memo"),
                binding_memo: None,
                gated,
            }
        }

        /// The client's stock open: a unit limit and price, the open, the seller's memo.
        fn stock(&self) -> Vec<Instruction> {
            let mut ixs = ComputeBudget {
                unit_limit: Some(90_000),
                unit_price_micro_lamports: Some(1),
            }
            .instructions();
            ixs.push(self.open().instruction());
            ixs.push(Instruction::new_with_bytes(MEMO, b"seller memo", vec![]));
            ixs
        }

        /// `ixs` as the client sends them: v0, paid by the facilitator (its signature slot
        /// empty), signed by the payer.
        fn signed(
            &self,
            ixs: &[Instruction],
            tables: &[AddressLookupTableAccount],
        ) -> VersionedTransaction {
            let message =
                v0::Message::try_compile(&self.facilitator, ixs, tables, Hash::new_unique())
                    .unwrap();
            let message = VersionedMessage::V0(message);
            let keys = message.static_account_keys().to_vec();
            let n = usize::from(message.header().num_required_signatures);
            let mut signatures = vec![Signature::default(); n];
            let at = keys.iter().position(|k| *k == self.payer.pubkey()).unwrap();
            signatures[at] = self.payer.sign_message(&message.serialize());
            VersionedTransaction {
                signatures,
                message,
            }
        }
    }

    fn reason_of(r: Result<Checked, Rejection>) -> String {
        match r {
            Ok(_) => "accepted".into(),
            Err(e) => e.reason.wire().into(),
        }
    }

    #[test]
    fn the_stock_open_is_accepted() {
        let c = case();
        let checked = verify(c.signed(&c.stock(), &[]), c.here(&[]), c.expected(None)).unwrap();
        assert_eq!(checked.open.channel(), c.open().channel());
    }

    #[test]
    fn each_deviation_of_a_stock_open_is_named() {
        let c = case();
        let with = |edit: &dyn Fn(&mut Vec<Instruction>)| {
            let mut ixs = c.stock();
            edit(&mut ixs);
            reason_of(verify(c.signed(&ixs, &[]), c.here(&[]), c.expected(None)))
        };
        let other_open = |edit: &dyn Fn(&mut Open)| {
            let mut o = c.open();
            edit(&mut o);
            let mut ixs = c.stock();
            ixs[2] = o.instruction();
            reason_of(verify(c.signed(&ixs, &[]), c.here(&[]), c.expected(None)))
        };
        assert_eq!(other_open(&|o| o.salt = 8), Reason::UptoNonce);
        assert_eq!(
            other_open(&|o| o.deposit = 4_999_999),
            Reason::UptoOpenTransaction
        );
        assert_eq!(
            other_open(&|o| o.grace_period = 60),
            Reason::UptoOpenTransaction
        );
        assert_eq!(
            other_open(&|o| o.splits[0].recipient = Pubkey::new_unique()),
            Reason::UptoOpenTransaction
        );
        assert_eq!(
            other_open(&|o| o.authorized_signer = Keypair::new().pubkey()),
            Reason::UptoChannelId
        );
        // The memo: missing, or another.
        assert_eq!(
            with(&|ixs| {
                ixs.pop();
            }),
            Reason::UptoOpenTransaction
        );
        assert_eq!(
            with(&|ixs| ixs[3] = Instruction::new_with_bytes(MEMO, b"other", vec![])),
            Reason::UptoOpenTransaction
        );
        // Anything else after the open, or a memo naming the facilitator.
        assert_eq!(
            with(&|ixs| ixs.push(channels::settle(&c.open().channel()))),
            Reason::UptoOpenTransaction
        );
        assert_eq!(
            with(&|ixs| ixs.push(memo(b"x", AccountMeta::new_readonly(c.facilitator, false)))),
            Reason::UptoOpenTransaction
        );
        // Too many compute units for the scheme.
        assert_eq!(
            with(&|ixs| ixs[0] = ComputeBudget::limit(upto::MAX_OPEN_UNIT_LIMIT + 1)[0].clone()),
            Reason::UptoOpenTransaction
        );
        // Another writable account: a transfer's destination riding along.
        assert_eq!(
            with(&|ixs| ixs.push(memo(b"", AccountMeta::new(Pubkey::new_unique(), false)))),
            Reason::UptoOpenTransaction
        );
    }

    #[test]
    fn the_fee_payer_the_signers_the_slot_and_the_payers_signature() {
        let c = case();
        let tx = c.signed(&c.stock(), &[]);
        let other = Here {
            facilitator: Pubkey::new_unique(),
            ..c.here(&[])
        };
        assert_eq!(
            reason_of(verify(tx.clone(), other, c.expected(None))),
            Reason::UptoFacilitatorMismatch
        );
        let late = Here {
            slot: 1_000 + OPEN_SLOT_WINDOW + 1,
            ..c.here(&[])
        };
        assert_eq!(
            reason_of(verify(tx.clone(), late, c.expected(None))),
            Reason::UptoOpenTransaction
        );
        let mut unsigned = tx;
        for s in &mut unsigned.signatures {
            *s = Signature::default();
        }
        assert_eq!(
            reason_of(verify(unsigned, c.here(&[]), c.expected(None))),
            Reason::UptoPayerMismatch
        );
        // A third signer.
        let mut ixs = c.stock();
        let stranger = Keypair::new();
        ixs.push(memo(
            b"",
            AccountMeta::new_readonly(stranger.pubkey(), true),
        ));
        assert_eq!(
            reason_of(verify(c.signed(&ixs, &[]), c.here(&[]), c.expected(None))),
            Reason::UptoOpenTransaction
        );
    }

    #[test]
    fn a_gated_open_needs_the_gate_and_may_use_the_facilitators_table() {
        let c = case();
        let (payer_asset, payee_asset) = (Pubkey::new_unique(), Pubkey::new_unique());
        let channel = c.open().channel();
        // The gate's instruction for a deposit of 5 000 000 under policy 1.
        let gate_open = |att| {
            c.b.gate_channel_open(
                &c.payer.pubkey(),
                &payer_asset,
                &payee_asset,
                &c.facilitator,
                &c.mint,
                5_000_000,
                1,
                &channel,
                att,
            )
        };
        let gate = gate_open(Attestations::default());
        let table = AddressLookupTableAccount {
            key: Pubkey::new_unique(),
            addresses: vec![
                c.b.ids.policy_vault,
                c.b.pda.evaluate_signer(),
                c.mint,
                channels::event_authority(),
            ],
        };
        let gated = Gated {
            payer_asset,
            payee_asset,
            policy_id: 1,
        };
        let tables = std::slice::from_ref(&table);
        let mut ixs = c.stock();
        ixs.insert(2, gate.clone());
        let tx = c.signed(&ixs, std::slice::from_ref(&table));
        assert!(tx
            .message
            .address_table_lookups()
            .is_some_and(|l| !l.is_empty()));
        verify(tx.clone(), c.here(tables), c.expected(Some(gated))).unwrap();
        // The stock verifier refuses the table, and the gate without gating.
        assert_eq!(
            reason_of(verify(tx, c.here(&[]), c.expected(None))),
            Reason::UptoOpenTransaction
        );
        // Without the gate, or with the gate on another policy or deposit.
        assert_eq!(
            reason_of(verify(
                c.signed(&c.stock(), &[]),
                c.here(tables),
                c.expected(Some(gated))
            )),
            Reason::UptoOpenTransaction
        );
        for wrong in [
            Gated {
                policy_id: 2,
                ..gated
            },
            Gated {
                payee_asset: Pubkey::new_unique(),
                ..gated
            },
        ] {
            assert_eq!(
                reason_of(verify(
                    c.signed(&ixs, std::slice::from_ref(&table)),
                    c.here(tables),
                    c.expected(Some(wrong))
                )),
                Reason::UptoOpenTransaction
            );
        }
        // With the attestations the payee's acceptance and the payer's policy ask for: read
        // from the gate's optional slots, then held to the composed instruction.
        let attested = gate_open(Attestations {
            payer: Some(Pubkey::new_unique()),
            payee: Some(Pubkey::new_unique()),
            payee_list: None,
        });
        let mut with = c.stock();
        with.insert(2, attested);
        verify(
            c.signed(&with, std::slice::from_ref(&table)),
            c.here(tables),
            c.expected(Some(gated)),
        )
        .unwrap();
        // A table that is not the facilitator's.
        let stranger = AddressLookupTableAccount {
            key: Pubkey::new_unique(),
            ..table.clone()
        };
        let tx = c.signed(&ixs, std::slice::from_ref(&stranger));
        assert_eq!(
            reason_of(verify(tx, c.here(tables), c.expected(Some(gated)))),
            "lookup_table_not_allowed"
        );
    }
}
