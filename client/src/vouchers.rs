//! A payment channel's vouchers, checked off chain: what a facilitator does for every payment
//! made with a voucher of a channel the gate let open, at the cost of one Ed25519 signature
//! check and no RPC call. The channel's terms are read once, at its open (its gate record);
//! the payer's kill switch comes from a poller (the caller's `paused`).
//!
//! What binds on chain is only the gated deposit: the program applies any voucher its key
//! signed up to the channel's own deposit (which a `top_up` raises without the gate), and
//! anyone may apply it (`settle` is permissionless). These checks are what a facilitator (or a
//! server checking vouchers itself) adds: vouchers capped at the deposit the gate counted, the
//! price within the policy's per-payment cap, nothing after a pause.
//!
//! A voucher's signature is checked last: every other refusal costs nothing.

use crate::channels::voucher_message;
use crate::instructions::ed25519_instruction;
use anchor_lang::prelude::Pubkey;
use solana_sdk::instruction::Instruction;
use solana_sdk::signature::{Keypair, Signature, Signer};

/// A voucher as it travels: the channel, the cumulative amount it authorizes, its expiry (unix
/// seconds, 0 = none) and the voucher key's signature of [`voucher_message`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Voucher {
    pub channel: Pubkey,
    pub cumulative: u64,
    pub expires_at: i64,
    pub signature: Signature,
}

impl Voucher {
    /// `signer` (the channel's voucher key) signs `cumulative` of `channel`.
    pub fn sign(signer: &Keypair, channel: &Pubkey, cumulative: u64, expires_at: i64) -> Voucher {
        Voucher {
            channel: *channel,
            cumulative,
            expires_at,
            signature: signer.sign_message(&voucher_message(channel, cumulative, expires_at)),
        }
    }

    pub fn message(&self) -> [u8; 50] {
        voucher_message(&self.channel, self.cumulative, self.expires_at)
    }

    /// Whether `key` signed it (strict Ed25519, as the runtime's precompile checks it: a
    /// voucher accepted here is not refused on chain for its signature).
    pub fn signed_by(&self, key: &Pubkey) -> bool {
        self.signature.verify(key.as_ref(), &self.message())
    }

    /// The Ed25519 precompile instruction that carries it, for `settle` or
    /// `settle_and_seal(true)` right after.
    pub fn instruction(&self, key: &Pubkey) -> Instruction {
        ed25519_instruction(key, &self.signature, &self.message())
    }
}

/// A channel's voucher key with its curve point decompressed once: it checks vouchers exactly
/// as [`Voucher::signed_by`] does (the same strict Ed25519 as `Signature::verify`), one point
/// decompression cheaper, for a facilitator that checks many vouchers of one key.
#[derive(Clone, Copy, Debug)]
pub struct VoucherKey(solana_ed25519::ed_sigs::VerificationKey);

impl VoucherKey {
    /// `None` when `key` is not a point of the curve (then no voucher of it verifies).
    pub fn new(key: &Pubkey) -> Option<VoucherKey> {
        solana_ed25519::ed_sigs::VerificationKey::try_from(key.to_bytes())
            .ok()
            .map(VoucherKey)
    }

    pub fn verifies(&self, v: &Voucher) -> bool {
        let sig: [u8; 64] = v.signature.into();
        let sig = solana_ed25519::ed_sigs::Signature::from_bytes(&sig);
        self.0.verify_dalek(&sig, &v.message()).is_ok()
    }
}

/// What binds a channel's vouchers off chain, from its gate record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Terms {
    pub channel: Pubkey,
    /// The channel's voucher key.
    pub voucher_key: Pubkey,
    /// The deposit the gate counted: no voucher above it, whatever the channel holds.
    pub cap: u64,
    /// The payer policy's per-payment cap (0 = none): no one payment's price above it.
    pub per_payment_cap: u64,
}

/// Why a voucher is refused. [`Refusal::reason`] is its name on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The payer's kill switch is paused (as of the poller's last read).
    Paused,
    /// A voucher of another channel.
    WrongChannel,
    /// The price is above the payer policy's per-payment cap.
    OverPerPaymentCap { price: u64, cap: u64 },
    /// The voucher does not add exactly the price to what was accepted: a replay, one out of
    /// order, or another amount.
    WrongAmount {
        accepted: u64,
        price: u64,
        cumulative: u64,
    },
    /// Above the deposit the gate counted.
    OverDeposit { cap: u64, cumulative: u64 },
    /// Expired at `now`.
    Expired { expires_at: i64 },
    /// Not signed by the channel's voucher key.
    BadSignature,
}

