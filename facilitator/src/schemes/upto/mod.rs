//! POST /verify and /settle for x402's stock `upto` scheme on Solana (as `@x402/svm` 2.27's
//! server and client speak it), for routes a resource server configures as ungated: no
//! policy runs on these payments. One channel a request:
//!
//! - **deposit** (before the server's handler; `/verify` runs the same checks without
//!   sending): the client's open is checked ([`crate::channel_open`]), the channel must not
//!   exist yet, the facilitator co-signs it as the fee payer and sends it, then reads the
//!   channel back;
//! - **claim** (after the handler): the actual amount, at most the ceiling, with the server's
//!   voucher over it (checked here, strictly; a claim of 0 too, so that no one but the server
//!   can cancel); the facilitator seals the channel at it and distributes it in one
//!   transaction it alone signs.
//!
//! The gated variant, `trust-gate-upto`, is the same exchange under the payer's policy: its
//! offer carries the `gate` extension (authenticated as a payment's challenge, over the offer
//! the client accepted), the open has the gate's `gate_channel_open` right before the program's
//! `open` (the facilitator's lookup tables allowed), and the claim closes the channel through
//! the gate (`gate_channel_close`: what was not charged back to the policy, the payee's
//! feedback) in one v0 transaction with the facilitator's lookup tables.
//!
//! Not yet: delegated voucher keys, deduplication of concurrent identical requests across
//! replicas (the chain refuses the second open and the second seal), and the crank's close of
//! a gated deposit whose claim never came.

use super::{Call, Scheme, Verified};
use crate::adapter::{self, ChannelGate, Expectations};
use crate::advances::ledger::ChannelKind;
use crate::answer::SettleReply;
use crate::channel_open::{self, Expected, Gated};
use crate::holds;
use crate::inspect;
use crate::reject::{Reason, Rejection};
use crate::service::Facilitator;
use crate::settle::{co_signature, Outcome};
use serde::Deserialize;
use serde_json::{json, Value};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Signature;
use solana_sdk::transaction::VersionedTransaction;
use std::str::FromStr;
use trust_gate_client::chain;
use trust_gate_client::channels::{self, Channel, Distribute, Split, Status};
use trust_gate_client::settle::ComputeBudget;
use trust_gate_client::simulate::{now_unix, PaymentQuery};
use trust_gate_client::vouchers::Voucher;
use trust_gate_x402::upto::{self, UptoExtra, UptoPayload, UptoSettleType};
use trust_gate_x402::{PaymentRequirements, ResourceInfo};

pub use trust_gate_x402::upto::{EXPIRY_SLACK_SECS, MAX_CHANNEL_LIFETIME_SECS};

/// An `upto` request to /verify or /settle.
#[derive(Clone, Debug)]
pub struct UptoRequest {
    pub requirements: PaymentRequirements,
    pub accepted: PaymentRequirements,
    pub resource: Option<ResourceInfo>,
    pub payload: UptoPayload,
    /// The gated variant (`trust-gate-upto`).
    pub gated: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Body {
    payment_payload: PayloadEnvelope,
    payment_requirements: PaymentRequirements,
}

#[derive(Deserialize)]
struct PayloadEnvelope {
    #[serde(default)]
    resource: Option<ResourceInfo>,
    accepted: PaymentRequirements,
    payload: Value,
}

impl UptoRequest {
    /// Reads the body's bytes (see [`UptoRequest::parse`]).
    pub fn from_bytes(body: &[u8]) -> Result<UptoRequest, Rejection> {
        let v = serde_json::from_slice::<Value>(body).map_err(|e| {
            Rejection::new(
                Reason::UnsupportedPayloadType,
                format!("not an x402 upto request: {e}"),
            )
        })?;
        UptoRequest::parse(v)
    }

