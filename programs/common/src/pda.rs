//! Program-derived addresses at a fifth of the runtime's price.
//!
//! The runtime charges 1 500 compute units for `create_program_address` and as much again
//! for every bump `find_program_address` tries. The same address is one SHA-256 of
//! `seeds ‖ bump ‖ program id ‖ "ProgramDerivedAddress"` (the `sol_sha256` syscall: 85 units
//! and one per two bytes hashed) and a check that the hash is not a point of the ed25519
//! curve (`sol_curve_validate_point`: 159 units), about 330 units in all. [`create`] and
//! [`find`] compute what the runtime's functions compute, the same failures included:
//! natively they ARE the runtime's functions (the unit tests below hold the wrappers to
//! them); on SBF every program suite run on the SBF builds goes through the syscall path.

use anchor_lang::prelude::Pubkey;

/// The runtime's limits on seeds: at most 16 of them (the bump included), each at most 32
/// bytes.
pub const MAX_SEEDS: usize = 16;
pub const MAX_SEED_LEN: usize = 32;

/// The address of `seeds` and `bump` under `program`, as `Pubkey::create_program_address`
/// with the bump as the last seed; `None` where that fails (the hash is a curve point, or
/// the seeds break the limits).
pub fn create(seeds: &[&[u8]], bump: u8, program: &Pubkey) -> Option<Pubkey> {
    if seeds.len() >= MAX_SEEDS || seeds.iter().any(|s| s.len() > MAX_SEED_LEN) {
        return None;
    }
    imp::create(seeds, bump, program)
}

/// The canonical address and bump of `seeds` under `program`, as
/// `Pubkey::find_program_address`: the highest bump whose address is off the curve.
pub fn find(seeds: &[&[u8]], program: &Pubkey) -> Option<(Pubkey, u8)> {
    (0..=u8::MAX)
        .rev()
        .find_map(|bump| create(seeds, bump, program).map(|address| (address, bump)))
}

/// Whether `address` is the address of `seeds` and `bump` under `program`.
pub fn is(address: &Pubkey, seeds: &[&[u8]], bump: u8, program: &Pubkey) -> bool {
    create(seeds, bump, program).as_ref() == Some(address)
}

/// Whether `address` is the CANONICAL address of `seeds` under `program`: the only one a
/// program that creates its accounts with Anchor's `bump` (a search) ever uses. Checks at
/// most as many bumps as the search would.
pub fn is_canonical(address: &Pubkey, seeds: &[&[u8]], program: &Pubkey) -> bool {
    find(seeds, program).is_some_and(|(found, _)| found == *address)
}

#[cfg(target_os = "solana")]
mod imp {
    use anchor_lang::prelude::Pubkey;

    const PDA_MARKER: &[u8] = b"ProgramDerivedAddress";

    extern "C" {
        fn sol_sha256(vals: *const u8, val_len: u64, hash_result: *mut u8) -> u64;
        fn sol_curve_validate_point(curve_id: u64, point: *const u8, result: *mut u8) -> u64;
    }
    /// `sol_curve_validate_point`'s id of the edwards form of curve25519.
    const CURVE25519_EDWARDS: u64 = 0;

    pub fn create(seeds: &[&[u8]], bump: u8, program: &Pubkey) -> Option<Pubkey> {
        let bump = [bump];
        // The syscall hashes a list of byte slices: the seeds, the bump, the program id and
        // the marker, at most 16 + 3 of them.
        let mut parts: [&[u8]; super::MAX_SEEDS + 3] = [&[]; super::MAX_SEEDS + 3];
        let n = seeds.len();
        parts[..n].copy_from_slice(seeds);
        parts[n] = &bump;
        parts[n + 1] = program.as_ref();
        parts[n + 2] = PDA_MARKER;
        let mut hash = [0u8; 32];
        let mut on_curve = 0u8;
        // SAFETY: `parts[..n + 3]` is an array of slices (pointer and length), the layout
        // the syscall reads; `hash` has the 32 bytes it writes.
        let valid = unsafe {
            sol_sha256(
                parts.as_ptr() as *const u8,
                (n + 3) as u64,
                hash.as_mut_ptr(),
            );
            sol_curve_validate_point(CURVE25519_EDWARDS, hash.as_ptr(), &mut on_curve)
        };
        // 0: the bytes are a point of the curve, which no PDA may be.
        (valid != 0).then(|| Pubkey::new_from_array(hash))
    }
}

#[cfg(not(target_os = "solana"))]
mod imp {
    use anchor_lang::prelude::Pubkey;

    pub fn create(seeds: &[&[u8]], bump: u8, program: &Pubkey) -> Option<Pubkey> {
        let bump = [bump];
        let mut all = seeds.to_vec();
        all.push(&bump);
        Pubkey::create_program_address(&all, program).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_is_the_runtimes_search() {
        let program = Pubkey::new_unique();
        for i in 0..64u8 {
            let key = Pubkey::new_unique();
            let seeds: [&[u8]; 3] = [b"seed", key.as_ref(), &[i]];
            let (address, bump) = Pubkey::find_program_address(&seeds, &program);
            assert_eq!(find(&seeds, &program), Some((address, bump)));
            assert!(is(&address, &seeds, bump, &program));
            assert!(is_canonical(&address, &seeds, &program));
            // Another bump of the same seeds is another address, and never the canonical one.
            if let Some(other) = (0..bump).rev().find_map(|b| create(&seeds, b, &program)) {
                assert_ne!(other, address);
                assert!(!is_canonical(&other, &seeds, &program));
            }
        }
    }

    #[test]
    fn the_runtimes_seed_limits_hold() {
        let program = Pubkey::new_unique();
        let long = [7u8; MAX_SEED_LEN + 1];
        assert_eq!(create(&[&long], 255, &program), None);
        let many: Vec<&[u8]> = vec![b"s"; MAX_SEEDS];
        assert_eq!(create(&many, 255, &program), None);
        let most: Vec<&[u8]> = vec![b"s"; MAX_SEEDS - 1];
        let mut with_bump = most.clone();
        let bump = [255u8];
        with_bump.push(&bump);
        assert_eq!(
            create(&most, 255, &program),
            Pubkey::create_program_address(&with_bump, &program).ok()
        );
    }
}
