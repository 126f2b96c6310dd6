//! The `security.txt` every trust-gate program carries in its SBF build, so that whoever finds
//! a flaw in a deployed program can reach its publisher (read with `query-security-txt` or
//! any explorer). A team deploying its own build sets its own contacts here.

/// Expands to the program's `security.txt` for `$program` (its crate name). Only in a build
/// with an entrypoint: every program defines the same symbol, and the native builds link
/// several programs (as `no-entrypoint` libraries) into one binary.
#[macro_export]
macro_rules! security_txt {
    ($program:literal) => {
        #[cfg(not(feature = "no-entrypoint"))]
        $crate::solana_security_txt::security_txt! {
            name: concat!("trust-gate ", $program),
            project_url: "https://github.com/trust-gate/trust-gate",
            contacts: "link:https://github.com/trust-gate/trust-gate/security/advisories/new",
            policy: "https://github.com/trust-gate/trust-gate/blob/main/SECURITY.md",
            source_code: "https://github.com/trust-gate/trust-gate",
            source_release: concat!("v", env!("CARGO_PKG_VERSION"))
        }
    };
}
