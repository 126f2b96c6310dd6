//! Mints, token accounts and the token CPIs, as the real program reads and calls them.
//!
//! The `token_program` account decides how everything is parsed: SPL Token's fixed layouts
//! (an 82-byte mint, a 165-byte account) or Token-2022's (the same base, then an account-type
//! byte at 165 and TLV extensions from 166). Token-2022 mints may carry only the metadata and
//! group extensions (18..=23), token accounts only ImmutableOwner (7). Every token account is
//! the canonical associated token account of its owner; freeze and mint authorities are not
//! looked at.

use super::layout::SignerSeeds;
use super::{fail, ChannelsError};
use anchor_lang::prelude::*;
use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
use anchor_lang::solana_program::program::invoke_signed;
use std::result::Result;

pub const SPL_TOKEN: Pubkey = pubkey!("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
pub const TOKEN_2022: Pubkey = pubkey!("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb");
pub const ASSOCIATED_TOKEN: Pubkey = pubkey!("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL");

const MINT_LEN: usize = 82;
const ACCOUNT_LEN: usize = 165;
/// Token-2022's account-type byte, right after the base account layout.
const ACCOUNT_TYPE_AT: usize = ACCOUNT_LEN;
const TLV_START: usize = ACCOUNT_TYPE_AT + 1;
const ACCOUNT_TYPE_MINT: u8 = 1;
const ACCOUNT_TYPE_ACCOUNT: u8 = 2;
const DECIMALS_AT: usize = 44;
const STATE_AT: usize = 108;
const STATE_INITIALIZED: u8 = 1;
const IMMUTABLE_OWNER: u16 = 7;
const MINT_EXTENSIONS: std::ops::RangeInclusive<u16> = 18..=23;

/// The token instructions the program sends.
const TRANSFER_CHECKED: u8 = 12;
const CLOSE_ACCOUNT: u8 = 9;
/// p-token's `Batch`: several token instructions in one CPI.
const BATCH: u8 = 255;
/// The real program puts at most this many transfers in one `Batch`.
const BATCH_CHUNK: usize = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    Spl,
    Token2022,
}

impl TokenKind {
    pub fn of(program: &Pubkey) -> Result<TokenKind, ProgramError> {
        if *program == SPL_TOKEN {
            Ok(TokenKind::Spl)
        } else if *program == TOKEN_2022 {
            Ok(TokenKind::Token2022)
        } else {
            Err(fail(
                ChannelsError::InvalidMintTokenProgram,
                "the token program is neither SPL Token nor Token-2022",
            ))
        }
    }

    fn id(self) -> Pubkey {
        match self {
            TokenKind::Spl => SPL_TOKEN,
            TokenKind::Token2022 => TOKEN_2022,
        }
    }
}

/// Why a TLV trailer is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExtensionError {
    Malformed,
    Unsupported,
}

/// Walks a TLV trailer: a zero type ends it; a lone trailing byte must be zero; every type
/// must be allowed and every length must fit.
fn scan_extensions(mut rest: &[u8], allowed: impl Fn(u16) -> bool) -> Result<(), ExtensionError> {
    loop {
        if rest.len() < 2 {
            return if rest.iter().all(|b| *b == 0) {
                Ok(())
            } else {
                Err(ExtensionError::Malformed)
            };
        }
        let kind = u16::from_le_bytes([rest[0], rest[1]]);
        if kind == 0 {
            return Ok(());
        }
        if rest.len() < 4 {
            return Err(ExtensionError::Malformed);
        }
        if !(kind == IMMUTABLE_OWNER || MINT_EXTENSIONS.contains(&kind)) {
            // Not a type the program knows at all.
            return Err(ExtensionError::Unsupported);
        }
        if !allowed(kind) {
            return Err(ExtensionError::Unsupported);
        }
        let len = usize::from(u16::from_le_bytes([rest[2], rest[3]]));
        let next = 4usize.checked_add(len).ok_or(ExtensionError::Malformed)?;
        rest = rest.get(next..).ok_or(ExtensionError::Malformed)?;
    }
}

/// Token-2022's rule for an account of a base type with extensions: exactly the base length,
/// or longer with the right account-type byte at 165.
fn token_2022_type_ok(data: &[u8], base: usize, account_type: u8) -> bool {
    data.len() == base || (data.len() > ACCOUNT_TYPE_AT && data[ACCOUNT_TYPE_AT] == account_type)
}

/// The mint and token program of an instruction, checked.
pub struct TokenContext<'s, 'a> {
    pub kind: TokenKind,
    pub mint: &'s AccountInfo<'a>,
    pub program: &'s AccountInfo<'a>,
    pub decimals: u8,
}

