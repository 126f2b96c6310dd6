//! The payer's side of the channel schemes: an x402 `batch-settlement` session (client mode),
//! plain or gated: the channel's open (the deposit a first request carries, the gate's
//! `gate_channel_open` before it when gated, the binding Memo after it), and one voucher a
//! request, each raising the cumulative amount by the request's price; and an x402 `upto`
//! payment's open and payload ([`UptoTerms`]), plain or gated. What `trust-gate pay --scheme batch-settlement`
//! and the TypeScript SDK's scheme send; the facilitator checks exactly this
//! (`trust_gate_facilitator::schemes::batch`).

use anchor_lang::prelude::Pubkey;
use base64::{engine::general_purpose::STANDARD, Engine as _};
use solana_sdk::hash::Hash;
use solana_sdk::instruction::Instruction;
use solana_sdk::message::AddressLookupTableAccount;
use solana_sdk::signature::{Keypair, Signer};
use solana_sdk::transaction::VersionedTransaction;
use trust_gate_client::channels::{self, Open, Split};
use trust_gate_client::error::ClientError;
use trust_gate_client::instructions::{ApprovalUse, Attestations, Builder};
use trust_gate_client::settle::{self, ComputeBudget};
use trust_gate_client::token::TokenProgram;
use trust_gate_client::vouchers::Voucher;
use trust_gate_program_common::external::ids::MEMO;
use trust_gate_x402::batch::{
    self, BatchExtra, BatchPayload, BatchVoucher, ChannelConfig, ChannelState, DepositTx,
    VoucherState,
};
use trust_gate_x402::upto::{UptoExtra, UptoPayload, WireU64};

/// The open's compute-unit limit (a plain open measures about 40 000, a gated one about
/// 60 000 more with its policy check).
pub const OPEN_UNIT_LIMIT: u32 = 150_000;

/// The gated variant's terms: whose policy decides the deposit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionGate {
    pub payer_asset: Pubkey,
    pub payee_asset: Pubkey,
    pub policy_id: u32,
    pub attestations: Attestations,
    /// The deposit's approval on chain, when it is above the payer policy's approval
    /// threshold (`chain::approval_use_of` of the deposit's terms); the open uses it up.
    pub approval: Option<ApprovalUse>,
}

/// A payer's open of a channel that pays everything to `pay_to`, the facilitator `fee_payer`
/// sponsoring it (fee payer, rent payer, zero-share payee): both channel schemes' opens.
struct ChannelOpen<'a> {
    builder: &'a Builder,
    payer: &'a Keypair,
    fee_payer: Pubkey,
    mint: Pubkey,
    token_program: TokenProgram,
    pay_to: Pubkey,
    voucher_key: Pubkey,
    salt: u64,
    deposit: u64,
    grace_period: u32,
    open_slot: u64,
    gate: Option<SessionGate>,
    /// The offer's memo (none when empty).
    memo: Option<&'a str>,
    /// A session's binding Memo, last.
    binding: Option<String>,
    /// The facilitator's lookup tables, used when gated (a plain open has none, as the stock
    /// schemes require).
    tables: &'a [AddressLookupTableAccount],
    blockhash: Hash,
}

