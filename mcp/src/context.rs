//! What every tool call shares: the configuration, the RPC client, the docs corpus, the
//! demo state, and helpers to require a program, a signer, or to send a transaction.

use crate::config::{Config, Transport};
use crate::docs::Corpus;
use crate::envelope::ToolError;
use crate::pay_sessions::PaySessions;
use solana_commitment_config::CommitmentConfig;
use solana_sdk::instruction::Instruction;
use solana_sdk::signature::{Keypair, Signature, Signer};
use solana_sdk::transaction::Transaction;
use std::time::Instant;
use trust_gate_client::pda::Pdas;
use trust_gate_client::{Builder, RpcClient};

pub struct Ctx {
    pub config: Config,
    pub rpc: RpcClient,
    pub pda: Pdas,
    pub started: Instant,
    /// The docs corpus, or why it could not be loaded (`docs_corpus_not_found`).
    pub docs: Result<Corpus, ToolError>,
    /// The x402 sessions `gate_pay` keeps open.
    pub pay_sessions: PaySessions,
}

impl Ctx {
    pub fn new(config: Config) -> Self {
        let rpc =
            RpcClient::new_with_commitment(config.rpc_url.clone(), CommitmentConfig::confirmed());
        let docs = Corpus::load(config.docs_dir.as_deref());
        Ctx {
            pda: Pdas::new(config.ids),
            rpc,
            started: Instant::now(),
            docs,
            config,
            pay_sessions: PaySessions::default(),
        }
    }

    pub fn transport(&self) -> Transport {
        self.config.transport
    }

    /// An instruction builder; `config_error` when a program id is the mainnet sentinel.
    pub fn builder(&self) -> Result<Builder, ToolError> {
        Builder::new(self.config.ids).map_err(ToolError::from)
    }

    /// The signer of write tools; `auth_required` (with the transport's hint) without one.
    pub fn signer(&self, tool: &str) -> Result<&Keypair, ToolError> {
        self.config
            .signer
            .as_ref()
            .map(|(k, _)| k.as_ref())
            .ok_or_else(|| ToolError::auth_required(self.transport(), tool))
    }

    /// Signs (fee payer first) and sends `ixs` as one transaction, waiting for confirmation.
    /// A failure is `chain_error` with the program error named.
    pub async fn send(
        &self,
        ixs: &[Instruction],
        payer: &Keypair,
        extra: &[&Keypair],
    ) -> Result<Signature, ToolError> {
        let blockhash = self
            .rpc
            .get_latest_blockhash()
            .await
            .map_err(|e| ToolError::from(trust_gate_client::ClientError::from(e)))?;
        let mut signers: Vec<&Keypair> = vec![payer];
        signers.extend(
            extra
                .iter()
                .copied()
                .filter(|k| k.pubkey() != payer.pubkey()),
        );
        let tx =
            Transaction::new_signed_with_payer(ixs, Some(&payer.pubkey()), &signers, blockhash);
        self.rpc
            .send_and_confirm_transaction(&tx)
            .await
            .map_err(|e| ToolError::from(trust_gate_client::settle::transaction_error(e)))
    }
}
