//! Vault-funded policies: the agent's funds sit in its policy vault, which only a gated
//! settlement under a vault-funded policy or the authority's threshold can move. The agent's
//! hot key (its registry agent wallet, not a member of the authority) signs the payments and
//! holds nothing; every way it could reach the vault alone is executed here and refused.

use anchor_lang::solana_program::system_instruction;
use anchor_spl::token_2022::spl_token_2022;
use gate::errors::GateError as G;
use gate::settlement::{TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID};
use policy_vault::errors::PolicyVaultError as V;
use policy_vault::state::{funding, PolicyParams};
use solana_program_test::{processor, BanksClientError};
use solana_sdk::instruction::{AccountMeta, Instruction, InstructionError};
use solana_sdk::signature::{Keypair, Signer};
use solana_sdk::transaction::TransactionError;
use trust_gate_client::instructions::VaultRelease;
use trust_gate_program_tests::hook::{self, SELF_AUTHORIZED_HOOK_ID};
use trust_gate_program_tests::mints::Extension;
use trust_gate_program_tests::world::{demo_policy, sdk, tier, Agent, Attestations, World};
use trust_gate_program_tests::wrapper::{self, WRAPPER_ID};
use trust_gate_program_tests::{assert_code, payment_id, replace_account, send, send_tx};

fn g(e: G) -> u32 {
    u32::from(e)
}

fn v(e: V) -> u32 {
    u32::from(e)
}

/// What the vault holds after set-up: 50 tokens.
const VAULT_FUNDS: u64 = 50_000_000;
/// SPL Token's (and Token-2022's) OwnerMismatch.
const TOKEN_OWNER_MISMATCH: u32 = 4;
/// SPL Token's (and Token-2022's) MintDecimalsMismatch.
const TOKEN_DECIMALS_MISMATCH: u32 = 18;

fn vault_policy(mint: anchor_lang::prelude::Pubkey) -> PolicyParams {
    PolicyParams {
        funding: funding::VAULT,
        ..demo_policy(mint)
    }
}

/// A tier-3 payer whose policy 1 (the demo limits) is funded by its vault.
struct Bound {
    agent: Agent,
    /// The human owners: the owner and `cosigners` form the authority (all must sign).
    cosigners: Vec<Keypair>,
    /// The agent wallet: signs payments, is no member.
    hot: Keypair,
    hot_token: anchor_lang::prelude::Pubkey,
    vault: anchor_lang::prelude::Pubkey,
    mint: anchor_lang::prelude::Pubkey,
    program: anchor_lang::prelude::Pubkey,
    /// A transfer hook's accounts, for the mint's transfers.
    hook: Vec<AccountMeta>,
    /// The deadline of its payments (the world's when it was bound).
    deadline: i64,
}

impl Bound {
    fn asset(&self) -> anchor_lang::prelude::Pubkey {
        self.agent.asset()
    }

    fn members(&self) -> Vec<&Keypair> {
        std::iter::once(&self.agent.owner)
            .chain(self.cosigners.iter())
            .collect()
    }

    fn cosigner_keys(&self) -> Vec<anchor_lang::prelude::Pubkey> {
        self.cosigners.iter().map(|k| k.pubkey()).collect()
    }

    /// The strict gate of a payment under `policy_id`, releasing into `payer_token` (`None`:
    /// a wallet-style gate without the vault).
    fn strict(
        &self,
        payee: &Agent,
        amount: u64,
        destination: anchor_lang::prelude::Pubkey,
        policy_id: u32,
        payer_token: Option<anchor_lang::prelude::Pubkey>,
    ) -> Instruction {
        let mut ix = sdk().gate_payment_strict(
            &self.hot.pubkey(),
            &self.asset(),
            &payee.asset(),
            amount,
            &self.mint,
            policy_id,
            self.deadline,
            &destination,
            Attestations::default(),
            payer_token.map(|payer_token| VaultRelease {
                payer_token,
                token_program: self.program,
            }),
            None,
        );
        // The release's transfer needs the hook's accounts too.
        ix.accounts.extend(self.hook.iter().cloned());
        ix
    }

