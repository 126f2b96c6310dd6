//! x402's stock `upto` scheme through the facilitator over HTTP, on the localnet `trust-gate
//! up` runs (its payment-channels stand-in): a client's open verified and deposited, a replay
//! refused, claims refused above the ceiling and without the server's voucher, the claim of
//! the whole ceiling and the server's cancel (a claim of nothing, a full refund) sealed and
//! distributed. The test
//! plays the client and the resource server (which holds the voucher key), as `@x402/svm`
//! 2.27's would.
//!
//! A claim between 0 and the ceiling pays two parties (the payee, and the payer's refund):
//! on this localnet that needs the demo world's Token-2022 mint (the bank's classic SPL Token
//! cannot take the program's two-payout call, see docs/channels.md), which the metered claim
//! here uses.

use crate::services::{self, Services};
use base64::{engine::general_purpose::STANDARD, Engine as _};
use serde_json::{json, Value};
use solana_sdk::hash::Hash;
use solana_sdk::instruction::Instruction;
use solana_sdk::message::{v0, VersionedMessage};
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::{Keypair, Signature, Signer};
use solana_sdk::transaction::VersionedTransaction;
use trust_gate_client::channels::{self, Channel, Open, Split, Status};
use trust_gate_client::settle::{ComputeBudget, TokenProgram};
use trust_gate_client::{chain, simulate::now_unix};
use trust_gate_x402::reason::Reason;

pub(crate) const CEILING: u64 = 2_000_000;
const MEMO: &str = "order-1";
const RESOURCE: &str = "http://127.0.0.1/metered";

pub(crate) struct Client<'a> {
    s: &'a Services,
    mint: Pubkey,
    program: TokenProgram,
    /// The gated variant (`trust-gate-upto`): the demo payer's metered policy decides.
    gated: bool,
    pub payer: Keypair,
    /// The resource server's voucher key (extra.receiverAuthorizer).
    pub server: Keypair,
    requirements: Value,
}