impl<'s, 'a> TokenContext<'s, 'a> {
    /// The token program must be SPL Token or Token-2022 (54); the mint must parse as its
    /// mint (53); a Token-2022 mint's padding must be zero (55) and its extensions allowed
    /// (56).
    pub fn new(
        mint: &'s AccountInfo<'a>,
        program: &'s AccountInfo<'a>,
    ) -> Result<TokenContext<'s, 'a>, ProgramError> {
        let kind = TokenKind::of(program.key)?;
        let data = mint.try_borrow_data()?;
        let parses = *mint.owner == kind.id()
            && match kind {
                TokenKind::Spl => data.len() == MINT_LEN,
                TokenKind::Token2022 => {
                    data.len() >= MINT_LEN && token_2022_type_ok(&data, MINT_LEN, ACCOUNT_TYPE_MINT)
                }
            };
        if !parses {
            return Err(fail(
                ChannelsError::MintAccountMismatch,
                "the mint does not parse for the token program",
            ));
        }
        let decimals = data[DECIMALS_AT];
        if kind == TokenKind::Token2022 && data.len() > MINT_LEN {
            if data[MINT_LEN..ACCOUNT_TYPE_AT].iter().any(|b| *b != 0) {
                return Err(fail(
                    ChannelsError::MalformedMintTokenAccountData,
                    "the mint's padding is not zero",
                ));
            }
            scan_extensions(&data[TLV_START..], |k| MINT_EXTENSIONS.contains(&k)).map_err(
                |_| {
                    fail(
                        ChannelsError::MalformedMintTokenExtensions,
                        "the mint carries an extension the program refuses",
                    )
                },
            )?;
        }
        drop(data);
        Ok(TokenContext {
            kind,
            mint,
            program,
            decimals,
        })
    }

    /// The canonical associated token account of `owner` for this mint and program.
    pub fn ata(&self, owner: &Pubkey) -> Pubkey {
        ata(owner, self.program.key, self.mint.key)
    }

    /// Only the address: what the program checks of an account it creates or pays nothing.
    pub fn check_address(&self, account: &AccountInfo, owner: &Pubkey) -> Result<(), Invalid> {
        if *account.key == self.ata(owner) {
            Ok(())
        } else {
            Err(Invalid::Address)
        }
    }

    /// The address, then a token account of this mint owned by `owner`, initialized (not
    /// frozen), with no extension but ImmutableOwner.
    pub fn check_account(&self, account: &AccountInfo, owner: &Pubkey) -> Result<(), Invalid> {
        self.check_address(account, owner)?;
        let data = account.try_borrow_data().map_err(|_| Invalid::Malformed)?;
        let parses = *account.owner == self.kind.id()
            && match self.kind {
                TokenKind::Spl => data.len() == ACCOUNT_LEN,
                TokenKind::Token2022 => {
                    data.len() >= ACCOUNT_LEN
                        && token_2022_type_ok(&data, ACCOUNT_LEN, ACCOUNT_TYPE_ACCOUNT)
                }
            };
        if !parses {
            return Err(Invalid::Malformed);
        }
        if data[STATE_AT] != STATE_INITIALIZED {
            return Err(Invalid::NotInitialized);
        }
        if data[..32] != self.mint.key.to_bytes() || data[32..64] != owner.to_bytes() {
            return Err(Invalid::Owner);
        }
        if self.kind == TokenKind::Token2022 && data.len() > ACCOUNT_LEN {
            scan_extensions(&data[TLV_START..], |k| k == IMMUTABLE_OWNER)
                .map_err(Invalid::Extension)?;
        }
        Ok(())
    }

    /// A checked token account's balance.
    pub fn amount(&self, account: &AccountInfo) -> Result<u64, ProgramError> {
        let data = account.try_borrow_data()?;
        data.get(64..72)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
            .ok_or_else(|| {
                fail(
                    ChannelsError::MalformedMintTokenAccountData,
                    "unreadable token account",
                )
            })
    }
}

pub fn ata(owner: &Pubkey, token_program: &Pubkey, mint: &Pubkey) -> Pubkey {
    Pubkey::find_program_address(
        &[owner.as_ref(), token_program.as_ref(), mint.as_ref()],
        &ASSOCIATED_TOKEN,
    )
    .0
}

/// Why a token account is not acceptable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Invalid {
    Address,
    Owner,
    NotInitialized,
    Malformed,
    Extension(ExtensionError),
}

/// Whose token account it is: each role has its own error numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The escrow (the channel's own account).
    Escrow,
    Payer,
    Payee,
    Recipient,
    Treasury,
}

