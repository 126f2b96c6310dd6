//! Idempotent set-up of a cluster for trust-gate: capability namespaces, the demo attestor,
//! the demo stablecoin, the facilitator's GateAuthority, and the demo agents with their
//! authorities, policies, acceptance policy, tiers (localnet only) and token balances.
//!
//! Every step reads the chain first and acts only on what is missing, so running the
//! migrations twice, or against a cluster where part of the world exists, is safe.

pub mod demo;
pub mod payers;
pub mod steps;

pub use demo::DemoWorld;
pub use steps::{Migration, Report};

use solana_commitment_config::CommitmentConfig;
use solana_rpc_client::nonblocking::rpc_client::RpcClient;
use solana_sdk::signature::Keypair;
use trust_gate_client::{Builder, ClientError, Network, ProgramIds};

/// An RPC client for `url` at `confirmed` commitment.
pub fn rpc(url: &str) -> RpcClient {
    RpcClient::new_with_commitment(url.to_string(), CommitmentConfig::confirmed())
}

/// What seeding a localnet takes of it: its JSON-RPC, its funded key and the stand-in
/// engine's admin (a running `trust_gate_localnet::Localnet` has all three: `rpc_url()`,
/// `faucet()`, `engine_authority`). Nothing here links the localnet itself.
pub struct LocalnetKeys<'a> {
    pub rpc_url: String,
    pub faucet: &'a Keypair,
    pub engine_admin: &'a Keypair,
}

impl LocalnetKeys<'_> {
    pub(crate) fn migration<'m>(
        &'m self,
        rpc: &'m RpcClient,
        log: &'m (dyn Fn(&str) + Send + Sync),
    ) -> Result<Migration<'m>, ClientError> {
        Ok(Migration {
            rpc,
            builder: Builder::new(ProgramIds::for_network(Network::Localnet))?,
            funder: self.faucet,
            engine_admin: Some(self.engine_admin),
            log,
        })
    }
}

/// Seeds the demo world into a running localnet over its JSON-RPC (the same path as any
/// cluster), with tiers set through the stand-in's admin instruction.
pub async fn seed_localnet(
    localnet: &LocalnetKeys<'_>,
    log: &(dyn Fn(&str) + Send + Sync),
) -> Result<(DemoWorld, Report), ClientError> {
    let rpc = rpc(&localnet.rpc_url);
    let migration = localnet.migration(&rpc, log)?;
    let world = DemoWorld::new();
    let report = migration.demo_world(&world).await?;
    Ok((world, report))
}
