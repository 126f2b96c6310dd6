//! The signer chain of write tools, first match wins:
//! 1. `KEYPAIR_B58` (base58 64-byte secret key),
//! 2. `KEYPAIR_PATH` (a JSON-array keypair file),
//! 3. the Solana CLI's default keypair file `~/.config/solana/id.json`, if present,
//! 4. `SOLANA_KEYPAIR_PATH` (alias `CHAIN_KEYPAIR_PATH`).
//!
//! Every source that is set is checked, even when an earlier one wins: a broken setting is
//! a mistake the operator should hear about at boot, not when it later becomes the winner.

use solana_sdk::signature::Keypair;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use trust_gate_client::env::{keypair_from_base58, keypair_from_file, ConfigError};

/// Where the signer came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SignerSource {
    KeypairB58,
    KeypairPath(PathBuf),
    CliDefault(PathBuf),
    SolanaKeypairPath(&'static str, PathBuf),
}

impl fmt::Display for SignerSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SignerSource::KeypairB58 => f.write_str("KEYPAIR_B58"),
            SignerSource::KeypairPath(p) => write!(f, "KEYPAIR_PATH ({})", p.display()),
            SignerSource::CliDefault(p) => {
                write!(f, "the Solana CLI default keypair ({})", p.display())
            }
            SignerSource::SolanaKeypairPath(v, p) => write!(f, "{v} ({})", p.display()),
        }
    }
}

/// The Solana CLI's default keypair file under `home`.
pub fn cli_default_path(home: &Path) -> PathBuf {
    home.join(".config").join("solana").join("id.json")
}

/// Resolves the chain through `get` (unset and blank variables are `None`).
pub fn resolve(
    get: &impl Fn(&str) -> Option<String>,
    home: Option<&Path>,
) -> Result<Option<(Arc<Keypair>, SignerSource)>, ConfigError> {
    let mut found: Vec<(Keypair, SignerSource)> = Vec::new();
    if let Some(v) = get("KEYPAIR_B58") {
        found.push((
            keypair_from_base58("KEYPAIR_B58", &v)?,
            SignerSource::KeypairB58,
        ));
    }
    if let Some(v) = get("KEYPAIR_PATH") {
        let path = PathBuf::from(v.trim());
        found.push((
            keypair_from_file("KEYPAIR_PATH", &path)?,
            SignerSource::KeypairPath(path),
        ));
    }
    if let Some(path) = home.map(cli_default_path).filter(|p| p.exists()) {
        // Not set by the operator, but present: a broken file is still worth a clear error.
        let kp = keypair_from_file("KEYPAIR_PATH", &path).map_err(|e| {
            ConfigError::new(
                "KEYPAIR_PATH",
                format!(
                    "the Solana CLI default keypair is unreadable ({}); fix it or set \
                     KEYPAIR_B58 / KEYPAIR_PATH",
                    e.reason
                ),
            )
        })?;
        found.push((kp, SignerSource::CliDefault(path)));
    }
    for var in ["SOLANA_KEYPAIR_PATH", "CHAIN_KEYPAIR_PATH"] {
        if let Some(v) = get(var) {
            let path = PathBuf::from(v.trim());
            found.push((
                keypair_from_file(var, &path)?,
                SignerSource::SolanaKeypairPath(var, path),
            ));
        }
    }
    Ok(found
        .into_iter()
        .next()
        .map(|(kp, source)| (Arc::new(kp), source)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use solana_sdk::signer::Signer;
    use std::collections::HashMap;

    fn write_keypair(dir: &Path, name: &str, kp: &Keypair) -> PathBuf {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let bytes: Vec<u8> = kp.to_bytes().to_vec();
        std::fs::write(&path, serde_json::to_string(&bytes).unwrap()).unwrap();
        path
    }

    fn env(pairs: &[(&str, String)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        move |k| m.get(k).cloned()
    }

    fn temp_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tg-signer-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn the_first_source_in_order_wins() {
        let dir = temp_dir("order");
        let (a, b, c, d) = (
            Keypair::new(),
            Keypair::new(),
            Keypair::new(),
            Keypair::new(),
        );
        let pb = write_keypair(&dir, "b.json", &b);
        write_keypair(&dir, ".config/solana/id.json", &c);
        let pd = write_keypair(&dir, "d.json", &d);
        let all = env(&[
            ("KEYPAIR_B58", a.to_base58_string()),
            ("KEYPAIR_PATH", pb.display().to_string()),
            ("SOLANA_KEYPAIR_PATH", pd.display().to_string()),
        ]);
        let (k, s) = resolve(&all, Some(&dir)).unwrap().unwrap();
        assert_eq!((k.pubkey(), s), (a.pubkey(), SignerSource::KeypairB58));

        let no_b58 = env(&[
            ("KEYPAIR_PATH", pb.display().to_string()),
            ("SOLANA_KEYPAIR_PATH", pd.display().to_string()),
        ]);
        assert_eq!(
            resolve(&no_b58, Some(&dir)).unwrap().unwrap().0.pubkey(),
            b.pubkey()
        );

        let only_d = env(&[("CHAIN_KEYPAIR_PATH", pd.display().to_string())]);
        let (k, s) = resolve(&only_d, Some(&dir)).unwrap().unwrap();
        assert_eq!(
            k.pubkey(),
            c.pubkey(),
            "the CLI default comes before step 4"
        );
        assert!(matches!(s, SignerSource::CliDefault(_)));

        let empty = temp_dir("empty");
        let (k, s) = resolve(&only_d, Some(&empty)).unwrap().unwrap();
        assert_eq!(k.pubkey(), d.pubkey());
        assert_eq!(s, SignerSource::SolanaKeypairPath("CHAIN_KEYPAIR_PATH", pd));
        assert!(resolve(&env(&[]), Some(&empty)).unwrap().is_none());
    }

    #[test]
    fn a_broken_source_fails_naming_it() {
        let dir = temp_dir("broken");
        let half = bs58::encode(Keypair::new().pubkey().to_bytes()).into_string();
        let e = resolve(&env(&[("KEYPAIR_B58", half)]), Some(&dir)).unwrap_err();
        assert_eq!(e.variable, "KEYPAIR_B58");
        assert!(e.reason.contains("got 32 bytes"), "{e}");

        let missing = dir.join("nope.json").display().to_string();
        let e = resolve(&env(&[("KEYPAIR_PATH", missing.clone())]), Some(&dir)).unwrap_err();
        assert_eq!(e.variable, "KEYPAIR_PATH");
        let e = resolve(
            &env(&[
                ("KEYPAIR_B58", Keypair::new().to_base58_string()),
                ("SOLANA_KEYPAIR_PATH", missing),
            ]),
            Some(&dir),
        )
        .unwrap_err();
        assert_eq!(
            e.variable, "SOLANA_KEYPAIR_PATH",
            "checked even when step 1 wins"
        );
    }
}