impl Role {
    /// The error a checked account of this role fails with. The escrow and treasury count
    /// an uninitialized account as a mismatch; the payees as an invalid account, except the
    /// payer, whose address, owner and state errors are all a mismatch (57).
    pub fn error(self, why: Invalid) -> ChannelsError {
        use ChannelsError as E;
        use Invalid as I;
        match (self, why) {
            (Role::Escrow, I::Address | I::Owner | I::NotInitialized) => E::ChannelAccountMismatch,
            (Role::Escrow, I::Malformed) => E::InvalidChannelTokenAccount,
            (Role::Escrow, I::Extension(_)) => E::InvalidChannelTokenExtensions,
            (Role::Treasury, I::Address | I::Owner | I::NotInitialized) => {
                E::TreasuryAccountMismatch
            }
            (Role::Treasury, I::Malformed) => E::InvalidTreasuryTokenAccount,
            (Role::Treasury, I::Extension(_)) => E::InvalidTreasuryTokenExtensions,
            (Role::Payer, I::Address | I::Owner | I::NotInitialized) => E::PayerAccountMismatch,
            (Role::Payer, I::Malformed) => E::InvalidPayerTokenAccount,
            (Role::Payer, I::Extension(_)) => E::InvalidPayerTokenExtensions,
            (Role::Payee, I::Address | I::Owner) => E::PayeeAccountMismatch,
            (Role::Payee, I::Malformed | I::NotInitialized) => E::InvalidPayeeTokenAccount,
            (Role::Payee, I::Extension(_)) => E::InvalidPayeeTokenExtensions,
            (Role::Recipient, I::Address | I::Owner) => E::RecipientAccountMismatch,
            (Role::Recipient, I::Malformed | I::NotInitialized) => E::InvalidRecipientTokenAccount,
            (Role::Recipient, I::Extension(_)) => E::InvalidRecipientTokenExtensions,
        }
    }

    /// `check_account`, failing with this role's error.
    pub fn check(
        self,
        ctx: &TokenContext,
        account: &AccountInfo,
        owner: &Pubkey,
    ) -> Result<(), ProgramError> {
        ctx.check_account(account, owner)
            .map_err(|why| fail(self.error(why), &format!("{self:?} token account: {why:?}")))
    }
}

fn transfer_checked_ix(
    ctx: &TokenContext,
    from: &Pubkey,
    to: &Pubkey,
    authority: &Pubkey,
    amount: u64,
) -> Instruction {
    transfer_checked_instruction(
        ctx.program.key,
        [from, ctx.mint.key, to, authority],
        amount,
        ctx.decimals,
    )
}

/// The token program's `TransferChecked` of `amount` in `decimals` (SPL Token and Token-2022
/// alike): [source, mint, destination, authority (signer)].
pub fn transfer_checked_instruction(
    program: &Pubkey,
    [from, mint, to, authority]: [&Pubkey; 4],
    amount: u64,
    decimals: u8,
) -> Instruction {
    let mut data = Vec::with_capacity(10);
    data.push(TRANSFER_CHECKED);
    data.extend_from_slice(&amount.to_le_bytes());
    data.push(decimals);
    Instruction {
        program_id: *program,
        accounts: vec![
            AccountMeta::new(*from, false),
            AccountMeta::new_readonly(*mint, false),
            AccountMeta::new(*to, false),
            AccountMeta::new_readonly(*authority, true),
        ],
        data,
    }
}

/// `TransferChecked` of `amount` from `from` to `to`, authorized by `authority` (a signer
/// of the transaction, or the channel with `seeds`).
pub fn transfer_checked<'a>(
    ctx: &TokenContext<'_, 'a>,
    from: &AccountInfo<'a>,
    to: &AccountInfo<'a>,
    authority: &AccountInfo<'a>,
    amount: u64,
    seeds: Option<&SignerSeeds>,
) -> Result<(), ProgramError> {
    let ix = transfer_checked_ix(ctx, from.key, to.key, authority.key, amount);
    let infos = [
        from.clone(),
        ctx.mint.clone(),
        to.clone(),
        authority.clone(),
        ctx.program.clone(),
    ];
    match seeds {
        Some(s) => invoke_signed(&ix, &infos, &[&s.as_seeds()]),
        None => invoke_signed(&ix, &infos, &[]),
    }
}

