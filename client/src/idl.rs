//! IDL loaders: an explicit IDL wins, else the IDL account on chain (Anchor's
//! `anchor idl init` layout), else the IDL bundled with this crate; when none is available
//! the error says how to publish one or pass one.

use crate::error::ClientError;
use crate::ids::{Program, ProgramIds};
use anchor_lang::prelude::Pubkey;
use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;
use flate2::Compression;
use sha2::{Digest, Sha256};
use solana_rpc_client::nonblocking::rpc_client::RpcClient;
use std::io::{Read, Write};

const BUNDLED_POLICY_VAULT: &str = include_str!("../../idl/policy_vault.json");
const BUNDLED_GATE: &str = include_str!("../../idl/gate.json");
const BUNDLED_VALIDATION_REGISTRY: &str = include_str!("../../idl/validation_registry.json");

/// Where a loaded IDL came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdlSource {
    Explicit,
    Chain,
    Bundled,
}

/// The IDL generated from this workspace's programs.
pub fn bundled(program: Program) -> Result<serde_json::Value, ClientError> {
    let text = match program {
        Program::PolicyVault => BUNDLED_POLICY_VAULT,
        Program::Gate => BUNDLED_GATE,
        Program::ValidationRegistry => BUNDLED_VALIDATION_REGISTRY,
    };
    serde_json::from_str(text).map_err(|e| ClientError::Decode {
        what: format!("bundled IDL of {}", program.name()),
        reason: e.to_string(),
    })
}

/// The address of a program's IDL account: `create_with_seed(find_program_address([], id),
/// "anchor:idl", id)`, as the Anchor CLI derives it.
pub fn idl_address(program_id: &Pubkey) -> Pubkey {
    let base = Pubkey::find_program_address(&[], program_id).0;
    Pubkey::create_with_seed(&base, "anchor:idl", program_id).expect("seed is short")
}

fn idl_account_discriminator() -> [u8; 8] {
    let h = Sha256::digest(b"account:IdlAccount");
    h[..8].try_into().expect("8 bytes")
}

/// The bytes of an IDL account: discriminator, authority, u32 length, zlib(JSON).
pub fn encode_idl_account(authority: &Pubkey, idl: &serde_json::Value) -> Vec<u8> {
    let json = serde_json::to_vec(idl).expect("JSON values serialize");
    let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
    z.write_all(&json).expect("writing to memory");
    let compressed = z.finish().expect("writing to memory");
    let mut out = Vec::with_capacity(44 + compressed.len());
    out.extend_from_slice(&idl_account_discriminator());
    out.extend_from_slice(authority.as_ref());
    out.extend_from_slice(&(compressed.len() as u32).to_le_bytes());
    out.extend_from_slice(&compressed);
    out
}

/// Decodes an IDL account's bytes.
pub fn decode_idl_account(data: &[u8]) -> Result<serde_json::Value, ClientError> {
    let bad = |reason: String| ClientError::Decode {
        what: "IDL account".into(),
        reason,
    };
    if data.len() < 44 || data[..8] != idl_account_discriminator() {
        return Err(bad("not an Anchor IDL account".into()));
    }
    let len = u32::from_le_bytes(data[40..44].try_into().expect("4 bytes")) as usize;
    let compressed = data
        .get(44..44 + len)
        .ok_or_else(|| bad(format!("declares {len} bytes, holds {}", data.len() - 44)))?;
    let mut json = Vec::new();
    ZlibDecoder::new(compressed)
        .read_to_end(&mut json)
        .map_err(|e| bad(format!("zlib: {e}")))?;
    serde_json::from_slice(&json).map_err(|e| bad(format!("JSON: {e}")))
}

/// How to get an IDL when none can be found.
fn remediation(program: Program, id: &Pubkey) -> String {
    format!(
        "publish it with `anchor idl init --filepath idl/{name}.json {id}` on this cluster, \
         or pass the IDL explicitly (the `idl` argument)",
        name = program.name()
    )
}

/// Loads `program`'s IDL: `explicit` wins; else the on-chain IDL account; else, when
/// `allow_bundled`, the bundled IDL. Fails with the remediation when none is available.
pub async fn load(
    rpc: &RpcClient,
    ids: &ProgramIds,
    program: Program,
    explicit: Option<serde_json::Value>,
    allow_bundled: bool,
) -> Result<(serde_json::Value, IdlSource), ClientError> {
    if let Some(idl) = explicit {
        return Ok((idl, IdlSource::Explicit));
    }
    let id = ids.require(program)?;
    if let Some(acc) = crate::chain::account(rpc, &idl_address(&id)).await? {
        if acc.owner == id {
            return Ok((decode_idl_account(&acc.data)?, IdlSource::Chain));
        }
    }
    if allow_bundled {
        return Ok((bundled(program)?, IdlSource::Bundled));
    }
    Err(ClientError::IdlMissing {
        program: program.name().into(),
        remediation: remediation(program, &id),
    })
}

/// The validation registry's program id for an RPC endpoint: an explicit id wins; the
/// devnet default applies only to devnet and local endpoints (URLs containing `devnet`,
/// `127.0.0.1` or `localhost`); anything else fails with the remediation.
pub fn validation_registry_id(
    rpc_url: &str,
    explicit: Option<Pubkey>,
) -> Result<Pubkey, ClientError> {
    if let Some(id) = explicit {
        return Ok(id);
    }
    let url = rpc_url.to_ascii_lowercase();
    if ["devnet", "127.0.0.1", "localhost"]
        .iter()
        .any(|h| url.contains(h))
    {
        return Ok(validation_registry::ID);
    }
    Err(ClientError::Config(format!(
        "no validation_registry program id for {rpc_url}: the default id is deployed on devnet \
         only; set VALIDATION_REGISTRY_PROGRAM_ID (or pass the program id) for your deployment"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idl_accounts_round_trip() {
        let idl = bundled(Program::Gate).unwrap();
        let bytes = encode_idl_account(&Pubkey::new_unique(), &idl);
        assert_eq!(decode_idl_account(&bytes).unwrap(), idl);
        assert!(decode_idl_account(&bytes[..20]).is_err());
    }

    #[test]
    fn bundled_idls_name_their_programs() {
        for p in Program::ALL {
            let idl = bundled(p).unwrap();
            assert_eq!(idl["metadata"]["name"], p.name());
        }
        assert_eq!(
            bundled(Program::Gate).unwrap()["address"],
            gate::ID.to_string()
        );
    }

    #[test]
    fn the_registry_default_applies_only_to_devnet_and_local_urls() {
        for url in [
            "https://api.devnet.solana.com",
            "http://127.0.0.1:8899",
            "http://localhost:8899",
        ] {
            assert_eq!(
                validation_registry_id(url, None).unwrap(),
                validation_registry::ID
            );
        }
        let err = validation_registry_id("https://api.mainnet-beta.solana.com", None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("VALIDATION_REGISTRY_PROGRAM_ID"), "{err}");
        let mine = Pubkey::new_unique();
        assert_eq!(
            validation_registry_id("https://rpc.example", Some(mine)).unwrap(),
            mine
        );
    }
}
