//! Cross-program invocations that pass account infos by reference.
//!
//! The runtime wants the callee's account infos as one contiguous `[AccountInfo]`. Built by
//! cloning, every `AccountInfo` costs two reference-count increments and, when the array is
//! dropped, two decrements: about 70 compute units an account, some 1 000 for the gate's
//! evaluation call. [`invoke_signed`] lays out bitwise copies instead, which share the
//! originals' cells and are never dropped, so no count moves.

use anchor_lang::prelude::*;
use anchor_lang::solana_program::instruction::Instruction;
use anchor_lang::solana_program::program::invoke_signed_unchecked;
use std::mem::ManuallyDrop;

/// Invokes `ix` with `infos` (every account the callee needs, its program's among them),
/// signed with `signers`, without `invoke_signed`'s check that no account's data is
/// borrowed. That check is the caller's to keep: no borrow of these accounts' data or
/// lamports may be held across the call, as the runtime writes them through the same cells
/// (on SBF a borrow held would alias the runtime's writes; natively the test runtime's stub
/// panics on it). Natively `invoke_signed_unchecked` is solana-invoke's, which hands the call
/// to the test runtime (solana-cpi's own would do nothing there).
pub fn invoke_signed(
    ix: &Instruction,
    infos: &[&AccountInfo],
    signers: &[&[&[u8]]],
) -> std::result::Result<(), ProgramError> {
    let copies: Vec<ManuallyDrop<AccountInfo>> = infos
        .iter()
        // SAFETY: a bitwise copy shares the original's `Rc` cells without counting itself;
        // wrapped in `ManuallyDrop` it is never dropped, so the counts stay the originals'.
        // The originals outlive the call (`infos` borrows them).
        .map(|info| ManuallyDrop::new(unsafe { std::ptr::read(*info) }))
        .collect();
    // SAFETY: `ManuallyDrop<T>` has `T`'s layout, so the buffer is a `[AccountInfo]`.
    let copies_as_infos: &[AccountInfo] =
        unsafe { std::slice::from_raw_parts(copies.as_ptr().cast(), copies.len()) };
    invoke_signed_unchecked(ix, copies_as_infos, signers)
}
