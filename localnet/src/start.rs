// program-test 3.1 flags its whole API as "to become unstable in 4.0"; we pin =3.1.12.
#![allow(deprecated)]

//! Starting the whole localnet: bank, stand-in initialization, IDL accounts, slot timer,
//! JSON-RPC server.

use crate::chain::Chain;
use crate::externals::{admin, ExternalPrograms};
use crate::native::Programs;
use crate::standin::client as standin;
use anchor_lang::prelude::Pubkey;
use solana_sdk::account::Account;
use solana_sdk::signature::{Keypair, Signer};
use solana_sdk::transaction::Transaction;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::task::JoinHandle;
use trust_gate_client::{idl, Program, ProgramIds};

/// The default RPC address, as a local validator's.
pub const DEFAULT_RPC_ADDR: &str = "127.0.0.1:8899";

pub use trust_gate_client::network::deterministic_keypair;

pub struct LocalnetConfig {
    /// Where JSON-RPC listens (port 0 picks a free port).
    pub rpc_addr: SocketAddr,
    /// Run the wall-clock slot timer (tests may turn it off and drive time themselves).
    pub clock: bool,
    /// Native programs or the SBF builds (default: what `SBF_OUT_DIR` says).
    pub programs: Programs,
    /// The real registry, engine and MPL Core instead of the stand-in (`trust-gate up
    /// --external-programs DIR`).
    pub externals: Option<ExternalPrograms>,
}

impl Default for LocalnetConfig {
    fn default() -> Self {
        LocalnetConfig {
            rpc_addr: DEFAULT_RPC_ADDR.parse().expect("valid address"),
            clock: true,
            programs: Programs::from_env(),
            externals: None,
        }
    }
}

impl LocalnetConfig {
    /// Loopback, a free port, the clock running: what tests want.
    pub fn ephemeral() -> Self {
        LocalnetConfig {
            rpc_addr: "127.0.0.1:0".parse().expect("valid address"),
            clock: true,
            programs: Programs::from_env(),
            externals: None,
        }
    }
}

/// A running localnet. Dropping it stops the RPC server and the clock.
pub struct Localnet {
    pub chain: Arc<Chain>,
    pub rpc_addr: SocketAddr,
    /// The registry's base collection (the stand-in's RootConfig points at it).
    pub collection: Pubkey,
    /// The stand-in engine's admin (signs `set_stats`), or with the real programs their
    /// upgrade authority and the engine's config authority.
    pub engine_authority: Keypair,
    /// Where the programs it runs came from.
    pub programs: Programs,
    /// The real registry, engine and MPL Core it runs instead of the stand-in, if any.
    pub externals: Option<ExternalPrograms>,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for Localnet {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl Localnet {
    pub async fn start(config: LocalnetConfig) -> Result<Localnet, String> {
        let collection = deterministic_keypair("registry-collection");
        let engine_authority = deterministic_keypair("engine-authority");
        let upgrade_authority = engine_authority.pubkey();
        let real = config.externals.as_ref().map(|e| (e, &upgrade_authority));
        let ctx = crate::native::localnet_program_test(&config.programs, real)
            .start_with_context()
            .await;
        let ids = ProgramIds::for_network(trust_gate_client::Network::Localnet);
        let genesis: Vec<Pubkey> = vec![
            ids.policy_vault,
            ids.gate,
            ids.validation_registry,
            ids.agent_registry,
            ids.reputation_engine,
        ];
        let chain = Chain::new(ctx, genesis);
        match &config.externals {
            Some(_) => init_real(&chain, &collection, &engine_authority).await?,
            None => init_standin(&chain, &collection, &engine_authority).await?,
        }
        publish_idls(&chain, &ids).await?;

        let mut tasks = Vec::new();
        if config.clock {
            chain.tick().await?;
            tasks.push(chain.spawn_clock());
        }
        let (rpc_addr, server) = crate::rpc::serve(chain.clone(), config.rpc_addr)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", config.rpc_addr))?;
        tasks.push(server);
        Ok(Localnet {
            chain,
            rpc_addr,
            collection: collection.pubkey(),
            engine_authority,
            programs: config.programs,
            externals: config.externals,
            tasks,
        })
    }

    pub fn rpc_url(&self) -> String {
        format!("http://{}", self.rpc_addr)
    }

    /// The funded genesis key (pays airdrops and set-up).
    pub fn faucet(&self) -> &Keypair {
        self.chain.faucet()
    }

    /// Test-only: moves the clock `seconds` ahead (and the slot with it).
    pub async fn warp(&self, seconds: u64) -> Result<(), String> {
        self.chain.warp(seconds).await
    }
}

/// Creates the stand-in registry's RootConfig/collection and the engine's config.
async fn init_standin(
    chain: &Chain,
    collection: &Keypair,
    engine_authority: &Keypair,
) -> Result<(), String> {
    let faucet = chain.faucet();
    let payer = faucet.pubkey();
    let blockhash = chain.latest_blockhash();
    let tx = Transaction::new_signed_with_payer(
        &[
            standin::initialize_registry(&payer, &collection.pubkey()),
            standin::initialize_engine(&payer, &engine_authority.pubkey()),
        ],
        Some(&payer),
        &[faucet, collection],
        blockhash,
    );
    chain
        .submit(tx.into())
        .await
        .map_err(|e| format!("initializing the registry stand-in: {e}"))?;
    Ok(())
}

/// Initializes the real registry (RootConfig, RegistryConfig and the base collection through
/// MPL Core) and engine (AtomConfig) with their own instructions, signed by their upgrade
/// authority, which the faucet funds first.
async fn init_real(chain: &Chain, collection: &Keypair, authority: &Keypair) -> Result<(), String> {
    let faucet = chain.faucet();
    let payer = faucet.pubkey();
    let a = authority.pubkey();
    let tx = Transaction::new_signed_with_payer(
        &[
            anchor_lang::solana_program::system_instruction::transfer(&payer, &a, 10_000_000_000),
            admin::initialize_registry(&a, &collection.pubkey()),
            admin::initialize_engine(&a),
        ],
        Some(&payer),
        &[faucet, authority, collection],
        chain.latest_blockhash(),
    );
    chain
        .submit(tx.into())
        .await
        .map_err(|e| format!("initializing the real registry and engine: {e}"))?;
    Ok(())
}

/// Writes each program's IDL account (the layout `anchor idl init` creates), so IDL loaders
/// find the IDLs on chain as on a cluster where they were published.
async fn publish_idls(chain: &Chain, ids: &ProgramIds) -> Result<(), String> {
    let rent = chain
        .banks()
        .await
        .get_rent()
        .await
        .map_err(|e| e.to_string())?;
    let authority = chain.faucet().pubkey();
    for program in Program::ALL {
        let id = ids.get(program);
        let doc = idl::bundled(program).map_err(|e| e.to_string())?;
        let data = idl::encode_idl_account(&authority, &doc);
        let account = Account {
            lamports: rent.minimum_balance(data.len()),
            data,
            owner: id,
            executable: false,
            rent_epoch: 0,
        };
        chain.set_account(&idl::idl_address(&id), account).await;
    }
    Ok(())
}