impl ChannelOpen<'_> {
    /// [unit limit, `gate_channel_open` when gated, `open`, the memo, the binding Memo],
    /// signed by the payer (the fee payer's slot empty), and the channel's address.
    fn transaction(self) -> Result<(VersionedTransaction, Pubkey), ClientError> {
        let open = Open {
            payer: self.payer.pubkey(),
            rent_payer: self.fee_payer,
            payee: self.fee_payer,
            mint: self.mint,
            token_program: self.token_program,
            authorized_signer: self.voucher_key,
            salt: self.salt,
            deposit: self.deposit,
            grace_period: self.grace_period,
            open_slot: self.open_slot,
            splits: vec![Split {
                recipient: self.pay_to,
                bps: channels::ALL_BPS,
            }],
        };
        let channel = open.channel();
        let mut ixs = ComputeBudget {
            unit_limit: Some(OPEN_UNIT_LIMIT),
            unit_price_micro_lamports: None,
        }
        .instructions();
        if let Some(g) = self.gate {
            let mut gate = self.builder.gate_channel_open(
                &self.payer.pubkey(),
                &g.payer_asset,
                &g.payee_asset,
                &self.fee_payer,
                &self.mint,
                self.deposit,
                g.policy_id,
                &channel,
                g.attestations,
            );
            if let Some(a) = &g.approval {
                let terms = trust_gate_client::decode::ApprovalTerms {
                    payer_asset: g.payer_asset,
                    payee_asset: g.payee_asset,
                    mint: self.mint,
                    amount: self.deposit,
                    policy_id: g.policy_id,
                };
                settle::check_approval(self.builder, a, &terms)?;
                a.append_to(&mut gate);
            }
            ixs.push(gate);
        }
        ixs.push(open.instruction());
        let memo = |text: &str| Instruction::new_with_bytes(MEMO, text.as_bytes(), vec![]);
        if let Some(m) = self.memo.filter(|m| !m.is_empty()) {
            ixs.push(memo(m));
        }
        if let Some(b) = &self.binding {
            ixs.push(memo(b));
        }
        let tables = if self.gate.is_some() {
            self.tables
        } else {
            &[]
        };
        let tx = settle::transaction(&self.fee_payer, &ixs, tables, self.blockhash, &[self.payer])?;
        Ok((tx, channel))
    }
}

/// What a session's channel is opened with.
pub struct SessionTerms<'a> {
    pub builder: &'a Builder,
    /// The offer's `extra` (its `feePayer`, `receiverAuthorizer`, `withdrawDelay`, memo).
    pub extra: &'a BatchExtra,
    pub mint: Pubkey,
    pub token_program: TokenProgram,
    pub pay_to: Pubkey,
    /// The payer's wallet (the gated variant: the payer agent's signer), which signs the open.
    pub payer: &'a Keypair,
    /// The channel's voucher key (`payerAuthorizer`): the payer's own key or a session key.
    pub voucher_key: Keypair,
    pub deposit: u64,
    pub salt: u64,
    /// A recent slot (the offer's `recentSlot`, or the cluster's).
    pub open_slot: u64,
    pub gate: Option<SessionGate>,
    /// The facilitator's lookup tables (gated only: the open fits a packet with them).
    pub tables: &'a [AddressLookupTableAccount],
    pub blockhash: Hash,
}

/// A payer's open session: its channel, and what it signed so far.
pub struct PayerSession {
    pub config: ChannelConfig,
    pub channel: Pubkey,
    /// `channel` in base58, as every voucher names it.
    channel_id: String,
    pub deposit: u64,
    voucher_key: Keypair,
    /// The cumulative amount of the latest voucher signed.
    pub charged: u64,
}

fn input(field: &str, message: impl Into<String>) -> ClientError {
    ClientError::input(field, message)
}

