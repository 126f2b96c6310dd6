//! The channels' chain work both channel schemes and the crank share: reading a channel,
//! co-signing and sending an open, sending the facilitator's own transactions, the gate's
//! close of a gated channel, and the per-payer limit on opens.

use super::Facilitator;
use super::{co_signature, Outcome};
use crate::adapter::{self, ChannelGate, Expectations};
use crate::channel_open::{self, Expected, Here};
use crate::inspect;
use crate::reject::{Reason, Rejection};
use solana_sdk::instruction::Instruction;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signature};
use solana_sdk::transaction::VersionedTransaction;
use trust_gate_client::chain;
use trust_gate_client::channels::{self, Channel};
use trust_gate_client::simulate::now_unix;
use trust_gate_x402::PaymentRequirements;

impl Facilitator {
    /// What a challenge's `gate` extension is checked against: this facilitator, `network`,
    /// the trusted services and the clock.
    pub(crate) fn expectations<'a>(
        &'a self,
        fac: &'a Pubkey,
        network: &'a str,
    ) -> Expectations<'a> {
        Expectations {
            facilitator: fac,
            network,
            trusted_services: &self.settings.trusted_services,
            now: now_unix(),
            skew: i64::try_from(self.settings.clock_skew.as_secs()).unwrap_or(i64::MAX),
        }
    }

    /// A gated channel offer's parties and policy, from its `gate` extension authenticated
    /// as a payment's challenge.
    pub(crate) fn channel_gate(
        &self,
        accepted: &PaymentRequirements,
        resource: Option<&str>,
        network: &str,
    ) -> Result<ChannelGate, Rejection> {
        let fac = self.facilitator();
        adapter::read_channel_gate(accepted, resource, self.expectations(&fac, network))
    }

    /// The gate's close of the sealed `channel` (its record read now): what the channel did
    /// not spend back to the payer's policy, the payee's feedback tagged `tag`.
    pub(crate) async fn gate_close(
        &self,
        channel: &Pubkey,
        tag: &str,
    ) -> Result<Instruction, Rejection> {
        self.gate_close_if_recorded(channel, tag)
            .await?
            .ok_or_else(|| {
                Rejection::new(
                    Reason::UptoChannelState,
                    format!(
                        "gated channel {channel} has no gate record {}",
                        self.chain.builder.pda.channel_record(channel)
                    ),
                )
            })
    }

    /// [`Self::gate_close`], or `None` when the channel has no open gate record (never had
    /// one, or it was closed already).
    pub(crate) async fn gate_close_if_recorded(
        &self,
        channel: &Pubkey,
        tag: &str,
    ) -> Result<Option<Instruction>, Rejection> {
        let key = self.chain.builder.pda.channel_record(channel);
        let Some(record) = chain::anchor_account::<gate::state::ChannelRecord>(
            &self.chain.rpc,
            "ChannelRecord",
            &key,
        )
        .await
        .map_err(Rejection::rpc)?
        else {
            return Ok(None);
        };
        let collection = self.collection().await?;
        Ok(Some(self.chain.builder.gate_channel_close(
            &record,
            &collection,
            super::own_feedback(tag),
        )))
    }

    /// A channel deposit's open, `transaction` in base64 (`undecodable` names one that is
    /// not), checked against `e` (see [`channel_open::verify`], its refusals as `named` by the
    /// scheme) at the cluster's slot, or at the offer's `offer_slot` when that is ahead of
    /// this RPC's view.
    pub(crate) async fn verify_open(
        &self,
        (transaction, undecodable): (&str, Reason),
        offer_slot: Option<u64>,
        e: Expected<'_>,
        named: fn(Rejection) -> Rejection,
    ) -> Result<channel_open::Checked, Rejection> {
        let tx =
            inspect::decode(transaction).map_err(|err| Rejection::new(undecodable, err.message))?;
        let rpc = &self.chain.rpc;
        let slot = (self.within(async { rpc.get_slot().await.map_err(Rejection::rpc) })).await?;
        let tables = self.tables().await;
        let here = Here {
            builder: &self.chain.builder,
            facilitator: self.facilitator(),
            slot: offer_slot.map_or(slot, |s| s.max(slot)),
            compute: &self.settings.compute,
            tables: &tables,
        };
        channel_open::verify(tx, here, e).map_err(named)
    }

    /// The channel at `address`, read at confirmed; `state_reason` names a missing or foreign
    /// one (each channel scheme has its own).
    pub(crate) async fn channel(
        &self,
        address: &Pubkey,
        state_reason: Reason,
    ) -> Result<Channel, Rejection> {
        let account = chain::account(&self.chain.rpc, address)
            .await
            .map_err(Rejection::rpc)?
            .ok_or_else(|| {
                Rejection::new(state_reason, format!("channel {address} does not exist"))
            })?;
        if account.owner != channels::PROGRAM_ID {
            return Err(Rejection::new(
                state_reason,
                format!("{address} is not a channel"),
            ));
        }
        Channel::decode(&account.data).ok_or_else(|| {
            Rejection::new(
                state_reason,
                format!("{address} is not a version-1 channel"),
            )
        })
    }

    /// A channel deposit of `payer` (the wallet that signed the open, checked) counts against
    /// the per-payer limit (`RATE_LIMIT_PER_PAYER`), as an exact settlement of a payer agent
    /// does: each open makes the facilitator advance the channel's rent until the close or
    /// the crank returns it, so one wallet cannot have it lock that rent at will.
    pub(crate) fn limit_deposits(&self, payer: &Pubkey) -> Result<(), Rejection> {
        self.limit_payer(payer, || {
            format!(
                "wallet {payer} opened more channels than this facilitator takes from one payer (RATE_LIMIT_PER_PAYER); nothing was sent (no fee)"
            )
        })
    }

    /// Co-signs a client's open as its fee payer (signature slot 0), sends it and waits: its
    /// signature, and whether it is still pending. A refusal on chain is `failed`.
    pub(crate) async fn send_open(
        &self,
        mut tx: VersionedTransaction,
        keypair: &Keypair,
        failed: Reason,
        refused: Reason,
    ) -> Result<(Signature, bool), Rejection> {
        let signature = co_signature(&tx, keypair);
        tx.signatures[0] = signature;
        let pending = self.send_and_confirm(&tx, failed, refused).await?;
        Ok((signature, pending))
    }

    /// The signature of `tx` co-signed by this facilitator when that very transaction has
    /// landed already (a retry of a request whose first attempt sent it); `failed` names its
    /// failure on chain. `None` when it has not (or this facilitator cannot sign).
    pub(crate) async fn landed_open(
        &self,
        tx: &VersionedTransaction,
        failed: Reason,
    ) -> Result<Option<Signature>, Rejection> {
        let Some(keypair) = self.key.keypair() else {
            return Ok(None);
        };
        let signature = co_signature(tx, keypair);
        match self.landed(&signature).await? {
            None => Ok(None),
            Some(Ok(())) => Ok(Some(signature)),
            Some(Err(err)) => Err(Rejection::new(
                failed,
                format!("this transaction landed in {signature} and failed on chain: {err}"),
            )),
        }
    }

    /// Signs `ixs` alone as v0 (with the lookup tables when `with_tables`), sends and waits:
    /// its signature, and whether it is still pending.
    pub(crate) async fn send_own(
        &self,
        ixs: &[Instruction],
        with_tables: bool,
        keypair: &Keypair,
        refused: Reason,
    ) -> Result<(Signature, bool), Rejection> {
        let tables = if with_tables {
            self.tables().await
        } else {
            Vec::new()
        };
        let rpc = &self.chain.rpc;
        let blockhash = rpc.get_latest_blockhash().await.map_err(Rejection::rpc)?;
        let tx = trust_gate_client::settle::transaction(
            &self.facilitator(),
            ixs,
            &tables,
            blockhash,
            &[keypair],
        )
        .map_err(|e| Rejection::new(Reason::TransactionFailed, e.to_string()))?;
        let signature = tx.signatures[0];
        let pending = self
            .send_and_confirm(&tx, Reason::TransactionFailed, refused)
            .await?;
        Ok((signature, pending))
    }

    /// Sends with preflight and waits: `Ok(false)` landed, `Ok(true)` pending; a refusal by
    /// the simulation is `refused`, a failure on chain `failed`.
    pub(crate) async fn send_and_confirm(
        &self,
        tx: &VersionedTransaction,
        failed: Reason,
        refused: Reason,
    ) -> Result<bool, Rejection> {
        let signature = tx.signatures[0];
        if let Some((err, logs)) = self.send(tx).await {
            let summary = trust_gate_client::errors::summarize_logs(&logs);
            // The program's name for its error first (KillSwitchEngaged, ...), where known.
            let named = trust_gate_client::errors::explain(&err, &logs)
                .map(|n| format!("{} ({}): ", n.name, n.code))
                .unwrap_or_default();
            return Err(Rejection::new(
                refused,
                format!("the cluster's simulation refused it: {named}{err} ({summary})"),
            ));
        }
        match self.confirm(&signature).await {
            Outcome::Landed(Ok(())) => Ok(false),
            Outcome::Landed(Err(err)) => Err(Rejection::new(
                failed,
                format!("{signature} failed on chain: {err}"),
            )),
            Outcome::Pending => Ok(true),
        }
    }
}
