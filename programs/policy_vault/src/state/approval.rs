//! A payment approval: the authority's members say yes, on chain, to one payment above a
//! policy's `approval_threshold` (see `approve_payment`). Its address is the payment's
//! terms, so a settlement finds it without being told: `["approval", payer_asset,
//! payee_asset, mint, amount u64 LE, policy_id u32 LE]`. A settlement (or a gated channel
//! open) of exactly those terms passes once against it and closes it to its rent payer.
//!
//! It is the members' of one authority: it records the payer's authority generation (the
//! kill switch's count of hand-overs) it was given in, and a hand-over voids it (the payment
//! then needs the new members' approval).

use super::fixed::{Fields, FixedLayout};
use super::seeds;
use anchor_lang::prelude::*;

/// The longest an approval may stand: a week.
pub const MAX_APPROVAL_SECS: i64 = 7 * 24 * 3600;

/// Offsets: 8 payer_asset, 40 payee_asset, 72 mint, 104 amount, 112 policy_id, 116
/// expires_at, 124 approved_at, 132 rent_payer, 164 signers, 165 bump, 166
/// authority_generation (u32 LE).
#[account]
#[derive(InitSpace, Debug, PartialEq, Eq)]
pub struct PaymentApproval {
    pub payer_asset: Pubkey,
    pub payee_asset: Pubkey,
    pub mint: Pubkey,
    /// The payment's amount, exactly (a channel's deposit for a gated open).
    pub amount: u64,
    pub policy_id: u32,
    /// Unix seconds: no payment passes against it after this second.
    pub expires_at: i64,
    pub approved_at: i64,
    /// The member who sent it: its rent goes back there when a payment consumes it or when
    /// it is closed unused.
    pub rent_payer: Pubkey,
    /// The distinct members who signed it.
    pub signers: u8,
    pub bump: u8,
    /// The payer's [`super::KillSwitchState::authority_generation`] when it was given: it
    /// approves nothing after a hand-over.
    pub authority_generation: u32,
}

/// What an approval binds: a payment's terms.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApprovalTerms {
    pub payer_asset: Pubkey,
    pub payee_asset: Pubkey,
    pub mint: Pubkey,
    pub amount: u64,
    pub policy_id: u32,
}

impl ApprovalTerms {
    /// The address's seeds without the bump.
    pub fn seeds(&self) -> [Vec<u8>; 6] {
        [
            seeds::APPROVAL.to_vec(),
            self.payer_asset.to_bytes().to_vec(),
            self.payee_asset.to_bytes().to_vec(),
            self.mint.to_bytes().to_vec(),
            self.amount.to_le_bytes().to_vec(),
            self.policy_id.to_le_bytes().to_vec(),
        ]
    }

    /// The approval account's address and bump.
    pub fn address(&self) -> (Pubkey, u8) {
        let seeds = self.seeds();
        let refs: Vec<&[u8]> = seeds.iter().map(Vec::as_slice).collect();
        Pubkey::find_program_address(&refs, &crate::ID)
    }
}

impl PaymentApproval {
    pub fn terms(&self) -> ApprovalTerms {
        ApprovalTerms {
            payer_asset: self.payer_asset,
            payee_asset: self.payee_asset,
            mint: self.mint,
            amount: self.amount,
            policy_id: self.policy_id,
        }
    }

    /// Whether it approves a payment of `terms` at unix time `now` (when it counts at all:
    /// [`Self::given_in`]). policy_vault creates an approval only at the address of the
    /// terms it stores, so the stored terms stand for the address (as a policy's asset and
    /// id do).
    pub fn approves(&self, terms: &ApprovalTerms, now: i64) -> bool {
        self.terms() == *terms && now <= self.expires_at
    }

    /// Whether the approval in `data` (a PaymentApproval account's, discriminator checked by
    /// the caller) was given in `authority_generation`, the payer's kill switch's now: an
    /// approval given before a hand-over approves nothing. Read in place, alone, so that the
    /// check costs a settlement without an approval nothing.
    pub fn given_in(data: &[u8], authority_generation: u32) -> bool {
        data.get(GENERATION_AT..GENERATION_AT + 4)
            .is_some_and(|g| g == authority_generation.to_le_bytes())
    }
}