impl SessionTerms<'_> {
    /// The open transaction (signed by the payer, the fee payer's slot empty) and the session.
    pub fn open(self) -> Result<(VersionedTransaction, PayerSession), ClientError> {
        let fee_payer: Pubkey = self
            .extra
            .fee_payer
            .parse()
            .map_err(|_| input("extra.feePayer", "not a base58 address"))?;
        if self.deposit == 0 {
            return Err(input("deposit", "a session's deposit is above 0"));
        }
        let (tx, channel) = ChannelOpen {
            builder: self.builder,
            payer: self.payer,
            fee_payer,
            mint: self.mint,
            token_program: self.token_program,
            pay_to: self.pay_to,
            voucher_key: self.voucher_key.pubkey(),
            salt: self.salt,
            deposit: self.deposit,
            grace_period: self.extra.withdraw_delay,
            open_slot: self.open_slot,
            gate: self.gate,
            memo: self.extra.memo.as_deref(),
            binding: Some(batch::binding_memo(&self.extra.receiver_authorizer)),
            tables: self.tables,
            blockhash: self.blockhash,
        }
        .transaction()?;
        let config = ChannelConfig {
            payer: self.payer.pubkey().to_string(),
            payer_authorizer: self.voucher_key.pubkey().to_string(),
            receiver: self.pay_to.to_string(),
            receiver_authorizer: self.extra.receiver_authorizer.clone(),
            token: self.mint.to_string(),
            withdraw_delay: self.extra.withdraw_delay,
            salt: self.salt.to_string(),
            open_slot: self.open_slot,
            voucher_signer: None,
        };
        Ok((
            tx,
            PayerSession {
                config,
                channel,
                channel_id: channel.to_string(),
                deposit: self.deposit,
                voucher_key: self.voucher_key,
                charged: 0,
            },
        ))
    }
}

impl PayerSession {
    /// The voucher that pays `price` more; refused past the deposit (open another session).
    pub fn voucher(&mut self, price: u64) -> Result<BatchVoucher, ClientError> {
        let cumulative = self
            .charged
            .checked_add(price)
            .filter(|c| *c <= self.deposit)
            .ok_or_else(|| {
                input(
                    "amount",
                    format!(
                        "{price} more than the {} paid would pass the session's deposit {}",
                        self.charged, self.deposit
                    ),
                )
            })?;
        self.charged = cumulative;
        Ok(self.signed(cumulative))
    }

    /// A first request's payload: the open and the voucher of its price.
    pub fn deposit_payload(
        &mut self,
        open: &VersionedTransaction,
        price: u64,
    ) -> Result<BatchPayload, ClientError> {
        let bytes = bincode::serialize(open).map_err(|e| input("transaction", e.to_string()))?;
        Ok(BatchPayload::Deposit {
            channel_config: self.config.clone(),
            voucher: self.voucher(price)?,
            deposit: DepositTx {
                amount: self.deposit.to_string(),
                transaction: STANDARD.encode(bytes),
            },
        })
    }

    /// A further request's payload.
    pub fn voucher_payload(&mut self, price: u64) -> Result<BatchPayload, ClientError> {
        Ok(BatchPayload::Voucher {
            channel_config: self.config.clone(),
            voucher: self.voucher(price)?,
        })
    }

    /// The payload that ends the session: its latest voucher (the amount the server
    /// accepted, at which the facilitator seals), which the server forwards with its close
    /// authorization.
    pub fn refund_payload(&self) -> BatchPayload {
        BatchPayload::Refund {
            channel_config: self.config.clone(),
            voucher: Some(self.signed(self.charged)),
            close_authorization: None,
            transaction: None,
            amount: None,
        }
    }

    /// The voucher of `cumulative` (an Ed25519 signature: the same bytes every time).
    fn signed(&self, cumulative: u64) -> BatchVoucher {
        let v = Voucher::sign(&self.voucher_key, &self.channel, cumulative, 0);
        BatchVoucher {
            channel_id: self.channel_id.clone(),
            max_claimable_amount: cumulative.to_string(),
            expires_at: 0,
            signature: v.signature.to_string(),
        }
    }