    fn transfer(
        &self,
        source: &anchor_lang::prelude::Pubkey,
        destination: &anchor_lang::prelude::Pubkey,
        amount: u64,
        decimals: u8,
    ) -> Instruction {
        let mut ix = spl_token_2022::instruction::transfer_checked(
            &self.program,
            source,
            &self.mint,
            destination,
            &self.hot.pubkey(),
            &[],
            amount,
            decimals,
        )
        .unwrap();
        ix.accounts.extend(self.hook.iter().cloned());
        ix
    }

    /// The vault-funded settlement: [strict (release into the hot key's account), transfer
    /// from it to `destination`, feedback].
    fn settlement(
        &self,
        w: &World,
        payee: &Agent,
        destination: anchor_lang::prelude::Pubkey,
        amount: u64,
    ) -> Vec<Instruction> {
        vec![
            self.strict(payee, amount, destination, 1, Some(self.hot_token)),
            self.transfer(&self.hot_token, &destination, amount, 6),
            w.emit_feedback_ix(payment_id(), &payee.asset(), 90, amount),
        ]
    }
}

/// Registers a bound payer for `mint` (of token `program`): hot key as agent wallet, an
/// authority of the owner and `cosigners` (threshold: all of them), policy 1 vault-funded,
/// the vault opened and [`VAULT_FUNDS`] deposited, the hot key's account empty.
async fn bound_payer(
    w: &mut World,
    mint: anchor_lang::prelude::Pubkey,
    program: anchor_lang::prelude::Pubkey,
    cosigners: usize,
    hook: Vec<AccountMeta>,
) -> Bound {
    let agent = w.register_agent().await;
    w.set_stats(&agent.asset(), tier(3)).await;
    let hot = Keypair::new();
    let owner = agent.owner.pubkey();
    w.set_agent_wallet(&agent, &hot).await;
    let mut b = Bound {
        agent,
        cosigners: (0..cosigners).map(|_| Keypair::new()).collect(),
        hot,
        hot_token: Default::default(),
        vault: Default::default(),
        mint,
        program,
        hook,
        deadline: w.deadline(),
    };
    let mut members = vec![owner];
    members.extend(b.cosigner_keys());
    let threshold = members.len() as u8;
    let ixs = [
        w.init_authority_ix(&owner, &b.asset(), members, threshold),
        sdk().init_policy(
            &owner,
            &b.cosigner_keys(),
            &b.asset(),
            1,
            vault_policy(mint),
            Default::default(),
            0,
        ),
        sdk().open_vault(&owner, &b.cosigner_keys(), &b.asset(), &mint, &program),
        sdk().set_vault_spender(&owner, &b.cosigner_keys(), &b.asset(), 1, &b.hot.pubkey()),
    ];
    let signers = b.members();
    send(&mut w.ctx, &ixs, &signers).await.unwrap();
    b.vault = sdk().pda.vault(&b.asset(), &mint);
    // A deposit is a plain transfer (here: a mint) into the vault.
    w.deposit(&program, &mint, &b.vault, VAULT_FUNDS).await;
    b.hot_token = w
        .associated_account(&program, &mint, &b.hot.pubkey(), 0)
        .await;
    b
}

/// A tier-3 payee with an empty account of the mint.
async fn payee_of(w: &mut World, b: &Bound) -> (Agent, anchor_lang::prelude::Pubkey) {
    let payee = w.payee(3, None).await;
    let dest = w
        .associated_account(&b.program, &b.mint, &payee.owner.pubkey(), 0)
        .await;
    (payee, dest)
}

async fn send_as_hot(
    w: &mut World,
    b: &Bound,
    ixs: &[Instruction],
) -> Result<(), BanksClientError> {
    let facilitator = w.facilitator.insecure_clone();
    send_tx(&mut w.ctx, ixs, &facilitator, &[&b.hot]).await
}

/// Vault balance, the hot key's balance, and policy 1's counters.
async fn state(w: &mut World, b: &Bound) -> (u64, u64, (u64, u64, u64)) {
    (
        w.token_balance(&b.vault).await,
        w.token_balance(&b.hot_token).await,
        w.counters(&b.agent).await,
    )
}

