//! More payers than the demo world has, for soak tests and benchmarks on the localnet: fresh
//! tier-3 agents (random keys), each with its policy authority, a spending policy and tokens
//! of the demo mint. Localnet only: tiers are set through the stand-in engine's admin.

use crate::demo::{self, DemoWorld};
use crate::LocalnetKeys;
use anchor_lang::prelude::Pubkey;
use anchor_lang::solana_program::system_instruction;
use anchor_spl::associated_token::spl_associated_token_account::instruction::create_associated_token_account_idempotent;
use anchor_spl::token::spl_token;
use policy_vault::state::PolicyParams;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_client::settle::TokenProgram;
use trust_gate_client::standin::instructions as standin;
use trust_gate_client::{chain, ClientError};
use trust_gate_program_common::external::atom_stats::Stats;

/// A payer agent made by [`extra_payers`]: its owner signs its payments.
pub struct ExtraPayer {
    pub owner: Keypair,
    pub asset: Pubkey,
    /// The owner's token account of the demo mint.
    pub token: Pubkey,
}

/// `count` new tier-3 payer agents under `policy` (policy id [`demo::POLICY_ID`]), each
/// holding `balance` base units of the demo mint.
pub async fn extra_payers(
    localnet: &LocalnetKeys<'_>,
    world: &DemoWorld,
    count: usize,
    policy: PolicyParams,
    balance: u64,
) -> Result<Vec<ExtraPayer>, ClientError> {
    let rpc = crate::rpc(&localnet.rpc_url);
    let m = localnet.migration(&rpc, &|_| {})?;
    let collection = chain::base_collection(&rpc, &m.builder.ids).await?;
    let (mint, program) = (world.mint(), TokenProgram::SplToken);
    let admin = localnet.engine_admin;
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let (owner, asset) = (Keypair::new(), Keypair::new());
        let (o, a) = (owner.pubkey(), asset.pubkey());
        let fund = system_instruction::transfer(&localnet.faucet.pubkey(), &o, 1_000_000_000);
        let register = m.builder.register_agent_via_cpi(
            &o,
            &a,
            &collection,
            format!("https://agents.trust-gate.dev/extra-{i}"),
        );
        m.send(
            "register an extra payer",
            &[fund, register],
            &[&owner, &asset],
        )
        .await?;
        let stats = Stats {
            tier_immediate: 3,
            tier_confirmed: 3,
            risk_score: 0,
            confidence: 5_000,
        };
        let token = program.associated_account(&o, &mint);
        let mint_to = spl_token::instruction::mint_to(
            &program.id(),
            &mint,
            &token,
            &world.mint_authority.pubkey(),
            &[],
            balance,
        )
        .map_err(|e| ClientError::Config(e.to_string()))?;
        let agent = [
            standin::set_stats(&admin.pubkey(), &a, &stats),
            m.builder.init_authority(&o, &a, vec![o], 1),
            m.builder.init_policy(
                &o,
                &[],
                &a,
                demo::POLICY_ID,
                policy.clone(),
                Default::default(),
                0,
            ),
        ];
        m.send("set up an extra payer", &agent, &[admin, &owner])
            .await?;
        let tokens = [
            create_associated_token_account_idempotent(&o, &o, &mint, &program.id()),
            mint_to,
        ];
        m.send(
            "fund an extra payer",
            &tokens,
            &[&owner, &world.mint_authority],
        )
        .await?;
        out.push(ExtraPayer {
            owner,
            asset: a,
            token,
        });
    }
    Ok(out)
}