    /// Resumes from a server's corrective state (a 402 whose error is
    /// `invalid_batch_settlement_svm_cumulative_amount_mismatch`, its offer's
    /// `extra.channelState` and `extra.voucherState`; specification section 4.6): a voucher
    /// this session sent was accepted though its answer was lost, or the other way round.
    /// Adopted only when `voucher_state` is this session's own signature of this channel and
    /// the amount charged is at most what it signs and the deposit; returns the new base.
    pub fn resync(
        &mut self,
        channel_state: &ChannelState,
        voucher_state: &VoucherState,
    ) -> Result<u64, ClientError> {
        if channel_state.channel_id != self.channel_id {
            return Err(input(
                "channelState.channelId",
                format!(
                    "{} is not this session's channel {}",
                    channel_state.channel_id, self.channel_id
                ),
            ));
        }
        let number = |field: &str, v: &str| {
            v.parse::<u64>()
                .map_err(|_| input(field, format!("{v:?} is not a decimal u64")))
        };
        let charged = number(
            "channelState.chargedCumulativeAmount",
            &channel_state.charged_cumulative_amount,
        )?;
        let signed = number(
            "voucherState.signedMaxClaimable",
            &voucher_state.signed_max_claimable,
        )?;
        let signature = voucher_state
            .signature
            .parse()
            .map_err(|_| input("voucherState.signature", "not a base58 signature"))?;
        let v = Voucher {
            channel: self.channel,
            cumulative: signed,
            expires_at: voucher_state.expires_at,
            signature,
        };
        if voucher_state.expires_at != 0 || !v.signed_by(&self.voucher_key.pubkey()) {
            return Err(input(
                "voucherState.signature",
                "not this session's own voucher of the channel: the corrective state is refused",
            ));
        }
        if charged > signed || charged > self.deposit {
            return Err(input(
                "channelState.chargedCumulativeAmount",
                format!(
                    "{charged} is above the voucher signed ({signed}) or the deposit ({})",
                    self.deposit
                ),
            ));
        }
        self.charged = charged;
        Ok(charged)
    }
}

/// What an `upto` payment's channel is opened with: the offer's terms, the payer, the
/// ceiling, and for the gated variant the gate's terms and the facilitator's lookup tables.
pub struct UptoTerms<'a> {
    pub builder: &'a Builder,
    pub extra: &'a UptoExtra,
    pub mint: Pubkey,
    pub token_program: TokenProgram,
    pub pay_to: Pubkey,
    pub payer: &'a Keypair,
    /// The offer's amount: the ceiling escrowed.
    pub ceiling: u64,
    pub salt: u64,
    pub open_slot: u64,
    /// Unix seconds: the claim must come before `expires_at`.
    pub valid_after: i64,
    pub expires_at: i64,
    pub gate: Option<SessionGate>,
    pub tables: &'a [AddressLookupTableAccount],
    pub blockhash: Hash,
}