    /// Reads the body; a payload of another shape is `unsupported_payload_type`.
    pub fn parse(body: Value) -> Result<UptoRequest, Rejection> {
        let b: Body = serde_json::from_value(body).map_err(|e| {
            Rejection::new(
                Reason::UnsupportedPayloadType,
                format!("not an x402 upto request: {e}"),
            )
        })?;
        let payload: UptoPayload =
            serde_json::from_value(b.payment_payload.payload).map_err(|e| {
                Rejection::new(
                    Reason::UnsupportedPayloadType,
                    format!("paymentPayload.payload is not an upto payload: {e}"),
                )
            })?;
        Ok(UptoRequest {
            gated: b.payment_requirements.scheme == upto::SCHEME_GATED_UPTO,
            requirements: b.payment_requirements,
            accepted: b.payment_payload.accepted,
            resource: b.payment_payload.resource,
            payload,
        })
    }
}

/// What the requirements and the payload say, checked.
struct Terms {
    extra: UptoExtra,
    from: Pubkey,
    mint: Pubkey,
    pay_to: Pubkey,
    receiver_authorizer: Pubkey,
    channel: Pubkey,
    ceiling: u64,
    salt: u64,
}

fn bad(reason: Reason, message: impl Into<String>) -> Rejection {
    Rejection::new(reason, message)
}

fn named(r: Result<Pubkey, (Reason, String)>) -> Result<Pubkey, Rejection> {
    r.map_err(|(reason, message)| bad(reason, message))
}

impl Terms {
    /// The distribution every upto open makes: 100 % to `payTo`.
    fn splits(&self) -> Vec<Split> {
        vec![Split {
            recipient: self.pay_to,
            bps: channels::ALL_BPS,
        }]
    }

    /// Whether `c` is the channel this payment's deposit opens: its payer, the facilitator
    /// as payee and rent payer, the mint, the voucher key, 100 % to `payTo`.
    fn is_ours(&self, c: &Channel, facilitator: &Pubkey) -> bool {
        (c.payer, c.payee, c.rent_payer, c.mint)
            == (self.from, *facilitator, *facilitator, self.mint)
            && c.authorized_signer == self.receiver_authorizer
            && c.distribution_hash == channels::distribution_hash(&self.splits())
    }

    /// Whether `c` is open as this payment's deposit opened it, with the ceiling.
    /// The answer of this payment's deposit, opened by `signature`.
    fn deposited(&self, signature: Signature, pending: bool, replayed: bool) -> SettleReply {
        let amount = self.ceiling.to_string();
        let reply = SettleReply::channel(signature.to_string(), amount, self.from, None, pending);
        if replayed {
            reply.replayed()
        } else {
            reply
        }
    }

    fn opened(&self, c: &Channel, facilitator: &Pubkey) -> bool {
        c.status == Status::Open && c.deposit == self.ceiling && self.is_ours(c, facilitator)
    }

