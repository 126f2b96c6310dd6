//! Comparing 32-byte keys held in account data. On SBF a slice comparison calls `memcmp`;
//! comparing the first eight bytes as one word first settles nearly every comparison of
//! distinct keys without the call (a list lookup or a slot scan compares a key with up to
//! 16 others).

use core::cmp::Ordering;

/// The first eight bytes of a key as a big-endian word (ordered as the bytes are).
fn head(k: &[u8; 32]) -> u64 {
    u64::from_be_bytes([k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7]])
}

/// `a == b`.
pub fn eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    head(a) == head(b) && a == b
}

/// `a.cmp(b)`, bytewise.
pub fn cmp(a: &[u8; 32], b: &[u8; 32]) -> Ordering {
    match head(a).cmp(&head(b)) {
        Ordering::Equal => a.cmp(b),
        other => other,
    }
}

/// Whether `k` is all zero (the default key, an empty slot).
pub fn is_zero(k: &[u8; 32]) -> bool {
    head(k) == 0 && *k == [0u8; 32]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn they_agree_with_the_slice_comparisons() {
        let mut keys: Vec<[u8; 32]> = vec![[0; 32], [255; 32]];
        for i in 0..32 {
            let mut k = [7u8; 32];
            k[i] = 8;
            keys.push(k);
            k[i] = 6;
            keys.push(k);
        }
        for a in &keys {
            for b in &keys {
                assert_eq!(eq(a, b), a == b);
                assert_eq!(cmp(a, b), a.cmp(b));
            }
            assert_eq!(is_zero(a), *a == [0; 32]);
        }
    }
}