impl Refusal {
    pub fn reason(&self) -> &'static str {
        match self {
            Refusal::Paused => "payer_kill_switch_paused",
            Refusal::WrongChannel => "voucher_channel_mismatch",
            Refusal::OverPerPaymentCap { .. } => "price_over_per_payment_cap",
            Refusal::WrongAmount { .. } => "voucher_amount_mismatch",
            Refusal::OverDeposit { .. } => "voucher_over_gated_deposit",
            Refusal::Expired { .. } => "voucher_expired",
            Refusal::BadSignature => "voucher_signature_invalid",
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Paused => write!(f, "the payer's kill switch is paused"),
            Refusal::WrongChannel => write!(f, "the voucher is for another channel"),
            Refusal::OverPerPaymentCap { price, cap } => {
                write!(f, "price {price} is above the payer policy's per-payment cap {cap}")
            }
            Refusal::WrongAmount {
                accepted,
                price,
                cumulative,
            } => write!(
                f,
                "the voucher's cumulative amount is {cumulative}, not the {accepted} accepted plus the price {price}"
            ),
            Refusal::OverDeposit { cap, cumulative } => write!(
                f,
                "the voucher's cumulative amount {cumulative} is above the deposit the gate counted ({cap})"
            ),
            Refusal::Expired { expires_at } => write!(f, "the voucher expired at {expires_at}"),
            Refusal::BadSignature => write!(f, "the voucher is not signed by the channel's voucher key"),
        }
    }
}

/// Checks that `v` pays `price` on top of `accepted` (the channel's latest accepted
/// cumulative amount) under `terms` at unix time `now`; returns the new accepted amount.
pub fn check(
    terms: &Terms,
    accepted: u64,
    v: &Voucher,
    price: u64,
    now: i64,
    paused: bool,
) -> Result<u64, Refusal> {
    check_with(terms, accepted, v, price, now, paused, Voucher::signed_by)
}

fn check_unsigned(
    terms: &Terms,
    accepted: u64,
    v: &Voucher,
    price: u64,
    now: i64,
    paused: bool,
) -> Result<u64, Refusal> {
    if paused {
        return Err(Refusal::Paused);
    }
    if v.channel != terms.channel {
        return Err(Refusal::WrongChannel);
    }
    if terms.per_payment_cap != 0 && price > terms.per_payment_cap {
        return Err(Refusal::OverPerPaymentCap {
            price,
            cap: terms.per_payment_cap,
        });
    }
    if accepted.checked_add(price) != Some(v.cumulative) {
        return Err(Refusal::WrongAmount {
            accepted,
            price,
            cumulative: v.cumulative,
        });
    }
    if v.cumulative > terms.cap {
        return Err(Refusal::OverDeposit {
            cap: terms.cap,
            cumulative: v.cumulative,
        });
    }
    // The program's rule: an expiry of 0 never expires, any other is good strictly before.
    if v.expires_at != 0 && now >= v.expires_at {
        return Err(Refusal::Expired {
            expires_at: v.expires_at,
        });
    }
    Ok(v.cumulative)
}

/// [`check`] with the signature check left to `signed`, given the voucher and the channel's
/// key (a caller that remembers the vouchers it verified spares the second check of the same
/// one, say a `/verify` then a `/settle` of it). Still last.
pub fn check_with(
    terms: &Terms,
    accepted: u64,
    v: &Voucher,
    price: u64,
    now: i64,
    paused: bool,
    signed: impl FnOnce(&Voucher, &Pubkey) -> bool,
) -> Result<u64, Refusal> {
    // Every refusal but the signature's, in `check`'s order.
    let cumulative = check_unsigned(terms, accepted, v, price, now, paused)?;
    if !signed(v, &terms.voucher_key) {
        return Err(Refusal::BadSignature);
    }
    Ok(cumulative)
}

/// The most channels one redemption transaction settles: x402 `batch-settlement`'s bound of
/// [voucher, `settle`] pairs per transaction, which fits a legacy packet with room to spare.
pub const MAX_REDEEMS_PER_TRANSACTION: usize = 4;

