//! Which token program a mint belongs to: its id, the associated token accounts. Below
//! `chain`, which reads a mint's program, and `settle`, which pays with it.

use crate::error::ClientError;
use anchor_lang::prelude::Pubkey;
use anchor_spl::token::spl_token;
use anchor_spl::token_2022::spl_token_2022;

/// The token program that owns a mint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenProgram {
    SplToken,
    Token2022,
}

impl TokenProgram {
    pub fn id(self) -> Pubkey {
        match self {
            TokenProgram::SplToken => spl_token::ID,
            TokenProgram::Token2022 => spl_token_2022::ID,
        }
    }

    /// The token program owning an account (a mint), or an error naming `field`.
    pub fn of_owner(owner: &Pubkey, field: &str) -> Result<Self, ClientError> {
        if *owner == spl_token::ID {
            Ok(TokenProgram::SplToken)
        } else if *owner == spl_token_2022::ID {
            Ok(TokenProgram::Token2022)
        } else {
            Err(ClientError::input(
                field,
                format!("owned by {owner}, which is neither SPL Token nor Token-2022"),
            ))
        }
    }

    /// The associated token account of `owner` for `mint` under this program.
    pub fn associated_account(self, owner: &Pubkey, mint: &Pubkey) -> Pubkey {
        anchor_spl::associated_token::get_associated_token_address_with_program_id(
            owner,
            mint,
            &self.id(),
        )
    }
}
