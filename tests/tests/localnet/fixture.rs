//! A started localnet with the demo world seeded through the migrations.

use solana_rpc_client::nonblocking::rpc_client::RpcClient;
use trust_gate_client::{Builder, Network, ProgramIds};
use trust_gate_localnet::{Localnet, LocalnetConfig};
use trust_gate_migrations::DemoWorld;

pub struct Env {
    pub localnet: Localnet,
    pub rpc: RpcClient,
    pub b: Builder,
    pub world: DemoWorld,
}

/// A fresh localnet on a free loopback port with the demo world seeded.
pub async fn seeded() -> Env {
    let localnet = Localnet::start(LocalnetConfig::ephemeral()).await.unwrap();
    let (world, report) = trust_gate_migrations::seed_localnet(&localnet, &|_| {})
        .await
        .unwrap();
    assert!(!report.created.is_empty());
    let rpc = trust_gate_migrations::rpc(&localnet.rpc_url());
    let b = Builder::new(ProgramIds::for_network(Network::Localnet)).unwrap();
    Env {
        localnet,
        rpc,
        b,
        world,
    }
}