const UNTOUCHED: (u64, u64, (u64, u64, u64)) = (VAULT_FUNDS, 0, (0, 0, 0));

#[tokio::test]
async fn a_vault_funded_settlement_pays_from_the_vault() {
    let mut w = World::new().await;
    let mint = w.mint;
    let b = bound_payer(&mut w, mint, TOKEN_PROGRAM_ID, 0, vec![]).await;
    let (payee, dest) = payee_of(&mut w, &b).await;
    assert_eq!(state(&mut w, &b).await, UNTOUCHED);

    let ixs = b.settlement(&w, &payee, dest, 1_000_000);
    send_as_hot(&mut w, &b, &ixs).await.unwrap();
    // The vault paid, the payee received, the hot key's balance did not move, the counters
    // count the payment.
    assert_eq!(
        state(&mut w, &b).await,
        (
            VAULT_FUNDS - 1_000_000,
            0,
            (1_000_000, 1_000_000, 1_000_000)
        )
    );
    assert_eq!(w.token_balance(&dest).await, 1_000_000);

    // And again: the vault keeps paying until the policy says no.
    let ixs = b.settlement(&w, &payee, dest, 2_000_000);
    send_as_hot(&mut w, &b, &ixs).await.unwrap();
    assert_eq!(
        state(&mut w, &b).await,
        (
            VAULT_FUNDS - 3_000_000,
            0,
            (3_000_000, 3_000_000, 3_000_000)
        )
    );
    assert_eq!(w.token_balance(&dest).await, 3_000_000);
}

#[tokio::test]
async fn the_hot_key_alone_cannot_move_the_vault() {
    let mut pt = trust_gate_localnet::native::program_test();
    pt.add_program("wrapper", WRAPPER_ID, processor!(wrapper::call_twice));
    let mut w = World::with_program_test(pt).await;
    let mint = w.mint;
    let b = bound_payer(&mut w, mint, TOKEN_PROGRAM_ID, 0, vec![]).await;
    let (payee, dest) = payee_of(&mut w, &b).await;
    let amount = 1_000_000;

    // 1. A direct transfer out of the vault, signed by the hot key.
    let direct = b.transfer(&b.vault, &b.hot_token, amount, 6);
    assert_code(
        send_as_hot(&mut w, &b, &[direct]).await,
        TOKEN_OWNER_MISMATCH,
    );

    // 2. A withdrawal signed by the hot key.
    let withdraw = sdk().withdraw(
        &b.hot.pubkey(),
        &[],
        &b.asset(),
        &mint,
        &b.program,
        &b.hot_token,
        amount,
    );
    assert_code(
        send_as_hot(&mut w, &b, &[withdraw]).await,
        v(V::NotAuthorityMember),
    );

    // 3. A bundle that diverts the release: into the hot key's account while the transfer
    //    pays from someone else's (the hot key a delegate there), or into that account.
    let accomplice = Keypair::new();
    let other = w
        .associated_account(&b.program, &mint, &accomplice.pubkey(), amount)
        .await;
    let mut diverted = b.settlement(&w, &payee, dest, amount);
    diverted[1] = b.transfer(&other, &dest, amount, 6);
    assert_code(
        send_as_hot(&mut w, &b, &diverted).await,
        g(G::TransferSourceMismatch),
    );
    diverted[0] = b.strict(&payee, amount, dest, 1, Some(other));
    assert_code(
        send_as_hot(&mut w, &b, &diverted).await,
        g(G::PayerTokenMismatch),
    );

    // 4. A release without the transfer: the gate alone, or something else in its place.
    let settlement = b.settlement(&w, &payee, dest, amount);
    assert_code(
        send_as_hot(&mut w, &b, &settlement[..1]).await,
        g(G::SettlementLayoutInvalid),
    );
    let mut no_transfer = settlement.clone();
    no_transfer[1] = system_instruction::transfer(&b.hot.pubkey(), &w.facilitator.pubkey(), 0);
    assert_code(
        send_as_hot(&mut w, &b, &no_transfer).await,
        g(G::TransferMissing),
    );

    // 5. The strict gate called by a program (twice, for one transfer).
    let mut wrapped = settlement.clone();
    wrapped[0] = wrapper::wrap(&wrapped[0]);
    assert_code(
        send_as_hot(&mut w, &b, &wrapped).await,
        g(G::StrictGateNotTopLevel),
    );

    // 6. The vault released under another policy of the agent that is wallet-funded (its
    //    caps were not written for the vault).
    let owner = b.agent.owner.insecure_clone();
    let ix = sdk().init_policy(
        &owner.pubkey(),
        &[],
        &b.asset(),
        2,
        demo_policy(mint),
        Default::default(),
        0,
    );
    send(&mut w.ctx, &[ix], &[&owner]).await.unwrap();
    let mut other_policy = settlement.clone();
    other_policy[0] = b.strict(&payee, amount, dest, 2, Some(b.hot_token));
    assert_code(
        send_as_hot(&mut w, &b, &other_policy).await,
        v(V::PolicyNotVaultFunded),
    );

    // 7. The vault-funded policy without its vault: the payment must come from the vault.
    let mut no_vault = settlement.clone();
    no_vault[0] = b.strict(&payee, amount, dest, 1, None);
    assert_code(
        send_as_hot(&mut w, &b, &no_vault).await,
        v(V::VaultAccountsMissing),
    );

    assert_eq!(state(&mut w, &b).await, UNTOUCHED);
    assert_eq!(w.token_balance(&dest).await, 0);
    // The real settlement still goes through.
    send_as_hot(&mut w, &b, &settlement).await.unwrap();
    assert_eq!(w.token_balance(&dest).await, amount);
}

