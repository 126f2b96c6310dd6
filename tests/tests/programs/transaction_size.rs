//! The settlement transaction must fit in one packet (1232 bytes). The largest bundle (both
//! stats accounts, the acceptance policy, both attestations, and a priority fee: a ComputeBudget
//! unit limit and unit price before the payment) is sent as a v0 transaction that loads the
//! static accounts from an address lookup table, on chain.

use gate::state::FeedbackLog;
use policy_vault::state::{funding, ApprovalTerms};
use solana_sdk::signature::Signer;
use trust_gate_client::instructions::ApprovalUse;
use trust_gate_client::settle::ComputeBudget;
use trust_gate_program_common::external as ext;
use trust_gate_program_tests::world::{pda, World};
use trust_gate_program_tests::{fetch, payment_id};

/// Solana's packet limit for a serialized transaction.
const PACKET_LIMIT: usize = 1232;

#[tokio::test]
async fn the_largest_settlement_fits_in_a_packet_as_v0_with_a_lookup_table() {
    largest_settlement_fits(funding::WALLET).await;
}

/// The vault adds one account per payer (the vault itself, not in the lookup table: it is
/// per agent); the payer's token account and the token program are already in the bundle.
#[tokio::test]
async fn the_largest_vault_funded_settlement_fits_in_a_packet_too() {
    largest_settlement_fits(funding::VAULT).await;
}

/// A payment above its policy's approval threshold passes [approval, its rent payer] too:
/// two more keys, neither in the lookup table (both are per payment).
#[tokio::test]
async fn the_largest_settlement_with_its_approval_fits_in_a_packet_too() {
    largest_settlement_fits_with(funding::VAULT, true).await;
}

async fn largest_settlement_fits(funding: u8) {
    largest_settlement_fits_with(funding, false).await;
}

async fn largest_settlement_fits_with(funding: u8, approved: bool) {
    let mut w = World::new().await;
    let attestor = w.attestor().await;
    // Approved: every payment above 999 999 needs an approval, and this one has it.
    let threshold = if approved { 999_999 } else { 0 };
    let (payer, payee, att) = w.largest_case_approved(&attestor, funding, threshold).await;
    let vault_funded = funding == funding::VAULT;
    let own_funds = if vault_funded { 0 } else { 10_000_000 };
    let source = w.token_account(&payer.owner.pubkey(), own_funds).await;
    let destination = w.token_account(&payee.owner.pubkey(), 0).await;
    let mut strict = if vault_funded {
        w.vault_strict_ix(&payer, &payee, 1_000_000, destination, att, source)
    } else {
        w.strict_ix(&payer, &payee, 1_000_000, destination, att)
    };
    if approved {
        let terms = ApprovalTerms {
            payer_asset: payer.asset(),
            payee_asset: payee.asset(),
            mint: w.mint,
            amount: 1_000_000,
            policy_id: 1,
        };
        let sdk = trust_gate_program_tests::world::sdk();
        let approve = sdk.approve_payment(&payer.owner.pubkey(), &[], terms, w.now + 3_600);
        trust_gate_program_tests::send(&mut w.ctx, &[approve], &[&payer.owner])
            .await
            .unwrap();
        ApprovalUse {
            address: sdk.pda.approval(&terms),
            rent_payer: payer.owner.pubkey(),
        }
        .append_to(&mut strict);
    }
    let pay = payment_id();
    let priority_fee = ComputeBudget {
        unit_limit: Some(400_000),
        unit_price_micro_lamports: Some(5_000_000),
    };
    let mut bundle = priority_fee.instructions();
    bundle.extend([
        strict,
        w.transfer_ix(&source, &destination, &payer.owner.pubkey(), 1_000_000),
        w.emit_feedback_ix(pay, &payee.asset(), 90, 1_000_000),
    ]);
    let facilitator = w.facilitator.insecure_clone();

    // The static accounts a facilitator keeps in its lookup table.
    let statics = vec![
        policy_vault::ID,
        ext::ids::AGENT_REGISTRY,
        ext::ids::REPUTATION_ENGINE,
        anchor_lang::system_program::ID,
        solana_sdk::sysvar::instructions::ID,
        w.mint,
        w.collection.pubkey(),
        ext::atom_config_pda().0,
        ext::registry_cpi_authority_pda().0,
        pda::evaluate_signer(),
        pda::gate_authority(&facilitator.pubkey()),
    ];
    let table = w.lookup_table(&facilitator, statics).await;
    let (legacy_size, tx) = w
        .v0_transaction(&bundle, &facilitator, &[&payer.owner], table)
        .await;
    let size = bincode::serialize(&tx).unwrap().len();
    let case = match (vault_funded, approved) {
        (true, true) => "vault-funded, approved",
        (true, false) => "vault-funded",
        _ => "wallet-funded",
    };
    println!("largest {case} settlement: legacy {legacy_size} bytes, v0 + lookup table {size} bytes (limit {PACKET_LIMIT})");
    assert!(
        legacy_size > PACKET_LIMIT,
        "the reason for the lookup table: {legacy_size}"
    );
    assert!(size <= PACKET_LIMIT, "v0 settlement is {size} bytes");

    trust_gate_program_tests::process(&mut w.ctx, tx)
        .await
        .unwrap();
    let log: FeedbackLog = fetch(&mut w.ctx, &pda::feedback_log(&facilitator.pubkey(), &pay))
        .await
        .unwrap();
    assert_eq!(log.payer_wallet, payer.owner.pubkey());
    if approved {
        // Used up by the settlement.
        let approval = trust_gate_program_tests::world::sdk()
            .pda
            .approval(&ApprovalTerms {
                payer_asset: payer.asset(),
                payee_asset: payee.asset(),
                mint: w.mint,
                amount: 1_000_000,
                policy_id: 1,
            });
        assert!(w
            .ctx
            .banks_client
            .get_account(approval)
            .await
            .unwrap()
            .is_none());
    }
    if vault_funded {
        // The vault paid; the payer's own account passed the amount on.
        let vault = trust_gate_program_tests::world::sdk()
            .pda
            .vault(&payer.asset(), &w.mint);
        assert_eq!(w.token_balance(&vault).await, 9_000_000);
        assert_eq!(w.token_balance(&source).await, 0);
    }
}