/// The transactions' instructions that apply each channel's latest accepted voucher on chain
/// (`settle`, which anyone may send): a voucher's precompile instruction right before each
/// `settle`, at most [`MAX_REDEEMS_PER_TRANSACTION`] channels a transaction. `latest` holds
/// each voucher with its channel's voucher key.
pub fn redemptions(latest: &[(Voucher, Pubkey)]) -> Vec<Vec<Instruction>> {
    latest
        .chunks(MAX_REDEEMS_PER_TRANSACTION)
        .map(|run| {
            run.iter()
                .flat_map(|(v, key)| [v.instruction(key), crate::channels::settle(&v.channel)])
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(key: &Keypair) -> Terms {
        Terms {
            channel: Pubkey::new_unique(),
            voucher_key: key.pubkey(),
            cap: 1_000,
            per_payment_cap: 300,
        }
    }

    #[test]
    fn a_decompressed_key_agrees_with_signed_by() {
        let key = Keypair::new();
        let channel = Pubkey::new_unique();
        let good = Voucher::sign(&key, &channel, 7, 0);
        let vk = VoucherKey::new(&key.pubkey()).unwrap();
        let other = VoucherKey::new(&Keypair::new().pubkey()).unwrap();
        let tampered = Voucher {
            cumulative: 8,
            ..good
        };
        let mut bytes: [u8; 64] = good.signature.into();
        bytes[63] ^= 0x80;
        let malleated = Voucher {
            signature: Signature::from(bytes),
            ..good
        };
        for (v, k, pk) in [
            (good, vk, key.pubkey()),
            (tampered, vk, key.pubkey()),
            (malleated, vk, key.pubkey()),
            (good, other, Pubkey::default()),
        ] {
            let expected = if pk == Pubkey::default() {
                false
            } else {
                v.signed_by(&pk)
            };
            assert_eq!(k.verifies(&v), expected, "{v:?}");
        }
        assert!(vk.verifies(&good));
    }

    #[test]
    fn a_voucher_of_exactly_the_price_more_is_accepted() {
        let key = Keypair::new();
        let t = terms(&key);
        let v = Voucher::sign(&key, &t.channel, 250, 0);
        assert_eq!(check(&t, 0, &v, 250, 100, false), Ok(250));
        let v = Voucher::sign(&key, &t.channel, 500, 101);
        assert_eq!(check(&t, 250, &v, 250, 100, false), Ok(500));
    }

    #[test]
    fn each_refusal_is_named() {
        let key = Keypair::new();
        let t = terms(&key);
        let good = Voucher::sign(&key, &t.channel, 300, 0);
        let cases = [
            (check(&t, 0, &good, 300, 0, true), Refusal::Paused),
            (
                check(
                    &t,
                    0,
                    &Voucher::sign(&key, &Pubkey::new_unique(), 300, 0),
                    300,
                    0,
                    false,
                ),
                Refusal::WrongChannel,
            ),
            (
                check(
                    &t,
                    0,
                    &Voucher::sign(&key, &t.channel, 301, 0),
                    301,
                    0,
                    false,
                ),
                Refusal::OverPerPaymentCap {
                    price: 301,
                    cap: 300,
                },
            ),
            // A replay of the accepted voucher, and one that skips ahead.
            (
                check(&t, 300, &good, 300, 0, false),
                Refusal::WrongAmount {
                    accepted: 300,
                    price: 300,
                    cumulative: 300,
                },
            ),
            (
                check(&t, 0, &good, 200, 0, false),
                Refusal::WrongAmount {
                    accepted: 0,
                    price: 200,
                    cumulative: 300,
                },
            ),
            (
                check(
                    &t,
                    900,
                    &Voucher::sign(&key, &t.channel, 1_100, 0),
                    200,
                    0,
                    false,
                ),
                Refusal::OverDeposit {
                    cap: 1_000,
                    cumulative: 1_100,
                },
            ),
            (
                check(
                    &t,
                    0,
                    &Voucher::sign(&key, &t.channel, 300, 50),
                    300,
                    50,
                    false,
                ),
                Refusal::Expired { expires_at: 50 },
            ),
            (
                check(
                    &t,
                    0,
                    &Voucher::sign(&Keypair::new(), &t.channel, 300, 0),
                    300,
                    0,
                    false,
                ),
                Refusal::BadSignature,
            ),
        ];
        for (got, want) in cases {
            assert_eq!(got, Err(want));
            assert!(!want.reason().is_empty() && !want.to_string().is_empty());
        }
        // An overflowing sum is refused as a wrong amount, not wrapped.
        let v = Voucher::sign(&key, &t.channel, 5, 0);
        assert!(matches!(
            check(&t, u64::MAX, &v, 6, 0, false),
            Err(Refusal::WrongAmount { .. })
        ));
        // Any one byte changed breaks the signature.
        let mut tampered = good;
        tampered.cumulative = 299;
        assert!(!tampered.signed_by(&key.pubkey()));
        assert!(good.signed_by(&key.pubkey()));
    }

    #[test]
    fn the_precompile_instruction_carries_the_wire_signature() {
        let key = Keypair::new();
        let channel = Pubkey::new_unique();
        let v = Voucher::sign(&key, &channel, 42, 7);
        // The same bytes as the builder that signs with the keypair itself (Ed25519 signatures
        // are deterministic).
        assert_eq!(
            v.instruction(&key.pubkey()),
            crate::channels::voucher(&key, &channel, 42, 7)
        );
    }

    #[test]
    fn redemptions_pack_four_channels_a_transaction_within_a_packet() {
        use solana_sdk::hash::Hash;
        use solana_sdk::message::Message;
        use solana_sdk::transaction::Transaction;
        let key = Keypair::new();
        let latest: Vec<(Voucher, Pubkey)> = (0..9)
            .map(|i| {
                (
                    Voucher::sign(&key, &Pubkey::new_unique(), 10 + i, 0),
                    key.pubkey(),
                )
            })
            .collect();
        let txs = redemptions(&latest);
        assert_eq!(txs.iter().map(Vec::len).collect::<Vec<_>>(), vec![8, 8, 2]);
        assert_eq!(txs[0][1], crate::channels::settle(&latest[0].0.channel));
        let fee_payer = Pubkey::new_unique();
        let message = Message::new_with_blockhash(&txs[0], Some(&fee_payer), &Hash::default());
        let size = bincode::serialized_size(&Transaction::new_unsigned(message)).unwrap();
        // A packet: 1 232 bytes.
        assert!(size <= 1_232, "{size} bytes");
    }
}