#[tokio::test]
async fn withdrawing_and_opening_need_the_threshold() {
    let mut w = World::new().await;
    let mint = w.mint;
    // Owner + one cosigner, threshold 2 (set-up signed by both).
    let b = bound_payer(&mut w, mint, TOKEN_PROGRAM_ID, 1, vec![]).await;
    let owner = b.agent.owner.insecure_clone();
    let cosigner = b.cosigners[0].insecure_clone();
    let to = w.token_account(&owner.pubkey(), 0).await;
    let withdraw = |amount: u64, cosigners: &[anchor_lang::prelude::Pubkey]| {
        sdk().withdraw(
            &owner.pubkey(),
            cosigners,
            &b.asset(),
            &mint,
            &b.program,
            &to,
            amount,
        )
    };

    assert_code(
        send(&mut w.ctx, &[withdraw(1, &[])], &[&owner]).await,
        v(V::InsufficientSigners),
    );
    let both = [cosigner.pubkey()];
    assert_code(
        send(&mut w.ctx, &[withdraw(0, &both)], &[&owner, &cosigner]).await,
        v(V::AmountZero),
    );
    // A second vault (another mint) needs the threshold too.
    let other_mint = w.token_2022_mint(&[]).await;
    let open = sdk().open_vault(
        &owner.pubkey(),
        &[],
        &b.asset(),
        &other_mint,
        &TOKEN_2022_PROGRAM_ID,
    );
    assert_code(
        send(&mut w.ctx, &[open], &[&owner]).await,
        v(V::InsufficientSigners),
    );
    assert_eq!(state(&mut w, &b).await, UNTOUCHED);

    assert_code(
        send(
            &mut w.ctx,
            &[withdraw(VAULT_FUNDS + 1, &both)],
            &[&owner, &cosigner],
        )
        .await,
        v(V::VaultInsufficientFunds),
    );
    send(
        &mut w.ctx,
        &[withdraw(2_000_000, &both)],
        &[&owner, &cosigner],
    )
    .await
    .unwrap();
    assert_eq!(w.token_balance(&b.vault).await, VAULT_FUNDS - 2_000_000);
    assert_eq!(w.token_balance(&to).await, 2_000_000);
}

