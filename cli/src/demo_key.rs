//! `trust-gate demo-key <label>`: a demo key as a keypair file's JSON array (the 64 bytes of
//! secret and public key), so that any client (a TypeScript agent, the Solana CLI) can sign
//! as a demo agent on the localnet. Only demo labels are accepted: every demo key is derived
//! from its label, so it is public knowledge and worth nothing off the localnet.

use clap::Args;
use trust_gate_migrations::DemoWorld;

#[derive(Args)]
pub struct DemoKeyArgs {
    /// A demo label as `trust-gate up` prints it: `payer-tier-3` (the tier-3 agent's owner),
    /// `payer-tier-3-vault/hot-key`, `service-key`, `facilitator`, ...
    label: String,
}

/// The JSON array of `label`'s keypair, or an error listing the demo labels.
pub fn keypair_json(label: &str) -> Result<String, String> {
    let world = DemoWorld::new();
    match world.key(label) {
        Some(k) => Ok(serde_json::to_string(&k.to_bytes().to_vec()).expect("bytes serialize")),
        None => Err(format!(
            "{label:?} is not a demo label; demo labels: {}",
            world
                .keys()
                .iter()
                .map(|(l, _)| l.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

pub fn run(a: DemoKeyArgs) -> Result<(), String> {
    println!("{}", keypair_json(&a.label)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use solana_sdk::signature::{Keypair, Signer};

    #[test]
    fn a_demo_label_prints_its_keypair_and_anything_else_is_refused() {
        let json = keypair_json("payer-tier-3").unwrap();
        let bytes: Vec<u8> = serde_json::from_str(&json).unwrap();
        let k = Keypair::try_from(bytes.as_slice()).unwrap();
        let world = DemoWorld::new();
        assert_eq!(k.pubkey(), world.payer(3).unwrap().owner.pubkey());
        let hot: Vec<u8> =
            serde_json::from_str(&keypair_json("payer-tier-3-vault/hot-key").unwrap()).unwrap();
        assert_eq!(
            Keypair::try_from(hot.as_slice()).unwrap().pubkey(),
            world.vault_payer().signer().pubkey()
        );
        for bad in ["", "payer-tier-2", "wallet", "PAYER-TIER-3"] {
            let err = keypair_json(bad).unwrap_err();
            assert!(err.contains("is not a demo label"), "{err}");
            assert!(err.contains("payer-tier-3"), "{err}");
        }
    }
}