/// The largest held settlement that fits (docs/holdback.md): the largest vault-funded case
/// with a holdback schedule, a share of the payee's payment held back by a second transfer
/// to the payee's escrow, which the lookup table holds (one per payee and mint, as the
/// destination); without the escrow in the table it does not fit. With an approval besides
/// (34 bytes more, as without a holdback) the vault-funded one does not fit either.
#[tokio::test]
async fn the_largest_held_settlement_fits_with_its_escrow_in_the_lookup_table() {
    use trust_gate_program_tests::holdback::{schedule, HeldCase};
    let mut w = World::new().await;
    let attestor = w.attestor().await;
    let arbiter = solana_sdk::pubkey::Pubkey::new_unique();
    let (payer, payee, att) = w
        .largest_held_case(&attestor, funding::VAULT, 0, schedule(arbiter))
        .await;
    let source = w.token_account(&payer.owner.pubkey(), 0).await;
    let destination = w.token_account(&payee.owner.pubkey(), 0).await;
    let escrow = w.open_escrow(&payee.asset()).await;
    let case = HeldCase {
        payer: &payer,
        payee: &payee,
        attestations: att,
        funding: trust_gate_client::settle::Funding::Vault,
        source,
        destination,
        escrow,
        compute_budget: ComputeBudget {
            unit_limit: Some(400_000),
            unit_price_micro_lamports: Some(5_000_000),
        },
    };
    let pay = payment_id();
    let (quote, bundle) = w.quoted_settlement(&case, 1_000_000, pay).await;
    let held = quote.expect("a schedule quotes").held;
    assert!(
        held > 0 && bundle.len() == 6,
        "a held settlement with its prefix"
    );
    let facilitator = w.facilitator.insecure_clone();
    let statics = vec![
        policy_vault::ID,
        ext::ids::AGENT_REGISTRY,
        ext::ids::REPUTATION_ENGINE,
        anchor_lang::system_program::ID,
        solana_sdk::sysvar::instructions::ID,
        w.mint,
        w.collection.pubkey(),
        ext::atom_config_pda().0,
        ext::registry_cpi_authority_pda().0,
        pda::evaluate_signer(),
        pda::gate_authority(&facilitator.pubkey()),
    ];
    // Without the escrow in the table: one packet is not enough.
    let table = w.lookup_table(&facilitator, statics.clone()).await;
    let (_, tx) = w
        .v0_transaction(&bundle, &facilitator, &[&payer.owner], table)
        .await;
    let without = bincode::serialize(&tx).unwrap().len();
    let table = w
        .lookup_table(&facilitator, [statics, vec![escrow]].concat())
        .await;
    let (legacy_size, tx) = w
        .v0_transaction(&bundle, &facilitator, &[&payer.owner], table)
        .await;
    let size = bincode::serialize(&tx).unwrap().len();
    println!(
        "largest held settlement: legacy {legacy_size} bytes, v0 + lookup table {without} bytes, {size} with the escrow in it (limit {PACKET_LIMIT})"
    );
    assert!(
        without > PACKET_LIMIT,
        "without the escrow in the table: {without}"
    );
    assert!(size <= PACKET_LIMIT, "v0 held settlement is {size} bytes");
    trust_gate_program_tests::process(&mut w.ctx, tx)
        .await
        .unwrap();
    assert_eq!(w.token_balance(&escrow).await, held);
    assert_eq!(w.token_balance(&destination).await, 1_000_000 - held);
    assert_eq!(w.held_share(&pay).await.map(|h| h.held), Some(held));
}