/// A vault holds tokens for a long time: its mint must not be able to take them back, now
/// (a permanent delegate), by shrinking them (a transfer fee), or later (a close authority:
/// closed at zero supply, re-created with a delegate). An address someone pre-funded with
/// lamports still opens.
#[tokio::test]
async fn a_vault_refuses_mints_that_could_take_its_funds_and_opens_when_prefunded() {
    let mut w = World::new().await;
    let mint = w.mint;
    let b = bound_payer(&mut w, mint, TOKEN_PROGRAM_ID, 0, vec![]).await;
    let owner = b.agent.owner.insecure_clone();
    let someone = anchor_lang::prelude::Pubkey::new_unique();
    refuses_vault_mints(
        &mut w,
        &b,
        [
            (Extension::CloseAuthority(someone), V::MintCloseAuthority),
            (
                Extension::PermanentDelegate(someone),
                V::MintPermanentDelegate,
            ),
            (Extension::TransferFee { bps: 0 }, V::MintTransferFee),
        ],
    )
    .await;
    // The right mint with the wrong token program.
    let plain = w.token_2022_mint(&[]).await;
    let open = sdk().open_vault(&owner.pubkey(), &[], &b.asset(), &plain, &TOKEN_PROGRAM_ID);
    assert_code(
        send(&mut w.ctx, &[open], &[&owner]).await,
        v(V::TokenProgramMismatch),
    );

    let vault = sdk().pda.vault(&b.asset(), &plain);
    trust_gate_program_tests::fund(&mut w.ctx, &vault, 1_000_000).await;
    let open = sdk().open_vault(
        &owner.pubkey(),
        &[],
        &b.asset(),
        &plain,
        &TOKEN_2022_PROGRAM_ID,
    );
    send(&mut w.ctx, std::slice::from_ref(&open), &[&owner])
        .await
        .unwrap();
    w.deposit(&TOKEN_2022_PROGRAM_ID, &plain, &vault, 7).await;
    assert_eq!(w.token_balance(&vault).await, 7);
    // Once only.
    assert!(send(&mut w.ctx, &[open], &[&owner]).await.is_err());
}

#[tokio::test]
async fn a_deny_an_empty_vault_or_the_kill_switch_release_nothing() {
    let mut w = World::new().await;
    let mint = w.mint;
    let b = bound_payer(&mut w, mint, TOKEN_PROGRAM_ID, 0, vec![]).await;
    let (payee, dest) = payee_of(&mut w, &b).await;
    let owner = b.agent.owner.insecure_clone();

    // Above the per-payment cap (5 tokens): Deny 2.
    let ixs = b.settlement(&w, &payee, dest, 6_000_000);
    assert_code(
        send_as_hot(&mut w, &b, &ixs).await,
        g(G::SpendingPerTxExceeded),
    );
    assert_eq!(state(&mut w, &b).await, UNTOUCHED);

    // Kill switch engaged: Deny 1.
    let pause = |paused| sdk().set_killswitch(&owner.pubkey(), &[], &b.asset(), paused);
    send(&mut w.ctx, &[pause(true)], &[&owner]).await.unwrap();
    let ixs = b.settlement(&w, &payee, dest, 1_000_000);
    assert_code(send_as_hot(&mut w, &b, &ixs).await, g(G::KillSwitchEngaged));
    assert_eq!(state(&mut w, &b).await, UNTOUCHED);
    send(&mut w.ctx, &[pause(false)], &[&owner]).await.unwrap();

    // The owners take most of the funds out: a payment above what is left is refused by
    // name, before any transfer.
    let to = w.token_account(&owner.pubkey(), 0).await;
    let withdraw = sdk().withdraw(
        &owner.pubkey(),
        &[],
        &b.asset(),
        &mint,
        &b.program,
        &to,
        VAULT_FUNDS - 500_000,
    );
    send(&mut w.ctx, &[withdraw], &[&owner]).await.unwrap();
    let ixs = b.settlement(&w, &payee, dest, 1_000_000);
    assert_code(
        send_as_hot(&mut w, &b, &ixs).await,
        v(V::VaultInsufficientFunds),
    );
    // A Deny keeps its reason code whatever the vault holds.
    let ixs = b.settlement(&w, &payee, dest, 6_000_000);
    assert_code(
        send_as_hot(&mut w, &b, &ixs).await,
        g(G::SpendingPerTxExceeded),
    );
    assert_eq!(state(&mut w, &b).await, (500_000, 0, (0, 0, 0)));
    assert_eq!(w.token_balance(&dest).await, 0);
}