    /// Whether the server's claim can still seal `c` at chain time `now`: this payment's
    /// channel, holding at least the ceiling (the payer may have topped it up: the rest goes
    /// back to it), open or closing within its grace period (the payer's `request_close`
    /// stops anyone's `settle`, never the payee's seal before the deadline).
    fn claimable(&self, c: &Channel, facilitator: &Pubkey, now: i64) -> bool {
        let live = match c.status {
            Status::Open => true,
            Status::Closing => {
                now < c
                    .closure_started_at
                    .saturating_add(i64::from(c.grace_period))
            }
            Status::Sealed | Status::Distributed => false,
        };
        live && c.deposit >= self.ceiling && self.is_ours(c, facilitator)
    }
}

/// The checks of every phase: the scheme, the network, the facilitator, the requirements,
/// the payload's amounts, keys and times.
fn terms(r: &UptoRequest, fac: &Pubkey, network: &str, now: i64) -> Result<Terms, Rejection> {
    let scheme = if r.gated {
        upto::SCHEME_GATED_UPTO
    } else {
        upto::SCHEME_UPTO
    };
    if r.accepted.scheme != scheme || r.requirements.scheme != scheme {
        return Err(bad(
            Reason::UnsupportedScheme,
            format!("the requirements and the accepted offer are not both {scheme}"),
        ));
    }
    if r.accepted.network != r.requirements.network || r.requirements.network != network {
        return Err(bad(
            Reason::NetworkMismatch,
            format!(
                "the network is {}; this facilitator settles on {network}",
                r.requirements.network
            ),
        ));
    }
    let invalid = |m: String| bad(Reason::UptoInvalidRequirements, m);
    let extra: UptoExtra = serde_json::from_value(Value::Object(r.requirements.extra.clone()))
        .map_err(|e| invalid(format!("extra: {e}")))?;
    if extra.fee_payer != fac.to_string() {
        return Err(bad(
            Reason::UptoFacilitatorMismatch,
            format!(
                "extra.feePayer is {}; this facilitator is {fac}",
                extra.fee_payer
            ),
        ));
    }
    if extra.withdraw_delay == 0 || r.requirements.max_timeout_seconds == 0 {
        return Err(invalid(
            "extra.withdrawDelay and maxTimeoutSeconds are whole seconds above 0".into(),
        ));
    }
    if r.requirements.max_timeout_seconds > MAX_CHANNEL_LIFETIME_SECS {
        return Err(bad(
            Reason::UptoChannelLifetimeExceeded,
            format!(
                "maxTimeoutSeconds is {}; this facilitator holds an upto channel's rent for at most {MAX_CHANNEL_LIFETIME_SECS} s",
                r.requirements.max_timeout_seconds
            ),
        ));
    }
    let key = |field: &str, v: &str| {
        Pubkey::from_str(v).map_err(|_| invalid(format!("{field} is not a base58 address")))
    };
    let receiver_authorizer = key("extra.receiverAuthorizer", &extra.receiver_authorizer)?;
    let mint = key("asset", &r.requirements.asset)?;
    let pay_to = key("payTo", &r.requirements.pay_to)?;

    let p = &r.payload;
    let from = named(upto::key("from", &p.from))?;
    let channel = named(upto::key("channelId", &p.channel_id))?;
    let authorized = named(upto::key("authorizedSigner", &p.authorized_signer))?;
    if authorized != receiver_authorizer {
        return Err(bad(
            Reason::UptoReceiverAuthorizer,
            "payload.authorizedSigner is not extra.receiverAuthorizer",
        ));
    }
    let amount = |field: &str, v: &str| upto::amount(field, v).map_err(|(r, m)| bad(r, m));
    let ceiling = amount("maxAmount", &p.max_amount)?;
    if amount("deposit", &p.deposit)? != ceiling {
        return Err(bad(
            Reason::UptoDepositNotCeiling,
            "payload.deposit is not payload.maxAmount",
        ));
    }
    let salt = p.nonce.parse().map_err(|_| {
        bad(
            Reason::UptoChannelSeed,
            "payload.nonce is not a decimal u64",
        )
    })?;
    if now < p.valid_after {
        return Err(bad(
            Reason::UptoNotYetActive,
            format!("the payment is valid after {}", p.valid_after),
        ));
    }
    if p.expires_at == 0 || now >= p.expires_at {
        return Err(bad(
            Reason::UptoExpired,
            format!("the payment expired at {}", p.expires_at),
        ));
    }
    let latest = now
        .saturating_add(i64::try_from(r.requirements.max_timeout_seconds).unwrap_or(i64::MAX))
        .saturating_add(EXPIRY_SLACK_SECS);
    if p.expires_at > latest {
        return Err(bad(
            Reason::UptoExpiresAtMismatch,
            "payload.expiresAt is further ahead than maxTimeoutSeconds allows",
        ));
    }
    Ok(Terms {
        extra,
        from,
        mint,
        pay_to,
        receiver_authorizer,
        channel,
        ceiling,
        salt,
    })
}

/// What a deposit's checks found on chain.
enum Open {
    /// Not on chain: send it.
    New(Box<channel_open::Checked>),
    /// This very transaction landed (a retry of the same deposit): its signature.
    Landed(Signature),
    /// The channel is open as this deposit opens it, by a transaction whose status is not
    /// known yet: this one's signature (its outcome is asked again later).
    Unknown(Signature),
}

impl Facilitator {
    /// The deposit's checks, without sending (`/verify`): returns the payer.
    pub async fn verify_upto(&self, r: &UptoRequest) -> Result<Pubkey, Rejection> {
        if r.payload.voucher_signature.is_some() {
            return Err(bad(
                Reason::UptoUnexpectedVoucher,
                "a client's payload carries no voucherSignature",
            ));
        }
        if r.payload.settle_type.is_some() {
            return Err(bad(
                Reason::UptoPayloadType,
                "type is the server's, for /settle",
            ));
        }
        let (t, open) = self.checked_open(r).await?;
        match open {
            // A retry of a deposit that landed is valid while its channel is still the
            // deposit's, unclaimed: the same request's /settle answers its outcome.
            Open::Landed(signature) => self.unclaimed(&t, &signature).await?,
            Open::Unknown(signature) => {
                return Err(bad(
                    Reason::UptoChannelAlreadyOpen,
                    format!("channel {} is open; whether by this deposit ({signature}) is not known yet: retry shortly", t.channel),
                ))
            }
            Open::New(_) => {}
        }
        Ok(t.from)
    }

