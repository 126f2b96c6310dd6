use anchor_lang::prelude::*;

/// The most members an arbiter set has.
pub const MAX_ARBITERS: usize = 5;

/// A k-of-n arbiter: `threshold` of its members decide a held share's dispute together.
/// Immutable, at the PDA `["arbiter_set", ArbiterSet::id(threshold, members)]`, so its address
/// names exactly these members and this threshold: a payer's policy and a payee's acceptance
/// policy name the set by that address, like a key.
///
/// Offsets: 8 threshold, 9 members (5 × 32, ascending, then default keys), 169 bump.
#[account]
#[derive(InitSpace, Debug, PartialEq, Eq)]
pub struct ArbiterSet {
    pub threshold: u8,
    pub members: [Pubkey; MAX_ARBITERS],
    pub bump: u8,
}

impl ArbiterSet {
    /// The seed that names a set: sha256 of the threshold and the members in order.
    pub fn id(threshold: u8, members: &[Pubkey]) -> [u8; 32] {
        let mut parts: Vec<&[u8]> = vec![core::slice::from_ref(&threshold)];
        parts.extend(members.iter().map(|m| m.as_ref()));
        solana_sha256_hasher::hashv(&parts).to_bytes()
    }

    /// 1 to 5 members, strictly ascending (so distinct, and one address per set), none the
    /// default key; a threshold of 1 to the number of members.
    pub fn validate(threshold: u8, members: &[Pubkey]) -> bool {
        let n = members.len();
        (1..=MAX_ARBITERS).contains(&n)
            && (1..=n).contains(&usize::from(threshold))
            && members.iter().all(|m| *m != Pubkey::default())
            && members.windows(2).all(|w| w[0] < w[1])
    }

    /// The set at `info`, read as an `Account` is (owner, discriminator).
    pub fn read(info: &AccountInfo) -> Result<ArbiterSet> {
        trust_gate_program_common::pda_account::read(info)
    }

    /// Whether `threshold` distinct members signed among `accounts`; the `payer`'s keys (the
    /// disputing payment's payer's) never count.
    pub fn signed_by(&self, accounts: &[AccountInfo], payer: &[Pubkey]) -> bool {
        let signed = self
            .members
            .iter()
            .filter(|m| **m != Pubkey::default() && !payer.contains(m))
            .filter(|m| accounts.iter().any(|a| a.is_signer && a.key == *m))
            .count();
        signed >= usize::from(self.threshold)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_has_one_to_five_ascending_members_and_a_reachable_threshold() {
        let mut keys: Vec<Pubkey> = (0..6).map(|_| Pubkey::new_unique()).collect();
        keys.sort();
        assert!(ArbiterSet::validate(2, &keys[..3]));
        assert!(ArbiterSet::validate(5, &keys[..5]));
        assert!(!ArbiterSet::validate(1, &keys[..6]), "six members");
        assert!(!ArbiterSet::validate(1, &[]), "none");
        assert!(!ArbiterSet::validate(0, &keys[..2]), "threshold 0");
        assert!(!ArbiterSet::validate(3, &keys[..2]), "threshold above n");
        assert!(!ArbiterSet::validate(1, &[keys[1], keys[0]]), "descending");
        assert!(!ArbiterSet::validate(1, &[keys[0], keys[0]]), "twice");
        assert!(
            !ArbiterSet::validate(1, &[Pubkey::default()]),
            "default key"
        );
        assert_ne!(ArbiterSet::id(1, &keys[..2]), ArbiterSet::id(2, &keys[..2]));
    }
}
