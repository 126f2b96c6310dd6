//! Sending: a transaction with preflight, waiting for it to land, the send timeout, and the
//! per-payer limit every scheme's settlement counts against.

use super::Facilitator;
use crate::limits::retry_after_secs;
use crate::redact;
use crate::reject::{Reason, Rejection};
use solana_commitment_config::CommitmentLevel;
use solana_rpc_client_api::config::RpcSendTransactionConfig;
use solana_sdk::pubkey::Pubkey;
use solana_sdk::signature::Signature;
use solana_sdk::signer::Signer;
use solana_sdk::transaction::{TransactionError, VersionedTransaction};
use std::time::{Duration, Instant};

/// A status read gets at least this long, even past the confirmation deadline.
const MIN_READ: Duration = Duration::from_millis(100);

/// What waiting for a sent transaction found.
pub(crate) enum Outcome {
    Landed(Result<(), TransactionError>),
    Pending,
}

/// The facilitator's signature of `tx`'s message, which is the transaction's id once sent:
/// Ed25519 is deterministic, so a retry of the same request names the same transaction.
pub(crate) fn co_signature(
    tx: &VersionedTransaction,
    keypair: &solana_sdk::signature::Keypair,
) -> Signature {
    keypair.sign_message(&tx.message.serialize())
}

impl Facilitator {
    /// Sends with preflight (the cluster's simulation, which refuses for free): `None` when
    /// sent or perhaps sent (no answer: it may have reached the cluster), else the
    /// simulation's error and logs.
    pub(crate) async fn send(
        &self,
        tx: &VersionedTransaction,
    ) -> Option<(TransactionError, Vec<String>)> {
        let signature = &tx.signatures[0];
        let config = RpcSendTransactionConfig {
            skip_preflight: false,
            preflight_commitment: Some(CommitmentLevel::Confirmed),
            ..RpcSendTransactionConfig::default()
        };
        let sent = tokio::time::timeout(
            self.settings.send_timeout,
            self.chain.rpc.send_transaction_with_config(tx, config),
        )
        .await;
        match sent {
            Ok(Ok(_)) => None,
            Ok(Err(e)) => preflight_failure(&e).or_else(|| {
                let error = redact::urls_in(&e.to_string());
                tracing::warn!(%signature, %error, "send unanswered; waiting for the outcome");
                None
            }),
            Err(_) => {
                tracing::warn!(%signature, "send not answered in time; waiting for the outcome");
                None
            }
        }
    }

    /// `work`'s answer, or 502 when the RPC has not given it within the send timeout.
    pub(crate) async fn within<T>(
        &self,
        work: impl std::future::Future<Output = Result<T, Rejection>>,
    ) -> Result<T, Rejection> {
        tokio::time::timeout(self.settings.send_timeout, work)
            .await
            .unwrap_or_else(|_| {
                Err(Rejection::rpc(format!(
                    "no answer within {} s",
                    self.settings.send_timeout.as_secs_f64()
                )))
            })
    }

    /// Counts one request of `key` (a payer agent, or a wallet opening a channel) against
    /// `RATE_LIMIT_PER_PAYER`; past it, 429 `payer_rate_limited` with `message()` (written
    /// only then) and a Retry-After.
    pub(crate) fn limit_payer(
        &self,
        key: &Pubkey,
        message: impl FnOnce() -> String,
    ) -> Result<(), Rejection> {
        self.limits.payer.check(key).map_err(|wait| {
            Rejection::new(Reason::PayerRateLimited, message())
                .retry_after(retry_after_secs(wait))
                .hint("retry after the Retry-After seconds")
        })
    }

    /// `Some(result)` once `signature` has landed: `Ok` or the transaction's error.
    pub(crate) async fn landed(
        &self,
        signature: &Signature,
    ) -> Result<Option<Result<(), TransactionError>>, Rejection> {
        let statuses = self
            .chain
            .rpc
            .get_signature_statuses(&[*signature])
            .await
            .map_err(|e| Rejection::rpc(e.to_string()))?
            .value;
        Ok(statuses.into_iter().flatten().next().map(|s| match s.err {
            None => Ok(()),
            Some(err) => Err(err),
        }))
    }

    /// Waits until `signature` lands: reads its status at once, then backs off from 2 ms,
    /// doubling up to 200 ms, for at most the confirmation timeout (a read that hangs is cut
    /// there too). A status read that fails (the RPC backend down for a moment) is retried
    /// like one that finds nothing yet: the transaction was sent, so until the deadline the
    /// only honest answers are its outcome or pending, never a failure the client would pay
    /// again for.
    pub(crate) async fn confirm(&self, signature: &Signature) -> Outcome {
        let deadline = Instant::now() + self.settings.confirm_timeout;
        let mut wait = Duration::from_millis(2);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left.max(MIN_READ), self.landed(signature)).await {
                Ok(Ok(Some(done))) => return Outcome::Landed(done),
                Ok(Ok(None)) => {}
                Ok(Err(e)) => {
                    tracing::warn!(%signature, error = %e.message, "status read failed; retrying")
                }
                Err(_) => tracing::warn!(%signature, "status read not answered in time"),
            }
            if Instant::now() >= deadline {
                return Outcome::Pending;
            }
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_millis(200));
        }
    }
}

/// The simulation error and logs of a send refused in preflight.
fn preflight_failure(
    e: &solana_rpc_client_api::client_error::Error,
) -> Option<(TransactionError, Vec<String>)> {
    use solana_rpc_client_api::client_error::ErrorKind;
    use solana_rpc_client_api::request::{RpcError, RpcResponseErrorData};
    let ErrorKind::RpcError(RpcError::RpcResponseError {
        data: RpcResponseErrorData::SendTransactionPreflightFailure(sim),
        ..
    }) = e.kind()
    else {
        return None;
    };
    let err = sim.err.clone()?;
    Some((err.into(), sim.logs.clone().unwrap_or_default()))
}