/// Where an approval account keeps its `authority_generation`.
const GENERATION_AT: usize = 8 + PaymentApproval::FIELDS_LEN - 4;

impl PaymentApproval {
    /// Whether `info` holds an approval: an account policy_vault owns that starts with this
    /// discriminator. Its terms are read only where the payment needs them.
    pub fn is_in(info: &AccountInfo) -> bool {
        info.owner == &crate::ID
            && info
                .try_borrow_data()
                .is_ok_and(|d| d.starts_with(Self::DISCRIMINATOR))
    }
}

impl FixedLayout for PaymentApproval {
    const FIELDS_LEN: usize = 162;

    fn read_fields(data: &[u8]) -> Option<PaymentApproval> {
        let f = &mut Fields::new(data, Self::FIELDS_LEN)?;
        Some(PaymentApproval {
            payer_asset: f.key(),
            payee_asset: f.key(),
            mint: f.key(),
            amount: f.u64(),
            policy_id: f.u32(),
            expires_at: f.i64(),
            approved_at: f.i64(),
            rent_payer: f.key(),
            signers: f.u8(),
            bump: f.u8(),
            authority_generation: f.u32(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anchor_lang::{AccountSerialize, Discriminator};

    #[test]
    fn the_layout_read_in_place_is_borshs() {
        let a = PaymentApproval {
            payer_asset: Pubkey::new_unique(),
            payee_asset: Pubkey::new_unique(),
            mint: Pubkey::new_unique(),
            amount: 7_000_000,
            policy_id: 3,
            expires_at: 1_800_000_000,
            approved_at: 1_799_000_000,
            rent_payer: Pubkey::new_unique(),
            signers: 2,
            bump: 254,
            authority_generation: 3,
        };
        let mut data = Vec::new();
        a.try_serialize(&mut data).unwrap();
        assert_eq!(data.len(), 8 + PaymentApproval::INIT_SPACE);
        assert_eq!(data.len(), 8 + PaymentApproval::FIELDS_LEN);
        assert!(data.starts_with(PaymentApproval::DISCRIMINATOR));
        assert_eq!(PaymentApproval::read_fields(&data[8..]), Some(a));
    }

    #[test]
    fn it_approves_exactly_its_terms_until_it_expires() {
        use anchor_lang::AccountSerialize;
        let terms = ApprovalTerms {
            payer_asset: Pubkey::new_unique(),
            payee_asset: Pubkey::new_unique(),
            mint: Pubkey::new_unique(),
            amount: 60,
            policy_id: 2,
        };
        let a = PaymentApproval {
            payer_asset: terms.payer_asset,
            payee_asset: terms.payee_asset,
            mint: terms.mint,
            amount: terms.amount,
            policy_id: terms.policy_id,
            expires_at: 100,
            approved_at: 10,
            rent_payer: Pubkey::new_unique(),
            signers: 1,
            bump: 255,
            authority_generation: 2,
        };
        assert!(a.approves(&terms, 100));
        assert!(!a.approves(&terms, 101));
        // Given before a hand-over (or in another authority's generation): nothing.
        let mut data = Vec::new();
        a.try_serialize(&mut data).unwrap();
        assert!(PaymentApproval::given_in(&data, 2));
        assert!(!PaymentApproval::given_in(&data, 3));
        assert!(!PaymentApproval::given_in(&data, 1));
        assert!(!PaymentApproval::given_in(&data[..data.len() - 1], 2));
        let others = [
            ApprovalTerms {
                payee_asset: Pubkey::new_unique(),
                ..terms
            },
            ApprovalTerms {
                mint: Pubkey::new_unique(),
                ..terms
            },
            ApprovalTerms {
                amount: 61,
                ..terms
            },
            ApprovalTerms {
                policy_id: 3,
                ..terms
            },
            ApprovalTerms {
                payer_asset: Pubkey::new_unique(),
                ..terms
            },
        ];
        for other in others {
            assert!(!a.approves(&other, 50), "{other:?}");
            assert_ne!(other.address().0, terms.address().0);
        }
    }
}