    /// `/settle` of a deposit or a claim (see the module docs).
    pub async fn settle_upto(&self, r: &UptoRequest) -> Result<SettleReply, Rejection> {
        let Some(keypair) = self.key.keypair() else {
            return Err(Rejection::not_signing("settle"));
        };
        match r.payload.settle_type {
            Some(UptoSettleType::Claim) => self.claim(r, keypair).await,
            Some(UptoSettleType::Deposit) | None => {
                if r.payload.voucher_signature.is_some() {
                    return Err(bad(
                        Reason::UptoUnexpectedVoucher,
                        "a deposit carries no voucherSignature",
                    ));
                }
                self.deposit(r, keypair).await
            }
        }
    }

    /// The request's terms, checked against this facilitator, its network and clock.
    async fn terms(&self, r: &UptoRequest) -> Result<Terms, Rejection> {
        let network = self
            .caip2()
            .await
            .map_err(|e| bad(Reason::NetworkUnavailable, e.message))?;
        terms(r, &self.facilitator(), &network, now_unix())
    }

    /// The terms and the checked open of a deposit, or the signature of this very open when
    /// it landed already (a retry: neither the policy nor the channel's absence is asked
    /// again, for the deposit itself changed both).
    async fn checked_open(&self, r: &UptoRequest) -> Result<(Terms, Open), Rejection> {
        let fac = self.facilitator();
        let t = self.terms(r).await?;
        let required =
            upto::amount("amount", &r.requirements.amount).map_err(|(r, m)| bad(r, m))?;
        if required != t.ceiling {
            return Err(bad(
                Reason::UptoAmountMismatch,
                "payload.maxAmount is not the requirements' amount",
            ));
        }
        let (token_program, _) = self
            .mint(&t.mint)
            .await
            .map_err(|e| bad(Reason::UptoInvalidRequirements, e.message))?;
        if let Some(hint) = &t.extra.token_program {
            if *hint != token_program.id().to_string() {
                return Err(bad(
                    Reason::UptoInvalidRequirements,
                    "extra.tokenProgram is not the mint's token program",
                ));
            }
        }
        let tx = inspect::decode(&r.payload.open_transaction)
            .map_err(|e| bad(Reason::UptoOpenTransaction, e.message))?;
        let slot = self
            .within(async { self.chain.rpc.get_slot().await.map_err(Rejection::rpc) })
            .await?;
        // The server's offer may name a slot a little ahead of this RPC's view.
        let slot = t.extra.recent_slot.map_or(slot, |s| s.0.max(slot));
        let gate = self.channel_gate(r)?;
        if gate.is_none() {
            self.check_plain_offer(&r.accepted, &t.mint, Reason::UptoInvalidRequirements)?;
        }
        let tables = self.tables().await;
        let checked = channel_open::verify(
            tx,
            Expected {
                builder: &self.chain.builder,
                facilitator: fac,
                mint: t.mint,
                token_program,
                pay_to: t.pay_to,
                receiver_authorizer: t.receiver_authorizer,
                withdraw_delay: t.extra.withdraw_delay,
                ceiling: t.ceiling,
                from: t.from,
                salt: t.salt,
                open_slot: r.payload.open_slot.0,
                channel: t.channel,
                slot,
                memo: t.extra.memo.as_deref(),
                binding_memo: None,
                compute: &self.settings.compute,
                gated: gate.map(|g| Gated {
                    payer_asset: g.payer_asset,
                    payee_asset: g.payee_asset,
                    policy_id: g.policy_id,
                    tables: &tables,
                }),
            },
        )?;
        if let Some(signature) = self
            .landed_open(&checked.tx, Reason::UptoChannelBroadcast)
            .await?
        {
            return Ok((t, Open::Landed(signature)));
        }
        if let Some(g) = &gate {
            let deposit = PaymentQuery {
                payer_asset: g.payer_asset,
                payee_asset: g.payee_asset,
                amount: t.ceiling,
                mint: t.mint,
                policy_id: g.policy_id,
            };
            let resource = holds::resource(r.resource.as_ref().map(|res| res.url.as_str()));
            self.decide_deposit(deposit, resource).await?;
        }
        if chain::account(&self.chain.rpc, &t.channel)
            .await
            .map_err(Rejection::rpc)?
            .is_some()
        {
            // Opened as this deposit opens it while the status of this very open is not
            // visible yet (a retry right after the first attempt): asked again later, never
            // refused for it.
            let as_ours = self
                .channel(&t.channel, Reason::UptoChannelState)
                .await
                .ok();
            if let (Some(keypair), true) = (
                self.key.keypair(),
                as_ours.is_some_and(|c| t.opened(&c, &fac)),
            ) {
                return Ok((t, Open::Unknown(co_signature(&checked.tx, keypair))));
            }
            return Err(bad(
                Reason::UptoChannelAlreadyOpen,
                format!("channel {} exists already", t.channel),
            ));
        }
        Ok((t, Open::New(Box::new(checked))))
    }

