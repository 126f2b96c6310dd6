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
use trust_gate_client::{Builder, ClientError, Network, ProgramIds};
use trust_gate_localnet::Localnet;

/// An RPC client for `url` at `confirmed` commitment.
pub fn rpc(url: &str) -> RpcClient {
    RpcClient::new_with_commitment(url.to_string(), CommitmentConfig::confirmed())
}

/// Seeds the demo world into a running localnet over its JSON-RPC (the same path as any
/// cluster), with tiers set through the stand-in's admin instruction.
pub async fn seed_localnet(
    localnet: &Localnet,
    log: &(dyn Fn(&str) + Send + Sync),
) -> Result<(DemoWorld, Report), ClientError> {
    let rpc = rpc(&localnet.rpc_url());
    let builder = Builder::new(ProgramIds::for_network(Network::Localnet))?;
    let migration = Migration {
        rpc: &rpc,
        builder,
        funder: localnet.faucet(),
        engine_admin: Some(&localnet.engine_authority),
        log,
    };
    let world = DemoWorld::new();
    let report = migration.demo_world(&world).await?;
    Ok((world, report))
}
