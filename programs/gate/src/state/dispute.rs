use anchor_lang::prelude::*;
use anchor_lang::Discriminator;

/// How long after settlement its payer may dispute a payment: 7 days, in unix seconds. Past
/// it, a payee's reputation no longer moves for an old payment, and its records may close.
pub const DISPUTE_WINDOW_SECS: i64 = 7 * 24 * 60 * 60;
/// The score a dispute records in the registry.
pub const DISPUTE_SCORE: u8 = 0;
/// The registry tag of a dispute's feedback.
pub const DISPUTE_TAG: &str = "dispute";

/// A dispute of a settled payment. Separate from the feedback log so that a settled payment
/// can be disputed, once; closed together with the log, its rent back to whoever paid it.
///
/// Offsets: 8 facilitator, 40 payment_id_hash, 72 reason_hash, 104 disputed_by,
/// 136 rent_payer, 168 created_at.
#[account]
#[derive(InitSpace, Debug)]
pub struct DisputeRecord {
    pub facilitator: Pubkey,
    pub payment_id_hash: [u8; 32],
    pub reason_hash: [u8; 32],
    /// The payer's wallet that signed the dispute.
    pub disputed_by: Pubkey,
    /// Who paid this account's rent (the payer, or the facilitator as a service): the only
    /// account its rent may return to.
    pub rent_payer: Pubkey,
    pub created_at: i64,
}

impl DisputeRecord {
    /// Who a record's rent returns to, from its data: the rent payer it names. `None` for
    /// anything but a DisputeRecord.
    pub fn rent_recipient(data: &[u8]) -> Option<Pubkey> {
        if data.get(..8)? != DisputeRecord::DISCRIMINATOR {
            return None;
        }
        DisputeRecord::try_deserialize(&mut &data[..])
            .ok()
            .map(|r| r.rent_payer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anchor_lang::AccountSerialize;

    #[test]
    fn the_rent_goes_back_to_the_named_payer() {
        let r = DisputeRecord {
            facilitator: Pubkey::new_unique(),
            payment_id_hash: [1; 32],
            reason_hash: [2; 32],
            disputed_by: Pubkey::new_unique(),
            rent_payer: Pubkey::new_unique(),
            created_at: 9,
        };
        let mut data = Vec::new();
        r.try_serialize(&mut data).unwrap();
        assert_eq!(data.len(), 8 + DisputeRecord::INIT_SPACE);
        assert_eq!(DisputeRecord::rent_recipient(&data), Some(r.rent_payer));
        assert_eq!(DisputeRecord::rent_recipient(&data[..100]), None);
        assert_eq!(DisputeRecord::rent_recipient(&[0; 208]), None);
    }
}
