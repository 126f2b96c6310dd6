//! Token-2022 mints with the extensions a policy must refuse (transfer fee, permanent
//! delegate) or may accept, created by Token-2022 itself, and settlements in them.

use crate::send;
use crate::world::{Agent, World, DECIMALS};
use anchor_lang::prelude::Pubkey;
use anchor_lang::solana_program::system_instruction;
use anchor_spl::token_2022::spl_token_2022::{
    self,
    extension::{default_account_state, pausable, transfer_fee, transfer_hook, ExtensionType},
    state::{AccountState, Mint},
};
use gate::settlement::TOKEN_2022_PROGRAM_ID;
use solana_sdk::instruction::Instruction;
use solana_sdk::signature::{Keypair, Signer};
use trust_gate_client::instructions::Attestations;

/// A Token-2022 mint extension to set up.
#[derive(Clone, Copy, Debug)]
pub enum Extension {
    /// A transfer fee of `bps` basis points (no maximum worth mentioning).
    TransferFee { bps: u16 },
    /// A permanent delegate that can move tokens out of every account of the mint.
    PermanentDelegate(Pubkey),
    /// A close authority (harmless in itself).
    CloseAuthority(Pubkey),
    /// Transfers call this transfer-hook program (see `crate::hook`).
    TransferHook(Pubkey),
    /// No transfer-hook program yet, but this authority may set one.
    TransferHookAuthority(Pubkey),
    /// Pausable, with this pause authority.
    Pausable(Pubkey),
    /// DefaultAccountState(Frozen): new accounts are born frozen (the mint then gets the
    /// world's mint authority as freeze authority).
    DefaultFrozen,
}

impl Extension {
    fn kind(self) -> ExtensionType {
        match self {
            Extension::TransferFee { .. } => ExtensionType::TransferFeeConfig,
            Extension::PermanentDelegate(_) => ExtensionType::PermanentDelegate,
            Extension::CloseAuthority(_) => ExtensionType::MintCloseAuthority,
            Extension::TransferHook(_) | Extension::TransferHookAuthority(_) => {
                ExtensionType::TransferHook
            }
            Extension::Pausable(_) => ExtensionType::Pausable,
            Extension::DefaultFrozen => ExtensionType::DefaultAccountState,
        }
    }

    fn initialize(self, mint: &Pubkey) -> Instruction {
        let p = &TOKEN_2022_PROGRAM_ID;
        match self {
            Extension::TransferFee { bps } => {
                transfer_fee::instruction::initialize_transfer_fee_config(
                    p,
                    mint,
                    None,
                    None,
                    bps,
                    u64::MAX,
                )
            }
            Extension::PermanentDelegate(d) => {
                spl_token_2022::instruction::initialize_permanent_delegate(p, mint, &d)
            }
            Extension::CloseAuthority(c) => {
                spl_token_2022::instruction::initialize_mint_close_authority(p, mint, Some(&c))
            }
            Extension::TransferHook(hook) => {
                transfer_hook::instruction::initialize(p, mint, None, Some(hook))
            }
            Extension::TransferHookAuthority(authority) => {
                transfer_hook::instruction::initialize(p, mint, Some(authority), None)
            }
            Extension::Pausable(authority) => {
                pausable::instruction::initialize(p, mint, &authority)
            }
            Extension::DefaultFrozen => {
                default_account_state::instruction::initialize_default_account_state(
                    p,
                    mint,
                    &AccountState::Frozen,
                )
            }
        }
        .expect("a valid extension instruction")
    }
}

impl World {
    /// An empty token account of the world's mint owned by `owner` at a fresh address (not
    /// its associated one): a second account of the same wallet.
    pub async fn second_token_account(&mut self, owner: &Pubkey) -> Pubkey {
        use solana_sdk::program_pack::Pack;
        let account = Keypair::new();
        let len = anchor_spl::token::spl_token::state::Account::LEN;
        let rent = self.ctx.banks_client.get_rent().await.unwrap();
        let ixs = [
            system_instruction::create_account(
                &self.ctx.payer.pubkey(),
                &account.pubkey(),
                rent.minimum_balance(len),
                len as u64,
                &anchor_spl::token::spl_token::ID,
            ),
            anchor_spl::token::spl_token::instruction::initialize_account3(
                &anchor_spl::token::spl_token::ID,
                &account.pubkey(),
                &self.mint,
                owner,
            )
            .unwrap(),
        ];
        send(&mut self.ctx, &ixs, &[&account]).await.unwrap();
        account.pubkey()
    }

    /// A new Token-2022 mint (world's mint authority, 6 decimals) with `extensions`.
    pub async fn token_2022_mint(&mut self, extensions: &[Extension]) -> Pubkey {
        let mint = Keypair::new();
        let kinds: Vec<ExtensionType> = extensions.iter().map(|e| e.kind()).collect();
        let space = ExtensionType::try_calculate_account_len::<Mint>(&kinds).unwrap();
        let rent = self.ctx.banks_client.get_rent().await.unwrap();
        let payer = self.ctx.payer.pubkey();
        let mut ixs = vec![system_instruction::create_account(
            &payer,
            &mint.pubkey(),
            rent.minimum_balance(space),
            space as u64,
            &TOKEN_2022_PROGRAM_ID,
        )];
        ixs.extend(extensions.iter().map(|e| e.initialize(&mint.pubkey())));
        ixs.push(
            spl_token_2022::instruction::initialize_mint2(
                &TOKEN_2022_PROGRAM_ID,
                &mint.pubkey(),
                &self.mint_authority.pubkey(),
                extensions
                    .iter()
                    .any(|e| matches!(e, Extension::DefaultFrozen))
                    .then(|| self.mint_authority.pubkey())
                    .as_ref(),
                DECIMALS,
            )
            .unwrap(),
        );
        send(&mut self.ctx, &ixs, &[&mint]).await.unwrap();
        mint.pubkey()
    }

    /// `owner`'s associated Token-2022 account of `mint` (created), holding `amount`.
    pub async fn token_2022_account(
        &mut self,
        mint: &Pubkey,
        owner: &Pubkey,
        amount: u64,
    ) -> Pubkey {
        self.associated_account(&TOKEN_2022_PROGRAM_ID, mint, owner, amount)
            .await
    }

    /// The settlement of `amount` of the Token-2022 `mint` from the payer owner's account to
    /// the payee owner's (both created; the payer's funded with 100 tokens).
    pub async fn token_2022_settlement(
        &mut self,
        mint: &Pubkey,
        payer: &Agent,
        payee: &Agent,
        amount: u64,
        payment: [u8; 32],
    ) -> Vec<Instruction> {
        let source = self
            .token_2022_account(mint, &payer.owner.pubkey(), 100_000_000)
            .await;
        let dest = self
            .token_2022_account(mint, &payee.owner.pubkey(), 0)
            .await;
        let transfer = spl_token_2022::instruction::transfer_checked(
            &TOKEN_2022_PROGRAM_ID,
            &source,
            mint,
            &dest,
            &payer.owner.pubkey(),
            &[],
            amount,
            DECIMALS,
        )
        .unwrap();
        vec![
            self.strict_ix_for_mint(*mint, payer, payee, amount, dest, Attestations::default()),
            transfer,
            self.emit_feedback_ix(payment, &payee.asset(), 90, amount),
        ]
    }
}