impl<'a> Client<'a> {
    /// A client of the demo mint (SPL Token).
    async fn new(s: &'a Services) -> Client<'a> {
        Client::of(s, s.env.world.mint(), TokenProgram::SplToken).await
    }

    pub(crate) async fn of(s: &'a Services, mint: Pubkey, program: TokenProgram) -> Client<'a> {
        let w = &s.env.world;
        let network = s.facilitator.facilitator.caip2().await.unwrap();
        let server = Keypair::new();
        let requirements = json!({
            "scheme": "upto",
            "network": network,
            "amount": CEILING.to_string(),
            "asset": mint.to_string(),
            "payTo": w.service.owner.pubkey().to_string(),
            "maxTimeoutSeconds": 300,
            "extra": {
                "feePayer": w.facilitator.pubkey().to_string(),
                "receiverAuthorizer": server.pubkey().to_string(),
                "withdrawDelay": 900,
                "tokenProgram": program.id().to_string(),
                "paymentFlow": "escrow",
                "memo": MEMO,
            },
        });
        Client {
            s,
            mint,
            program,
            gated: false,
            payer: w.payer(3).unwrap().owner.insecure_clone(),
            server,
            requirements,
        }
    }

    /// The client's open and payload, as the stock client builds them.
    pub(crate) async fn payload(&self, salt: u64) -> (Open, Value) {
        let w = &self.s.env.world;
        let fac = w.facilitator.pubkey();
        let open = Open {
            payer: self.payer.pubkey(),
            rent_payer: fac,
            payee: fac,
            mint: self.mint,
            token_program: self.program,
            authorized_signer: self.server.pubkey(),
            salt,
            deposit: CEILING,
            grace_period: 900,
            open_slot: self.s.env.rpc.get_slot().await.unwrap(),
            splits: vec![Split {
                recipient: w.service.owner.pubkey(),
                bps: channels::ALL_BPS,
            }],
        };
        let mut ixs = ComputeBudget {
            unit_limit: Some(90_000),
            unit_price_micro_lamports: Some(1),
        }
        .instructions();
        let tables = if self.gated {
            let w = &self.s.env.world;
            let agent = w.payer(3).unwrap();
            ixs.push(self.s.env.b.gate_channel_open(
                &self.payer.pubkey(),
                &agent.asset(),
                &w.service.asset(),
                &fac,
                &self.mint,
                CEILING,
                trust_gate_migrations::demo::METERED_POLICY_ID,
                &open.channel(),
                Default::default(),
            ));
            self.s.env.tables().await
        } else {
            Vec::new()
        };
        ixs.push(open.instruction());
        ixs.push(Instruction::new_with_bytes(
            trust_gate_program_common::external::ids::MEMO,
            MEMO.as_bytes(),
            vec![],
        ));
        let blockhash: Hash = self.s.env.rpc.get_latest_blockhash().await.unwrap();
        let message =
            VersionedMessage::V0(v0::Message::try_compile(&fac, &ixs, &tables, blockhash).unwrap());
        let n = usize::from(message.header().num_required_signatures);
        let mut signatures = vec![Signature::default(); n];
        let at = message
            .static_account_keys()
            .iter()
            .position(|k| *k == self.payer.pubkey())
            .unwrap();
        signatures[at] = self.payer.sign_message(&message.serialize());
        let tx = VersionedTransaction {
            signatures,
            message,
        };
        let now = now_unix();
        let payload = json!({
            "from": self.payer.pubkey().to_string(),
            "maxAmount": CEILING.to_string(),
            "expiresAt": now + 300,
            "validAfter": now - 1,
            "nonce": salt.to_string(),
            "openSlot": open.open_slot.to_string(),
            "channelId": open.channel().to_string(),
            "deposit": CEILING.to_string(),
            "authorizedSigner": self.server.pubkey().to_string(),
            "openTransaction": STANDARD.encode(bincode::serialize(&tx).unwrap()),
        });
        (open, payload)
    }

    pub(crate) fn body(&self, payload: &Value, amount: u64) -> Value {
        let mut requirements = self.requirements.clone();
        requirements["amount"] = amount.to_string().into();
        json!({
            "x402Version": 2,
            "paymentPayload": {
                "x402Version": 2,
                "resource": {"url": RESOURCE},
                "accepted": self.requirements,
                "payload": payload,
            },
            "paymentRequirements": requirements,
        })
    }

    pub(crate) async fn post(&self, route: &str, body: &Value) -> Value {
        let url = format!("{}{route}", self.s.facilitator.url());
        self.s
            .http
            .post(url)
            .json(body)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// The server's claim of `amount`, its voucher signed by `key`.
    pub(crate) fn claim(
        &self,
        payload: &Value,
        channel: &Pubkey,
        amount: u64,
        key: &Keypair,
    ) -> Value {
        let mut p = payload.clone();
        p["type"] = "claim".into();
        let expires_at = p["expiresAt"].as_i64().unwrap();
        let message = channels::voucher_message(channel, amount, expires_at);
        p["voucherSignature"] = key.sign_message(&message).to_string().into();
        self.body(&p, amount)
    }
}

async fn channel(s: &Services, address: &Pubkey) -> Option<Channel> {
    let account = chain::account(&s.env.rpc, address).await.unwrap()?;
    Channel::decode(&account.data)
}

impl Client<'_> {
    /// `owner`'s balance of the client's mint.
    pub(crate) async fn tokens(&self, owner: &Pubkey) -> u64 {
        let ata = self.program.associated_account(owner, &self.mint);
        let account = chain::account(&self.s.env.rpc, &ata)
            .await
            .unwrap()
            .unwrap();
        // The amount sits at the same offset in both token programs' accounts.
        u64::from_le_bytes(account.data[64..72].try_into().unwrap())
    }
}

#[tokio::test]
async fn a_stock_upto_payment_deposits_then_claims_through_the_facilitator() {
    let s = services::start().await;
    let c = Client::new(&s).await;
    let supported = s.get_json(s.f("/supported")).await;
    assert!(supported["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .any(|k| k["scheme"] == "upto"));
    let (open, payload) = c.payload(1).await;
    let address = open.channel();
    let payer_before = c.tokens(&c.payer.pubkey()).await;

    let verified = c.post("/verify", &c.body(&payload, CEILING)).await;
    assert_eq!(verified["isValid"], true, "{verified}");
    assert_eq!(verified["payer"], c.payer.pubkey().to_string());
    assert!(
        channel(&s, &address).await.is_none(),
        "/verify sends nothing"
    );

    let mut deposit = payload.clone();
    deposit["type"] = "deposit".into();
    let settled = c.post("/settle", &c.body(&deposit, CEILING)).await;
    assert_eq!(settled["success"], true, "{settled}");
    assert_eq!(settled["amount"], CEILING.to_string());
    let ch = channel(&s, &address).await.unwrap();
    assert_eq!((ch.status, ch.deposit), (Status::Open, CEILING));
    assert_eq!(c.tokens(&c.payer.pubkey()).await, payer_before - CEILING);
    // The same deposit again: the outcome of its own open, nothing sent or escrowed twice.
    let again = c.post("/settle", &c.body(&deposit, CEILING)).await;
    assert_eq!(again["success"], true, "{again}");
    assert_eq!(
        (&again["transaction"], &again["replayed"]),
        (&settled["transaction"], &json!(true))
    );
    assert_eq!(c.tokens(&c.payer.pubkey()).await, payer_before - CEILING);

    // Claims the facilitator refuses: above the ceiling, no voucher, another key's voucher.
    let over = c
        .post(
            "/settle",
            &c.claim(&payload, &address, CEILING + 1, &c.server),
        )
        .await;
    assert_eq!(
        over["errorReason"],
        Reason::UptoSettlementExceedsAmount,
        "{over}"
    );
    let mut bare = c.claim(&payload, &address, CEILING, &c.server);
    bare["paymentPayload"]["payload"]
        .as_object_mut()
        .unwrap()
        .remove("voucherSignature");
    let bare = c.post("/settle", &bare).await;
    assert_eq!(bare["errorReason"], Reason::UptoMissingVoucher, "{bare}");
    let forged = c
        .post(
            "/settle",
            &c.claim(&payload, &address, CEILING, &Keypair::new()),
        )
        .await;
    assert_eq!(
        forged["errorReason"],
        Reason::UptoVoucherSignature,
        "{forged}"
    );

    // The server charges the whole ceiling: sealed at it and distributed to payTo.
    let pay_to = s.env.world.service.owner.pubkey();
    let paid_before = c.tokens(&pay_to).await;
    let claimed = c
        .post("/settle", &c.claim(&payload, &address, CEILING, &c.server))
        .await;
    assert_eq!(claimed["success"], true, "{claimed}");
    assert_eq!(claimed["amount"], CEILING.to_string());
    assert_eq!(c.tokens(&pay_to).await, paid_before + CEILING);
    let ch = channel(&s, &address).await.unwrap();
    assert_eq!((ch.status, ch.settled), (Status::Distributed, CEILING));
    // A claim again: the channel is no longer open.
    let twice = c
        .post("/settle", &c.claim(&payload, &address, CEILING, &c.server))
        .await;
    assert_eq!(twice["errorReason"], Reason::UptoChannelState, "{twice}");
}

#[tokio::test]
async fn a_claim_of_nothing_refunds_the_whole_deposit() {
    let s = services::start().await;
    let c = Client::new(&s).await;
    let (open, payload) = c.payload(2).await;
    let before = c.tokens(&c.payer.pubkey()).await;
    let mut deposit = payload.clone();
    deposit["type"] = "deposit".into();
    let settled = c.post("/settle", &c.body(&deposit, CEILING)).await;
    assert_eq!(settled["success"], true, "{settled}");
    // Only the server may cancel: a claim of 0 without its voucher is refused.
    let mut bare = c.claim(&payload, &open.channel(), 0, &c.server);
    bare["paymentPayload"]["payload"]
        .as_object_mut()
        .unwrap()
        .remove("voucherSignature");
    let refused = c.post("/settle", &bare).await;
    assert_eq!(
        refused["errorReason"],
        Reason::UptoMissingVoucher,
        "{refused}"
    );
    // The handler failed: the server cancels with its voucher of 0.
    let cancel = c.claim(&payload, &open.channel(), 0, &c.server);
    let cancelled = c.post("/settle", &cancel).await;
    assert_eq!(cancelled["success"], true, "{cancelled}");
    assert_eq!(cancelled["amount"], "0");
    assert_eq!(c.tokens(&c.payer.pubkey()).await, before);
    let ch = channel(&s, &open.channel()).await.unwrap();
    assert_eq!((ch.status, ch.settled), (Status::Distributed, 0));
}

#[tokio::test]
async fn a_wallets_deposits_beyond_its_rate_are_refused_before_anything_is_sent() {
    // One deposit, then one every 1 000 s: the rent each open would have the facilitator
    // advance is bounded per wallet, as an exact payer's settlements are.
    let s = services::start_with(|c| {
        c.limits.per_payer = Some(trust_gate_facilitator::config::Rate {
            per_second: 0.001,
            burst: 1,
        })
    })
    .await;
    let c = Client::new(&s).await;
    let deposit = |payload: &Value| {
        let mut d = payload.clone();
        d["type"] = "deposit".into();
        c.body(&d, CEILING)
    };
    let (_, first) = c.payload(11).await;
    let settled = c.post("/settle", &deposit(&first)).await;
    assert_eq!(settled["success"], true, "{settled}");
    let fac = s.env.world.facilitator.pubkey();
    let lamports = s.env.rpc.get_balance(&fac).await.unwrap();
    let (second_open, second) = c.payload(12).await;
    let refused = c.post("/settle", &deposit(&second)).await;
    assert_eq!(refused["errorReason"], "payer_rate_limited", "{refused}");
    assert_eq!(s.env.rpc.get_balance(&fac).await.unwrap(), lamports);
    assert!(channel(&s, &second_open.channel()).await.is_none());
}

#[tokio::test]
async fn a_client_payload_carrying_the_servers_fields_or_another_shape_is_refused() {
    let s = services::start().await;
    let c = Client::new(&s).await;
    let (_, payload) = c.payload(3).await;
    for (field, value, want) in [
        (
            "voucherSignature",
            json!("x"),
            Reason::UptoUnexpectedVoucher,
        ),
        ("type", json!("deposit"), Reason::UptoPayloadType),
        ("openSlot", json!(true), Reason::UnsupportedPayloadType),
    ] {
        let mut p = payload.clone();
        p[field] = value;
        let r = c.post("/verify", &c.body(&p, CEILING)).await;
        assert_eq!(
            (r["isValid"].clone(), r["invalidReason"].clone()),
            (json!(false), json!(want)),
            "{field}: {r}"
        );
    }
    // Another facilitator's sponsor, and a deposit that is not the ceiling.
    let mut other = c.body(&payload, CEILING);
    other["paymentRequirements"]["extra"]["feePayer"] = Pubkey::new_unique().to_string().into();
    let r = c.post("/verify", &other).await;
    assert_eq!(r["invalidReason"], Reason::UptoFacilitatorMismatch, "{r}");
    let r = c.post("/verify", &c.body(&payload, CEILING - 1)).await;
    assert_eq!(r["invalidReason"], Reason::UptoAmountMismatch, "{r}");
    // An offer longer than the facilitator holds a channel's rent for.
    let mut long = c.body(&payload, CEILING);
    long["paymentRequirements"]["maxTimeoutSeconds"] = 3_601.into();
    let r = c.post("/verify", &long).await;
    assert_eq!(
        r["invalidReason"],
        Reason::UptoChannelLifetimeExceeded,
        "{r}"
    );
}

#[tokio::test]
async fn a_metered_claim_pays_the_charge_and_refunds_the_rest() {
    let s = services::start().await;
    let mint = s.env.world.metered_mint();
    let c = Client::of(&s, mint, TokenProgram::Token2022).await;
    let (open, payload) = c.payload(4).await;
    let pay_to = s.env.world.service.owner.pubkey();
    let (payer_before, paid_before) = (c.tokens(&c.payer.pubkey()).await, c.tokens(&pay_to).await);
    let mut deposit = payload.clone();
    deposit["type"] = "deposit".into();
    let settled = c.post("/settle", &c.body(&deposit, CEILING)).await;
    assert_eq!(settled["success"], true, "{settled}");
    assert_eq!(c.tokens(&c.payer.pubkey()).await, payer_before - CEILING);

    // The server served 1.25 of the 2.00 it reserved.
    let charge = 1_250_000;
    let claimed = c
        .post(
            "/settle",
            &c.claim(&payload, &open.channel(), charge, &c.server),
        )
        .await;
    assert_eq!(claimed["success"], true, "{claimed}");
    assert_eq!(claimed["amount"], charge.to_string());
    assert_eq!(c.tokens(&pay_to).await, paid_before + charge);
    assert_eq!(c.tokens(&c.payer.pubkey()).await, payer_before - charge);
    let ch = channel(&s, &open.channel()).await.unwrap();
    assert_eq!((ch.status, ch.settled), (Status::Distributed, charge));
}

/// A deposit whose claim never comes: once no claim can land any more (by the open's block
/// time), the facilitator's crank seals the channel at nothing and distributes it, the whole
/// deposit back to the payer and every lamport of rent back to the facilitator.
#[tokio::test]
async fn the_crank_closes_a_deposit_whose_claim_never_came() {
    let s = services::start().await;
    let c = Client::new(&s).await;
    let (open, payload) = c.payload(5).await;
    let before = c.tokens(&c.payer.pubkey()).await;
    let mut deposit = payload.clone();
    deposit["type"] = "deposit".into();
    let settled = c.post("/settle", &c.body(&deposit, CEILING)).await;
    assert_eq!(settled["success"], true, "{settled}");
    let crank = &s.facilitator.facilitator;
    let round = crank.reclaim_once().await.unwrap();
    assert_eq!(round.channels_unclaimed_closed, 0, "{round:?}");

    // Past the longest lifetime, the expiry's slack and the grace.
    let past = trust_gate_x402::upto::abandoned_after(0) as u64 + 60;
    s.env.localnet.warp(past).await.unwrap();
    let fac = s.env.world.facilitator.pubkey();
    let rent = s.env.rpc.get_balance(&open.channel()).await.unwrap()
        + s.env.rpc.get_balance(&open.escrow()).await.unwrap();
    let fac_before = s.env.rpc.get_balance(&fac).await.unwrap();
    let round = crank.reclaim_once().await.unwrap();
    assert_eq!(round.channels_unclaimed_closed, 1, "{round:?}");
    // Distributed past its slot window, the channel is deleted at once: every lamport of its
    // and its escrow's rent back, less the close's one signature; the deposit back to the
    // payer.
    assert!(channel(&s, &open.channel()).await.is_none());
    assert_eq!(
        c.tokens(&c.payer.pubkey()).await,
        before,
        "the whole deposit back"
    );
    assert_eq!(
        s.env.rpc.get_balance(&fac).await.unwrap(),
        fac_before + rent - 5_000
    );
    // The server's claim comes too late.
    let late = c
        .post(
            "/settle",
            &c.claim(&payload, &open.channel(), CEILING, &c.server),
        )
        .await;
    assert_eq!(late["success"], false, "{late}");
    let round = crank.reclaim_once().await.unwrap();
    assert_eq!(
        (round.channels_unclaimed_closed, round.channels_reclaimed),
        (0, 0),
        "{round:?}"
    );
}

impl<'a> Client<'a> {
    /// A client of the gated variant in the metered mint: the offer names `trust-gate-upto`
    /// and carries the demo service's signed `gate` extension for the tier-3 payer.
    pub(crate) async fn gated(s: &'a Services) -> Client<'a> {
        let mut c = Client::of(s, s.env.world.metered_mint(), TokenProgram::Token2022).await;
        c.gated = true;
        c.requirements["scheme"] = trust_gate_x402::upto::SCHEME_GATED_UPTO.into();
        let w = &s.env.world;
        let mut r: trust_gate_x402::PaymentRequirements =
            serde_json::from_value(c.requirements.clone()).unwrap();
        let mut g = trust_gate_x402::GateExtension {
            payer_agent_asset: w.payer(3).unwrap().asset().to_string(),
            payee_agent_asset: w.service.asset().to_string(),
            payee_recipient: r.pay_to.clone(),
            policy_id: trust_gate_migrations::demo::METERED_POLICY_ID,
            issued_at: now_unix(),
            holdback: None,
            service_signature: String::new(),
        };
        trust_gate_x402::sign_challenge(&w.service_key, &r, RESOURCE, &mut g);
        r.extra.insert(
            trust_gate_x402::GATE_EXTENSION.into(),
            serde_json::to_value(&g).unwrap(),
        );
        c.requirements = serde_json::to_value(&r).unwrap();
        c
    }
}

/// The payer's metered policy: what it counted today.
async fn spent_today(s: &Services) -> u64 {
    let w = &s.env.world;
    let policy = chain::policy(
        &s.env.rpc,
        &s.env.b.ids,
        &w.payer(3).unwrap().asset(),
        trust_gate_migrations::demo::METERED_POLICY_ID,
    )
    .await
    .unwrap()
    .unwrap();
    policy.day_spent
}

/// The gated variant: the deposit runs the payer's metered policy (counted, recorded), the
/// claim closes the channel through the gate (the unspent part back to the policy, the payee's
/// feedback), and an offer whose gate extension another key signed opens nothing.
#[tokio::test]
async fn a_gated_upto_payment_runs_the_payers_policy_and_closes_through_the_gate() {
    let s = services::start().await;
    let c = Client::gated(&s).await;
    let (open, payload) = c.payload(6).await;
    let address = open.channel();
    let pay_to = s.env.world.service.owner.pubkey();
    let (payer_before, paid_before) = (c.tokens(&c.payer.pubkey()).await, c.tokens(&pay_to).await);
    let spent_before = spent_today(&s).await;

    // The gate extension signed by another key: refused before anything is sent.
    let mut forged = c.body(&payload, CEILING);
    forged["paymentPayload"]["accepted"]["extra"]["gate"]["serviceSignature"] =
        Keypair::new().sign_message(b"x").to_string().into();
    forged["paymentPayload"]["payload"]["type"] = "deposit".into();
    let refused = c.post("/settle", &forged).await;
    assert_eq!(
        refused["errorReason"], "challenge_signature_invalid",
        "{refused}"
    );
    assert!(channel(&s, &address).await.is_none());

    let mut deposit = payload.clone();
    deposit["type"] = "deposit".into();
    let settled = c.post("/settle", &c.body(&deposit, CEILING)).await;
    assert_eq!(settled["success"], true, "{settled}");
    assert_eq!(
        spent_today(&s).await,
        spent_before + CEILING,
        "the policy counts the deposit"
    );
    let record = s.env.b.pda.channel_record(&address);
    assert!(chain::account(&s.env.rpc, &record).await.unwrap().is_some());

    // 0.75 of the 2.00 served: paid, the rest back to the payer and to the policy.
    let charge = 750_000;
    let claimed = c
        .post("/settle", &c.claim(&payload, &address, charge, &c.server))
        .await;
    assert_eq!(claimed["success"], true, "{claimed}");
    assert_eq!(claimed["amount"], charge.to_string());
    assert_eq!(c.tokens(&pay_to).await, paid_before + charge);
    assert_eq!(c.tokens(&c.payer.pubkey()).await, payer_before - charge);
    assert_eq!(
        spent_today(&s).await,
        spent_before + charge,
        "the unspent part is released"
    );
    assert!(chain::account(&s.env.rpc, &record).await.unwrap().is_none());
    let fac = s.env.world.facilitator.pubkey();
    let receipt = s.env.b.pda.channel_receipt(&fac, &address);
    assert!(chain::account(&s.env.rpc, &receipt)
        .await
        .unwrap()
        .is_some());
    let ch = channel(&s, &address).await.unwrap();
    assert_eq!((ch.status, ch.settled), (Status::Distributed, charge));
}

/// A gated deposit whose claim never comes is closed by the crank as a stock one is, through
/// the gate: the whole deposit back to the payer (and to its policy's counters), the record
/// closed, no feedback.
#[tokio::test]
async fn the_crank_closes_a_gated_deposit_whose_claim_never_came() {
    let s = services::start().await;
    let c = Client::gated(&s).await;
    let (open, payload) = c.payload(7).await;
    let address = open.channel();
    let before = c.tokens(&c.payer.pubkey()).await;
    let mut deposit = payload.clone();
    deposit["type"] = "deposit".into();
    let settled = c.post("/settle", &c.body(&deposit, CEILING)).await;
    assert_eq!(settled["success"], true, "{settled}");
    assert_eq!(c.tokens(&c.payer.pubkey()).await, before - CEILING);
    let record = s.env.b.pda.channel_record(&address);
    assert!(chain::account(&s.env.rpc, &record).await.unwrap().is_some());

    let crank = &s.facilitator.facilitator;
    let past = trust_gate_x402::upto::abandoned_after(0) as u64 + 60;
    s.env.localnet.warp(past).await.unwrap();
    let round = crank.reclaim_once().await.unwrap();
    assert_eq!(round.channels_unclaimed_closed, 1, "{round:?}");
    assert_eq!(c.tokens(&c.payer.pubkey()).await, before);
    assert!(chain::account(&s.env.rpc, &record).await.unwrap().is_none());
    let fac = s.env.world.facilitator.pubkey();
    let receipt = s.env.b.pda.channel_receipt(&fac, &address);
    assert!(
        chain::account(&s.env.rpc, &receipt)
            .await
            .unwrap()
            .is_none(),
        "nothing moved: no feedback"
    );
}
