use crate::engine::reservation::{self, Counted, Reservation};
use crate::engine::{LimitUpdate, PayeeDay};
use crate::state::{seeds, PolicyAccount, VelocityLedger};
use anchor_lang::prelude::*;

/// What the gate gives back: `amount` of a reservation the engine counted for `payer_asset`'s
/// policy `policy_id` and payee `payee_asset`, in the windows of `reserved_at`.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReleaseArgs {
    pub payer_asset: Pubkey,
    pub policy_id: u32,
    pub payee_asset: Pubkey,
    pub amount: u64,
    pub day_index: i64,
    pub week_index: i64,
    pub month_index: i64,
    pub reserved_at: i64,
}

#[derive(Accounts)]
pub struct ReleaseReservation<'info> {
    /// The gate's `["evaluate_signer"]` PDA, as for an evaluation: only the gate, which
    /// keeps what it reserved (its ChannelRecord), can give a reservation back.
    #[account(address = seeds::GATE_EVALUATE_SIGNER_ADDRESS)]
    pub gate_signer: Signer<'info>,
    /// The payer's policy, read and written in place as `evaluate_and_commit`
    /// does (its stored asset and policy id stand for its seeds).
    /// CHECK: verified as described above.
    #[account(mut)]
    pub policy: UncheckedAccount<'info>,
    /// The payer's VelocityLedger (its stored asset and policy id stand for its seeds). An
    /// `Account`, written back by Anchor on exit: a channel's close is not a settlement's hot
    /// path, and so the IDL describes the ledger's layout (the evaluations read it in place).
    #[account(mut)]
    pub velocity: Account<'info, VelocityLedger>,
}

/// Credits `args.amount` back to the counters that still count the reservation's windows
/// (`engine::reservation`). A retired policy is credited too: its counters no longer
/// decide anything, and refusing would keep the gate's record from closing.
pub fn release_reservation(mut ctx: Context<ReleaseReservation>, args: ReleaseArgs) -> Result<()> {
    let a = &mut ctx.accounts;
    let policy = PolicyAccount::read(&a.policy)?;
    require!(
        policy.is_for(&args.payer_asset, args.policy_id),
        ErrorCode::ConstraintSeeds
    );
    let velocity = &a.velocity;
    require!(
        velocity.is_for(&args.payer_asset, args.policy_id),
        ErrorCode::ConstraintSeeds
    );
    let limits = policy.limits.as_ref().map(|l| l.counters());
    let payee_day = match policy.rules() {
        Some(r) if r.payee_daily_cap != 0 => {
            PolicyAccount::payee_day_in(&a.policy.try_borrow_data()?, &args.payee_asset)
        }
        _ => PayeeDay::default(),
    };
    let credited = reservation::credit(
        &Reservation {
            payee: args.payee_asset,
            day_index: args.day_index,
            week_index: args.week_index,
            month_index: args.month_index,
            reserved_at: args.reserved_at,
        },
        args.amount,
        &Counted {
            spending: policy.counters(),
            limits,
            payee_day,
            velocity: velocity.state(),
        },
    );
    let mut data = a.policy.try_borrow_mut_data()?;
    PolicyAccount::write_counters(&mut data, &credited.spending);
    if let Some(counters) = credited.limits {
        PolicyAccount::write_limits(
            &mut data,
            &LimitUpdate {
                counters,
                slot: credited.slot,
            },
        );
    }
    drop(data);
    a.velocity.store(credited.velocity);
    Ok(())
}
