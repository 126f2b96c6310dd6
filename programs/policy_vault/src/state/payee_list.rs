//! A policy's editable payee list: an account the policy names, whose entries the
//! authority's threshold adds and removes (`edit_payee_list`); its meaning (allow or deny)
//! is the policy's, immutable.

use anchor_lang::prelude::*;
use anchor_lang::Discriminator;
use trust_gate_program_common::keys;

/// At most this many entries: a binary search over them costs 9 comparisons, and growing the
/// account to this size fits the 10 KiB one instruction may add to an account.
pub const MAX_PAYEE_LIST_ENTRIES: usize = 256;

/// The payee agents (assets) of a policy's list, sorted and distinct.
///
/// Offsets: 8 asset, 40 policy_id (u32 LE), 44 bump, 45 entry count (u32 LE), 49.. the
/// entries, 32 bytes each.
#[account]
#[derive(Debug)]
pub struct PayeeList {
    pub asset: Pubkey,
    pub policy_id: u32,
    pub bump: u8,
    pub payees: Vec<Pubkey>,
}

pub const ENTRIES_AT: usize = 49;

impl PayeeList {
    /// The account's length with `entries` entries.
    pub fn space(entries: usize) -> usize {
        ENTRIES_AT + 32 * entries
    }

    /// Whether `data` (an account policy_vault owns) is this list of `asset`'s policy
    /// `policy_id`, and if so whether `payee` is on it: a binary search in place, without
    /// reading the entries into memory. `None` when `data` is not that list.
    pub fn contains_in(
        data: &[u8],
        asset: &Pubkey,
        policy_id: u32,
        payee: &Pubkey,
    ) -> Option<bool> {
        if !data.starts_with(Self::DISCRIMINATOR)
            || data.get(8..40)? != asset.as_ref()
            || data.get(40..44)? != policy_id.to_le_bytes()
        {
            return None;
        }
        let count = u32::from_le_bytes(data.get(45..49)?.try_into().ok()?) as usize;
        let entries = data.get(ENTRIES_AT..ENTRIES_AT.checked_add(count.checked_mul(32)?)?)?;
        let (entries, _) = entries.as_chunks::<32>();
        let key = payee.as_array();
        let (mut lo, mut hi) = (0usize, entries.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match keys::cmp(&entries[mid], key) {
                core::cmp::Ordering::Equal => return Some(true),
                core::cmp::Ordering::Less => lo = mid + 1,
                core::cmp::Ordering::Greater => hi = mid,
            }
        }
        Some(false)
    }

    /// Applies an edit: removes `remove`, adds `add`, keeps the entries sorted and distinct.
    /// Adding a listed payee or removing an unlisted one changes nothing. Returns how many
    /// entries were (added, removed).
    pub fn edit(&mut self, add: &[Pubkey], remove: &[Pubkey]) -> (usize, usize) {
        let before = self.payees.len();
        self.payees.retain(|k| !remove.contains(k));
        let removed = before - self.payees.len();
        let mut added = 0;
        for k in add {
            if let Err(at) = self.payees.binary_search(k) {
                self.payees.insert(at, *k);
                added += 1;
            }
        }
        (added, removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anchor_lang::AccountSerialize;

    fn data(list: &PayeeList) -> Vec<u8> {
        let mut out = Vec::new();
        list.try_serialize(&mut out).unwrap();
        out
    }

    #[test]
    fn edits_keep_entries_sorted_and_lookups_find_them_in_place() {
        let asset = Pubkey::new_unique();
        let mut list = PayeeList {
            asset,
            policy_id: 4,
            bump: 255,
            payees: vec![],
        };
        let keys: Vec<Pubkey> = (0..40).map(|_| Pubkey::new_unique()).collect();
        assert_eq!(list.edit(&keys, &[]), (40, 0));
        assert_eq!(list.edit(&keys[..3], &keys[30..]), (0, 10));
        assert_eq!(list.payees.len(), 30);
        assert!(list.payees.windows(2).all(|w| w[0] < w[1]));
        let bytes = data(&list);
        assert_eq!(bytes.len(), PayeeList::space(30));
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(
                PayeeList::contains_in(&bytes, &asset, 4, k),
                Some(i < 30),
                "{i}"
            );
        }
        // Another policy's or asset's list is not this one.
        assert_eq!(PayeeList::contains_in(&bytes, &asset, 5, &keys[0]), None);
        assert_eq!(PayeeList::contains_in(&bytes, &keys[0], 4, &keys[0]), None);
        // Truncated data is not a list.
        assert_eq!(
            PayeeList::contains_in(&bytes[..bytes.len() - 1], &asset, 4, &keys[0]),
            None
        );
        // Empty.
        list.edit(&[], &keys);
        assert_eq!(
            PayeeList::contains_in(&data(&list), &asset, 4, &keys[0]),
            Some(false)
        );
    }
}
