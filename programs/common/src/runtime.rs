//! Return data, logs and events that work natively as well as on SBF.
//!
//! Natively (not `target_os = "solana"`) the solana-cpi helpers drop return data, `msg!`
//! prints to the process's stdout and Anchor's `emit!` discards the event. Programs route all
//! three through this module so that simulations and transaction metadata carry them in both
//! worlds. Natively the host's syscall stubs (installed by solana-program-test) receive them.

use anchor_lang::prelude::Pubkey;

/// Sets the instruction's return data (what `simulateTransaction` reports as `returnData`).
pub fn set_return_data(data: &[u8]) {
    #[cfg(target_os = "solana")]
    anchor_lang::solana_program::program::set_return_data(data);
    #[cfg(not(target_os = "solana"))]
    anchor_lang::compat::solana_sysvar::program_stubs::sol_set_return_data(data);
}

/// Reads the return data left by the last CPI.
pub fn get_return_data() -> Option<(Pubkey, Vec<u8>)> {
    #[cfg(target_os = "solana")]
    return anchor_lang::solana_program::program::get_return_data();
    #[cfg(not(target_os = "solana"))]
    anchor_lang::compat::solana_sysvar::program_stubs::sol_get_return_data()
}

/// Writes a line to the transaction log ("Program log: ...").
pub fn log(message: &str) {
    #[cfg(target_os = "solana")]
    anchor_lang::solana_program::log::sol_log(message);
    #[cfg(not(target_os = "solana"))]
    anchor_lang::compat::solana_sysvar::program_stubs::sol_log(message);
}

/// Writes binary data to the log, as `sol_log_data` does ("Program data: <base64> ...").
/// Natively the line passes through the log stub, which prefixes it with "Program log: ";
/// consumers strip that prefix (the localnet's RPC layer does).
pub fn log_data(data: &[&[u8]]) {
    #[cfg(target_os = "solana")]
    anchor_lang::solana_program::log::sol_log_data(data);
    #[cfg(not(target_os = "solana"))]
    {
        use base64::Engine as _;
        let parts: Vec<String> = data
            .iter()
            .map(|d| base64::engine::general_purpose::STANDARD.encode(d))
            .collect();
        anchor_lang::compat::solana_sysvar::program_stubs::sol_log(&format!(
            "Program data: {}",
            parts.join(" ")
        ));
    }
}

/// Emits an Anchor event (discriminator + Borsh body) in the standard `Program data:` form,
/// decodable by Anchor's event parsers.
pub fn emit<E: anchor_lang::Event>(event: &E) {
    log_data(&[&event.data()]);
}

/// A compute-unit probe: logs `cu: <label>`, then the units left (`Program consumption: <n>
/// units remaining`). Only under the calling program's `cu-profile` feature, which the
/// measured builds leave off (each probe costs about 200 units); `bench-cu` on a build with
/// it (`SBF_PROFILE=1 tools/sbf/build`) turns consecutive probes into the cost of each phase
/// between them. Natively there is no meter and a probe does nothing.
#[macro_export]
macro_rules! probe {
    ($label:literal) => {
        #[cfg(all(feature = "cu-profile", target_os = "solana"))]
        $crate::runtime::probe(concat!("cu: ", $label));
    };
}

/// What [`probe!`] runs: the label, then the units left.
#[cfg(target_os = "solana")]
pub fn probe(label: &str) {
    anchor_lang::solana_program::log::sol_log(label);
    // SAFETY: a syscall without arguments.
    unsafe { anchor_lang::compat::solana_define_syscall::definitions::sol_log_compute_units_() };
}