/// The real program's SPL Token payouts when there are two or more: p-token's `Batch`, at
/// most eight transfers per CPI. Each transfer is announced by its account count and data
/// length; the accounts are concatenated.
pub fn batch_transfers<'a>(
    ctx: &TokenContext<'_, 'a>,
    escrow: &AccountInfo<'a>,
    channel: &AccountInfo<'a>,
    payouts: &[(AccountInfo<'a>, u64)],
    seeds: &SignerSeeds,
) -> Result<(), ProgramError> {
    for chunk in payouts.chunks(BATCH_CHUNK) {
        let mut data = vec![BATCH];
        let mut accounts = Vec::with_capacity(chunk.len() * 4);
        let mut infos = vec![
            ctx.program.clone(),
            escrow.clone(),
            ctx.mint.clone(),
            channel.clone(),
        ];
        for (to, amount) in chunk {
            let ix = transfer_checked_ix(ctx, escrow.key, to.key, channel.key, *amount);
            data.push(ix.accounts.len() as u8);
            data.push(ix.data.len() as u8);
            data.extend_from_slice(&ix.data);
            accounts.extend(ix.accounts);
            infos.push(to.clone());
        }
        let ix = Instruction {
            program_id: *ctx.program.key,
            accounts,
            data,
        };
        invoke_signed(&ix, &infos, &[&seeds.as_seeds()])?;
    }
    Ok(())
}

/// `CloseAccount` of the escrow, its rent to `destination`, signed by the channel.
pub fn close_account<'a>(
    ctx: &TokenContext<'_, 'a>,
    escrow: &AccountInfo<'a>,
    destination: &AccountInfo<'a>,
    channel: &AccountInfo<'a>,
    seeds: &SignerSeeds,
) -> Result<(), ProgramError> {
    let ix = Instruction {
        program_id: *ctx.program.key,
        accounts: vec![
            AccountMeta::new(*escrow.key, false),
            AccountMeta::new(*destination.key, false),
            AccountMeta::new_readonly(*channel.key, true),
        ],
        data: vec![CLOSE_ACCOUNT],
    };
    let infos = [
        escrow.clone(),
        destination.clone(),
        channel.clone(),
        ctx.program.clone(),
    ];
    invoke_signed(&ix, &infos, &[&seeds.as_seeds()])
}

/// The associated token account program's `CreateIdempotent` (data `[1]`): the escrow,
/// owned by the channel, funded by the rent payer.
pub fn create_idempotent<'a>(
    ctx: &TokenContext<'_, 'a>,
    funder: &AccountInfo<'a>,
    account: &AccountInfo<'a>,
    wallet: &AccountInfo<'a>,
    system: &AccountInfo<'a>,
    ata_program: &AccountInfo<'a>,
) -> Result<(), ProgramError> {
    let ix = Instruction {
        program_id: ASSOCIATED_TOKEN,
        accounts: vec![
            AccountMeta::new(*funder.key, true),
            AccountMeta::new(*account.key, false),
            AccountMeta::new_readonly(*wallet.key, false),
            AccountMeta::new_readonly(*ctx.mint.key, false),
            AccountMeta::new_readonly(*system.key, false),
            AccountMeta::new_readonly(*ctx.program.key, false),
        ],
        data: vec![1],
    };
    let infos = [
        funder.clone(),
        account.clone(),
        wallet.clone(),
        ctx.mint.clone(),
        system.clone(),
        ctx.program.clone(),
        ata_program.clone(),
    ];
    invoke_signed(&ix, &infos, &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extension_trailers_are_read_as_the_program_reads_them() {
        let mint_ok = |k: u16| MINT_EXTENSIONS.contains(&k);
        assert_eq!(scan_extensions(&[], mint_ok), Ok(()));
        assert_eq!(scan_extensions(&[0], mint_ok), Ok(()));
        assert_eq!(
            scan_extensions(&[0xff], mint_ok),
            Err(ExtensionError::Malformed)
        );
        assert_eq!(
            scan_extensions(&[18, 0], mint_ok),
            Err(ExtensionError::Malformed)
        );
        assert_eq!(scan_extensions(&[18, 0, 2, 0, 1, 2], mint_ok), Ok(()));
        assert_eq!(
            scan_extensions(&[18, 0, 8, 0, 1, 2], mint_ok),
            Err(ExtensionError::Malformed)
        );
        assert_eq!(
            scan_extensions(&[1, 0, 0, 0], mint_ok),
            Err(ExtensionError::Unsupported)
        );
        assert_eq!(
            scan_extensions(&[7, 0, 0, 0], mint_ok),
            Err(ExtensionError::Unsupported)
        );
        assert_eq!(
            scan_extensions(&[7, 0, 0, 0], |k| k == IMMUTABLE_OWNER),
            Ok(())
        );
        assert_eq!(
            scan_extensions(&[0, 0, 0xff, 0xff], mint_ok),
            Ok(()),
            "a zero type ends the trailer"
        );
    }
}