    /// The channel a landed deposit opened, still as it opened it (unclaimed): else the
    /// payment is over, and a retry of its deposit is refused.
    async fn unclaimed(&self, t: &Terms, signature: &Signature) -> Result<(), Rejection> {
        let c = self
            .channel(&t.channel, Reason::UptoChannelState)
            .await
            .ok();
        match c {
            Some(c) if t.opened(&c, &self.facilitator()) => Ok(()),
            _ => Err(bad(
                Reason::UptoChannelAlreadyOpen,
                format!(
                    "this deposit landed in {signature} and channel {} was claimed since: the payment is over",
                    t.channel
                ),
            )),
        }
    }

    /// A deposit that landed (sent now, or by an earlier attempt: `replayed`): the channel
    /// read back, the rent it holds kept, the approval it used forgotten.
    async fn deposit_landed(
        &self,
        r: &UptoRequest,
        t: &Terms,
        signature: Signature,
        approval: Option<Pubkey>,
        replayed: bool,
    ) -> Result<SettleReply, Rejection> {
        self.advanced(&t.channel).await;
        let c = self.channel(&t.channel, Reason::UptoChannelState).await?;
        if !t.opened(&c, &self.facilitator()) {
            return Err(bad(
                Reason::UptoChannelState,
                format!("channel {} is not the one the payment opens", t.channel),
            ));
        }
        if let (Some(a), Some(g)) = (approval, self.channel_gate(r)?) {
            self.forget_approval(&a, &g.payer_asset).await;
        }
        Ok(t.deposited(signature, false, replayed))
    }

    async fn deposit(
        &self,
        r: &UptoRequest,
        keypair: &solana_sdk::signature::Keypair,
    ) -> Result<SettleReply, Rejection> {
        let (t, open) = self.checked_open(r).await?;
        let checked = match open {
            Open::Landed(signature) => {
                self.unclaimed(&t, &signature).await?;
                return self.deposit_landed(r, &t, signature, None, true).await;
            }
            Open::Unknown(signature) => return Ok(t.deposited(signature, true, true)),
            Open::New(checked) => *checked,
        };
        self.limit_deposits(&t.from)?;
        let (token_program, _) = self
            .mint(&t.mint)
            .await
            .map_err(|e| bad(Reason::UptoInvalidRequirements, e.message))?;
        let reserved = self
            .advance(
                &t.channel,
                &t.from,
                ChannelKind::Upto,
                token_program,
                r.gated,
            )
            .await?;
        let used = checked.approval.map(|a| a.address);
        if !reserved {
            // Being opened already: by this very transaction (a retry while the first
            // attempt waits), whose outcome is awaited here; another open of the channel
            // never lands under this signature and answers pending until it lapses.
            let signature = co_signature(&checked.tx, keypair);
            return match self.confirm(&signature).await {
                Outcome::Landed(Ok(())) => self.deposit_landed(r, &t, signature, used, true).await,
                Outcome::Landed(Err(err)) => Err(bad(
                    Reason::UptoChannelBroadcast,
                    format!("{signature} failed on chain: {err}"),
                )),
                Outcome::Pending => Ok(t.deposited(signature, true, true)),
            };
        }
        let sent = self
            .send_open(
                checked.tx,
                keypair,
                Reason::UptoChannelBroadcast,
                Reason::UptoSettlementSimulation,
            )
            .await;
        let (signature, pending) = match sent {
            Ok(sent) => sent,
            Err(refused) => {
                self.released_advance(&t.channel).await;
                return Err(refused);
            }
        };
        if !pending {
            return self.deposit_landed(r, &t, signature, used, false).await;
        }
        Ok(t.deposited(signature, true, false))
    }