#[tokio::test]
async fn a_failing_transfer_rolls_the_release_back() {
    let mut pt = trust_gate_localnet::native::program_test();
    pt.add_program(
        "self_authorized_hook",
        SELF_AUTHORIZED_HOOK_ID,
        processor!(hook::reject_unless_self_authorized),
    );
    let mut w = World::with_program_test(pt).await;

    // Instruction 2 fails (wrong decimals) after the release ran.
    let mint = w.mint;
    let b = bound_payer(&mut w, mint, TOKEN_PROGRAM_ID, 0, vec![]).await;
    let (payee, dest) = payee_of(&mut w, &b).await;
    let mut ixs = b.settlement(&w, &payee, dest, 1_000_000);
    ixs[1] = b.transfer(&b.hot_token, &dest, 1_000_000, 7);
    let err = send_as_hot(&mut w, &b, &ixs).await.unwrap_err();
    assert_eq!(
        failed_instruction(&err),
        Some((1, InstructionError::Custom(TOKEN_DECIMALS_MISMATCH))),
        "{err:?}"
    );
    assert_eq!(state(&mut w, &b).await, UNTOUCHED);

    // A Token-2022 transfer hook that lets the vault's own transfer through and refuses the
    // payer's: the release (instruction 0) passed the hook, the transfer (1) did not, and
    // nothing of the release remains.
    let mint = w.hook_mint(SELF_AUTHORIZED_HOOK_ID).await;
    let extra = hook::hook_accounts(&SELF_AUTHORIZED_HOOK_ID, &mint).to_vec();
    let b = bound_payer(&mut w, mint, TOKEN_2022_PROGRAM_ID, 0, extra).await;
    let (payee, dest) = payee_of(&mut w, &b).await;
    let ixs = b.settlement(&w, &payee, dest, 1_000_000);
    let err = send_as_hot(&mut w, &b, &ixs).await.unwrap_err();
    assert_eq!(
        failed_instruction(&err),
        Some((1, InstructionError::Custom(hook::HOOK_REJECTION))),
        "{err:?}"
    );
    assert_eq!(state(&mut w, &b).await, UNTOUCHED);
    assert_eq!(w.token_balance(&dest).await, 0);
}

/// The index of the instruction that failed and its error.
fn failed_instruction(err: &BanksClientError) -> Option<(u8, InstructionError)> {
    match err {
        BanksClientError::TransactionError(TransactionError::InstructionError(i, e))
        | BanksClientError::SimulationError {
            err: TransactionError::InstructionError(i, e),
            ..
        } => Some((*i, e.clone())),
        _ => None,
    }
}

/// F-3 of the third audit, a vault: the payee agent was handed to the payer's vault, so the
/// payee's recipient is the vault (a token account that is its own authority). Before the fix
/// a vault-funded settlement released from the vault and paid straight back into it: nothing
/// moved, yet the policy counted it and the payee was rated.
#[tokio::test]
async fn audit3_f3_a_payment_into_a_vault_is_refused() {
    let mut w = World::new().await;
    let mint = w.mint;
    let b = bound_payer(&mut w, mint, TOKEN_PROGRAM_ID, 0, vec![]).await;
    let payee = w.payee(3, None).await;
    w.transfer_asset_to(&payee, &b.vault).await.unwrap();
    let ixs = b.settlement(&w, &payee, b.vault, 1_000_000);
    assert_code(send_as_hot(&mut w, &b, &ixs).await, g(G::PaymentToVault));
    assert_eq!(state(&mut w, &b).await, UNTOUCHED);
}

/// F-6 of the third audit: a mint whose issuer can lock a vault by design (Token-2022
/// Pausable: one switch stops every transfer; DefaultAccountState(Frozen): the vault is born
/// frozen) is refused for a vault. Before the fix both vaults opened.
#[tokio::test]
async fn audit3_f6_a_vault_refuses_pausable_and_default_frozen_mints() {
    let mut w = World::new().await;
    let mint = w.mint;
    let b = bound_payer(&mut w, mint, TOKEN_PROGRAM_ID, 0, vec![]).await;
    let issuer = anchor_lang::prelude::Pubkey::new_unique();
    refuses_vault_mints(
        &mut w,
        &b,
        [
            (Extension::Pausable(issuer), V::MintPausable),
            (Extension::DefaultFrozen, V::MintDefaultFrozen),
        ],
    )
    .await;
}

