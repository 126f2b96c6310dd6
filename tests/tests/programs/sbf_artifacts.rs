//! What the SBF builds carry besides code: each program's `security.txt`, readable by the
//! parser explorers use. Natively there is no binary to read; the check needs `SBF_OUT_DIR`.

use trust_gate_localnet::native::{sbf_file, SBF_PROGRAMS};
use trust_gate_localnet::Programs;

#[test]
fn every_sbf_build_carries_its_security_txt() {
    let Programs::Sbf(dir) = Programs::from_env() else {
        eprintln!("native programs: no SBF build to read (set SBF_OUT_DIR to check)");
        return;
    };
    for name in SBF_PROGRAMS {
        let bytes = std::fs::read(sbf_file(&dir, name)).unwrap();
        let txt = solana_security_txt::find_and_parse(&bytes)
            .unwrap_or_else(|e| panic!("{name}.so: no readable security.txt: {e}"));
        assert_eq!(txt.name, format!("trust-gate {name}"));
        assert!(
            !txt.contacts.is_empty() && !txt.policy.is_empty(),
            "{name}.so: security.txt without contacts or policy"
        );
        assert_eq!(
            txt.source_release.as_deref(),
            Some(concat!("v", env!("CARGO_PKG_VERSION")))
        );
    }
}