    async fn claim(
        &self,
        r: &UptoRequest,
        keypair: &solana_sdk::signature::Keypair,
    ) -> Result<SettleReply, Rejection> {
        let fac = self.facilitator();
        let t = self.terms(r).await?;
        let actual = upto::amount("amount", &r.requirements.amount).map_err(|(r, m)| bad(r, m))?;
        if actual > t.ceiling {
            return Err(bad(
                Reason::UptoSettlementExceedsAmount,
                format!("the charge {actual} is above the ceiling {}", t.ceiling),
            ));
        }
        let (token_program, _) = self
            .mint(&t.mint)
            .await
            .map_err(|e| bad(Reason::UptoInvalidRequirements, e.message))?;
        let c = self.channel(&t.channel, Reason::UptoChannelState).await?;
        let now = match c.status {
            Status::Closing => chain::unix_time(&self.chain.rpc)
                .await
                .map_err(Rejection::rpc)?,
            _ => 0,
        };
        if !t.claimable(&c, &fac, now) {
            return Err(bad(
                Reason::UptoChannelState,
                format!(
                    "channel {} is not this payment's, or can no longer be sealed ({:?}, deposit {})",
                    t.channel, c.status, c.deposit
                ),
            ));
        }
        let mut ixs = ComputeBudget {
            unit_limit: Some(trust_gate_client::units::channel_close(r.gated)),
            unit_price_micro_lamports: None,
        }
        .instructions();
        // Every claim, 0 included, carries the server's voucher of its amount: without it
        // anyone holding the payload could seal the channel at nothing before the server
        // charges. A voucher of 0 is checked here only (the program wants none to seal).
        let sig = r.payload.voucher_signature.as_deref().ok_or_else(|| {
            bad(
                Reason::UptoMissingVoucher,
                "a claim carries the server's voucherSignature of its amount",
            )
        })?;
        let signature = Signature::from_str(sig).map_err(|_| {
            bad(
                Reason::UptoVoucherSignature,
                "voucherSignature is not a base58 signature",
            )
        })?;
        let voucher = Voucher {
            channel: t.channel,
            cumulative: actual,
            expires_at: r.payload.expires_at,
            signature,
        };
        if !voucher.signed_by(&t.receiver_authorizer) {
            return Err(bad(
                Reason::UptoVoucherSignature,
                "voucherSignature is not extra.receiverAuthorizer's signature of the charge",
            ));
        }
        if actual > 0 {
            ixs.push(voucher.instruction(&t.receiver_authorizer));
        }
        ixs.push(channels::settle_and_seal(&fac, &t.channel, actual > 0));
        if r.gated {
            ixs.push(self.gate_close(&t.channel, upto::SCHEME_GATED_UPTO).await?);
        }
        ixs.push(
            Distribute {
                channel: t.channel,
                payer: t.from,
                rent_payer: fac,
                payee: fac,
                mint: t.mint,
                token_program,
                splits: t.splits(),
            }
            .instruction(),
        );
        // A gated claim fits a packet only with the facilitator's lookup tables.
        let (signature, pending) = self
            .send_own(&ixs, r.gated, keypair, Reason::UptoSettlementSimulation)
            .await?;
        self.closed_advance(&t.channel).await;
        let amount = actual.to_string();
        Ok(SettleReply::channel(
            signature.to_string(),
            amount,
            c.payer,
            None,
            pending,
        ))
    }