impl UptoTerms<'_> {
    /// The payload (with the payer-signed open, the fee payer's signature empty).
    pub fn payload(self) -> Result<UptoPayload, ClientError> {
        let fee_payer: Pubkey = self
            .extra
            .fee_payer
            .parse()
            .map_err(|_| input("extra.feePayer", "not a base58 address"))?;
        let voucher_key: Pubkey = self
            .extra
            .receiver_authorizer
            .parse()
            .map_err(|_| input("extra.receiverAuthorizer", "not a base58 address"))?;
        let (tx, channel) = ChannelOpen {
            builder: self.builder,
            payer: self.payer,
            fee_payer,
            mint: self.mint,
            token_program: self.token_program,
            pay_to: self.pay_to,
            voucher_key,
            salt: self.salt,
            deposit: self.ceiling,
            grace_period: self.extra.withdraw_delay,
            open_slot: self.open_slot,
            gate: self.gate,
            memo: self.extra.memo.as_deref(),
            binding: None,
            tables: self.tables,
            blockhash: self.blockhash,
        }
        .transaction()?;
        let bytes = bincode::serialize(&tx).map_err(|e| input("transaction", e.to_string()))?;
        Ok(UptoPayload {
            from: self.payer.pubkey().to_string(),
            max_amount: self.ceiling.to_string(),
            expires_at: self.expires_at,
            valid_after: self.valid_after,
            nonce: self.salt.to_string(),
            open_slot: WireU64(self.open_slot),
            channel_id: channel.to_string(),
            deposit: self.ceiling.to_string(),
            authorized_signer: voucher_key.to_string(),
            open_transaction: STANDARD.encode(bytes),
            voucher_signature: None,
            settle_type: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trust_gate_client::ids::ProgramIds;
    use trust_gate_client::network::Network;

    #[test]
    fn vouchers_raise_the_charge_by_each_price_up_to_the_deposit() {
        let b = Builder::new(ProgramIds::for_network(Network::Localnet)).unwrap();
        let payer = Keypair::new();
        let extra = BatchExtra {
            fee_payer: Pubkey::new_unique().to_string(),
            receiver_authorizer: Pubkey::new_unique().to_string(),
            withdraw_delay: 900,
            token_program: TokenProgram::Token2022.id().to_string(),
            payment_flow: None,
            voucher_signer: None,
            operator: None,
            memo: Some("m".into()),
            recent_blockhash: None,
            recent_slot: None,
            min_deposit: None,
            max_idle_secs: None,
        };
        let key = Keypair::new();
        let key_pub = key.pubkey();
        let (tx, mut s) = SessionTerms {
            builder: &b,
            extra: &extra,
            mint: Pubkey::new_unique(),
            token_program: TokenProgram::Token2022,
            pay_to: Pubkey::new_unique(),
            payer: &payer,
            voucher_key: key,
            deposit: 10,
            salt: 7,
            open_slot: 100,
            gate: None,
            tables: &[],
            blockhash: Hash::new_unique(),
        }
        .open()
        .unwrap();
        // [limit, open, seller memo, binding memo], the payer's signature only.
        assert_eq!(tx.message.instructions().len(), 4);
        assert!(tx.signatures[0] == Default::default());
        let first = s.voucher(4).unwrap();
        let second = s.voucher(6).unwrap();
        assert_eq!(
            (
                first.max_claimable_amount.as_str(),
                second.max_claimable_amount.as_str()
            ),
            ("4", "10")
        );
        let v = Voucher {
            channel: s.channel,
            cumulative: 10,
            expires_at: 0,
            signature: second.signature.parse().unwrap(),
        };
        assert!(v.signed_by(&key_pub));
        let err = s.voucher(1).unwrap_err().to_string();
        assert!(
            err.contains("amount") && err.contains("deposit 10"),
            "{err}"
        );
        assert_eq!(s.charged, 10);

        // The refund carries the latest voucher, the same bytes as the one sent.
        let BatchPayload::Refund {
            voucher: Some(latest),
            ..
        } = s.refund_payload()
        else {
            panic!("a refund with its voucher")
        };
        assert_eq!(latest, second);

        // A corrective state is adopted only as this session's own voucher of the channel.
        let channel_id = s.channel.to_string();
        let state = |charged: u64| ChannelState {
            channel_id: channel_id.clone(),
            balance: "10".into(),
            total_claimed: "0".into(),
            withdraw_requested_at: 0,
            charged_cumulative_amount: charged.to_string(),
        };
        let proof = |v: &BatchVoucher| VoucherState {
            signed_max_claimable: v.max_claimable_amount.clone(),
            expires_at: 0,
            signature: v.signature.clone(),
        };
        assert_eq!(s.resync(&state(4), &proof(&first)).unwrap(), 4);
        assert_eq!(s.charged, 4);
        let forged = Voucher::sign(&Keypair::new(), &s.channel, 10, 0);
        let not_mine = VoucherState {
            signed_max_claimable: "10".into(),
            expires_at: 0,
            signature: forged.signature.to_string(),
        };
        let err = s.resync(&state(10), &not_mine).unwrap_err().to_string();
        assert!(err.contains("voucherState.signature"), "{err}");
        let err = s.resync(&state(6), &proof(&first)).unwrap_err().to_string();
        assert!(err.contains("chargedCumulativeAmount"), "{err}");
        let mut elsewhere = state(4);
        elsewhere.channel_id = Pubkey::new_unique().to_string();
        assert!(s.resync(&elsewhere, &proof(&first)).is_err());
        assert_eq!(s.charged, 4, "a refused state changes nothing");
    }
}