/// For each case, a Token-2022 mint with that extension: `b`'s owner cannot open a vault for
/// it, with the case's error.
async fn refuses_vault_mints<const N: usize>(w: &mut World, b: &Bound, cases: [(Extension, V); N]) {
    let owner = b.agent.owner.insecure_clone();
    for (extension, code) in cases {
        let bad = w.token_2022_mint(&[extension]).await;
        let open = sdk().open_vault(
            &owner.pubkey(),
            &[],
            &b.asset(),
            &bad,
            &TOKEN_2022_PROGRAM_ID,
        );
        assert_code(send(&mut w.ctx, &[open], &[&owner]).await, v(code));
    }
}

/// F-1 of the third audit: the owner, one member of the authority, signed vault-funded
/// settlements itself and so spent the vault up to the policies' caps without the threshold.
/// Now only the spender the threshold named can: the owner alone is refused, the spender
/// pays, and changing the spender takes the threshold again.
#[tokio::test]
async fn audit3_f1_only_the_spender_the_threshold_named_pays_from_the_vault() {
    let mut w = World::new().await;
    let mint = w.mint;
    let b = bound_payer(&mut w, mint, TOKEN_PROGRAM_ID, 1, vec![]).await;
    let (payee, dest) = payee_of(&mut w, &b).await;
    let owner = b.agent.owner.insecure_clone();
    let owner_token = w
        .associated_account(&TOKEN_PROGRAM_ID, &mint, &owner.pubkey(), 0)
        .await;

    // The owner signs a vault-funded settlement of its own: the release would credit the
    // owner's account, which is not the spender's.
    let as_owner = |w: &World| {
        let mut strict = b.strict(&payee, 1_000_000, dest, 1, Some(owner_token));
        replace_account(&mut strict, &b.hot.pubkey(), owner.pubkey());
        let mut transfer = b.transfer(&owner_token, &dest, 1_000_000, 6);
        replace_account(&mut transfer, &b.hot.pubkey(), owner.pubkey());
        vec![
            strict,
            transfer,
            w.emit_feedback_ix(payment_id(), &payee.asset(), 90, 1_000_000),
        ]
    };
    let facilitator = w.facilitator.insecure_clone();
    let ixs = as_owner(&w);
    assert_code(
        send_tx(&mut w.ctx, &ixs, &facilitator, &[&owner]).await,
        v(V::NotVaultSpender),
    );
    assert_eq!(state(&mut w, &b).await, UNTOUCHED);

    // The named spender (the hot key) pays.
    let ixs = b.settlement(&w, &payee, dest, 1_000_000);
    send_as_hot(&mut w, &b, &ixs).await.unwrap();
    assert_eq!(w.token_balance(&dest).await, 1_000_000);

    // Renaming the spender takes the threshold (owner and cosigner): the owner alone cannot
    // make itself the spender.
    let rename = |cosigners: &[anchor_lang::prelude::Pubkey]| {
        sdk().set_vault_spender(&owner.pubkey(), cosigners, &b.asset(), 1, &owner.pubkey())
    };
    assert_code(
        send(&mut w.ctx, &[rename(&[])], &[&owner]).await,
        v(V::InsufficientSigners),
    );
    let signers = b.members();
    send(&mut w.ctx, &[rename(&b.cosigner_keys())], &signers)
        .await
        .unwrap();
    // Now the owner is the spender, and the hot key is refused.
    let ixs = as_owner(&w);
    send_tx(&mut w.ctx, &ixs, &facilitator, &[&owner])
        .await
        .unwrap();
    let ixs = b.settlement(&w, &payee, dest, 1_000_000);
    assert_code(send_as_hot(&mut w, &b, &ixs).await, v(V::NotVaultSpender));
    assert_eq!(w.token_balance(&dest).await, 2_000_000);
}