    /// The gated variant's parties and policy, from the accepted offer's `gate` extension
    /// (`None` for the stock scheme).
    fn channel_gate(&self, r: &UptoRequest) -> Result<Option<ChannelGate>, Rejection> {
        if !r.gated {
            return Ok(None);
        }
        let fac = self.facilitator();
        adapter::read_channel_gate(
            &r.accepted,
            r.resource.as_ref().map(|res| res.url.as_str()),
            Expectations {
                facilitator: &fac,
                network: &r.requirements.network,
                trusted_services: &self.settings.trusted_services,
                now: now_unix(),
                skew: i64::try_from(self.settings.clock_skew.as_secs()).unwrap_or(i64::MAX),
            },
        )
        .map(Some)
    }

    /// The gate's close of the sealed `channel` (its record read now): what the channel did
    /// not spend back to the payer's policy, the payee's feedback tagged `tag`.
    pub(crate) async fn gate_close(
        &self,
        channel: &Pubkey,
        tag: &str,
    ) -> Result<solana_sdk::instruction::Instruction, Rejection> {
        self.gate_close_if_recorded(channel, tag)
            .await?
            .ok_or_else(|| {
                bad(
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
    ) -> Result<Option<solana_sdk::instruction::Instruction>, Rejection> {
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
            trust_gate_client::instructions::ChannelFeedback {
                score: 90,
                tag1: "x402".into(),
                tag2: tag.into(),
                ..Default::default()
            },
        )))
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
            .ok_or_else(|| bad(state_reason, format!("channel {address} does not exist")))?;
        if account.owner != channels::PROGRAM_ID {
            return Err(bad(state_reason, format!("{address} is not a channel")));
        }
        Channel::decode(&account.data).ok_or_else(|| {
            bad(
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
        keypair: &solana_sdk::signature::Keypair,
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
            Some(Err(err)) => Err(bad(
                failed,
                format!("this transaction landed in {signature} and failed on chain: {err}"),
            )),
        }
    }

    /// Signs `ixs` alone as v0 (with the lookup tables when `with_tables`), sends and waits:
    /// its signature, and whether it is still pending.
    pub(crate) async fn send_own(
        &self,
        ixs: &[solana_sdk::instruction::Instruction],
        with_tables: bool,
        keypair: &solana_sdk::signature::Keypair,
        refused: Reason,
    ) -> Result<(Signature, bool), Rejection> {
        let tables = if with_tables {
            self.tables().await
        } else {
            Vec::new()
        };
        let blockhash = self
            .chain
            .rpc
            .get_latest_blockhash()
            .await
            .map_err(Rejection::rpc)?;
        let tx = trust_gate_client::settle::transaction(
            &self.facilitator(),
            ixs,
            &tables,
            blockhash,
            &[keypair],
        )
        .map_err(|e| bad(Reason::TransactionFailed, e.to_string()))?;
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
            return Err(bad(
                refused,
                format!("the cluster's simulation refused it: {err} ({summary})"),
            ));
        }
        match self.confirm(&signature).await {
            Outcome::Landed(Ok(())) => Ok(false),
            Outcome::Landed(Err(err)) => {
                Err(bad(failed, format!("{signature} failed on chain: {err}")))
            }
            Outcome::Pending => Ok(true),
        }
    }
}

/// The `upto` family's handler: `upto` and `trust-gate-upto`.
pub struct Upto;

#[async_trait::async_trait]
impl Scheme for Upto {
    fn names(&self) -> &'static [&'static str] {
        &[upto::SCHEME_UPTO, upto::SCHEME_GATED_UPTO]
    }

    async fn extra(&self, f: &Facilitator, _name: &str) -> Value {
        // A server copies every key of this into its offers: the sponsor only.
        json!({"feePayer": f.facilitator().to_string()})
    }

    async fn verify(&self, f: &Facilitator, call: Call<'_>) -> Result<Verified, Rejection> {
        let r = UptoRequest::from_bytes(call.body)?;
        let payer = f.verify_upto(&r).await?;
        Ok(Verified::Valid { payer, extra: None })
    }

    async fn settle(&self, f: &Facilitator, call: Call<'_>) -> Result<SettleReply, Rejection> {
        let r = UptoRequest::from_bytes(call.body)?;
        f.settle_upto(&r).await
    }
}
