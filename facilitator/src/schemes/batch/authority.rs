//! Who may end or claim a session, besides its payer's vouchers:
//!
//! - a server's own payloads (`claim`, `settle`, `seal`) come only from a service this
//!   facilitator trusts (`TRUSTED_SERVICE_KEYS`), which signs the request
//!   (`X-Service-Authorization`: `trust_gate_x402::sign_service_request`);
//! - a cooperative close (a client's `refund`, a server's `seal`) carries the receiver
//!   authorizer's `CloseAuthorization` of exactly that close: the key bound into the channel
//!   at its open (its binding Memo, kept in the session), over the network, the program, this
//!   facilitator, the channel and the amount, good only until its `validBefore`, at most
//!   `maxTimeoutSeconds` ahead (specification sections 3 and 4.2). Without it, anyone who read
//!   the open transaction could end a payer's session.

use super::Batch;
use super::Offer;
use crate::reject::{Reason, Rejection};
use crate::service::Facilitator;
use crate::sessions::Session;
use axum::http::HeaderMap;
use solana_sdk::pubkey::Pubkey;
use trust_gate_client::simulate::now_unix;
use trust_gate_x402 as x402;
use trust_gate_x402::batch::{CloseAuthorization, CloseTerms};

impl Batch {
    /// The trusted service that signed this request to `path`, or why none did.
    pub fn service_caller(
        f: &Facilitator,
        headers: &HeaderMap,
        path: &str,
        body: &[u8],
    ) -> Result<Pubkey, String> {
        let header = headers
            .get(x402::X_SERVICE_AUTHORIZATION)
            .ok_or_else(|| format!("it carries no {}", x402::X_SERVICE_AUTHORIZATION))?
            .to_str()
            .map_err(|_| format!("{} is not text", x402::X_SERVICE_AUTHORIZATION))?;
        let skew = i64::try_from(f.settings.clock_skew.as_secs()).unwrap_or(i64::MAX);
        x402::service_request_signer(
            header,
            path,
            body,
            now_unix(),
            skew,
            &f.settings.trusted_services,
        )
    }

    /// Checks that `auth` is the channel's bound receiver authorizer's consent to close `s` at
    /// `max_claimable` under the offer `o` on `network`, now.
    pub(crate) fn check_close_authorization(
        f: &Facilitator,
        s: &Session,
        o: &Offer,
        network: &str,
        max_claimable: u64,
        auth: Option<&CloseAuthorization>,
        max_timeout_seconds: u64,
    ) -> Result<(), Rejection> {
        let refuse = |m: String| Rejection::new(Reason::BatchCloseAuthorization, m);
        // The binding: the key the open's binding Memo named, which the deposit's checks
        // kept; the offer must name the same.
        if s.config.receiver_authorizer != o.extra.receiver_authorizer {
            return Err(Rejection::new(
                Reason::BatchReceiverAuthorizerMismatch,
                format!(
                    "channel {} is bound to receiver authorizer {}, not extra.receiverAuthorizer {}",
                    s.channel, s.config.receiver_authorizer, o.extra.receiver_authorizer
                ),
            ));
        }
        let Some(auth) = auth else {
            return Err(refuse(format!(
                "a close of channel {} carries closeAuthorization, the receiver authorizer's signature of it (the resource server adds it)",
                s.channel
            )));
        };
        let Some(signature) = auth.signature.as_deref() else {
            return Err(refuse(
                "closeAuthorization.signature is missing: this facilitator takes no delegated close".into(),
            ));
        };
        let now = now_unix();
        let latest = now.saturating_add(i64::try_from(max_timeout_seconds).unwrap_or(i64::MAX));
        if now >= auth.valid_before || auth.valid_before > latest {
            return Err(refuse(format!(
                "closeAuthorization.validBefore is {}; it is after now ({now}) and at most maxTimeoutSeconds ahead ({latest})",
                auth.valid_before
            )));
        }
        let fee_payer = f.facilitator();
        let terms = CloseTerms {
            network,
            fee_payer: &fee_payer,
            channel: &s.channel,
            max_claimable,
            valid_before: auth.valid_before,
        };
        let bound: Pubkey = s
            .config
            .receiver_authorizer
            .parse()
            .map_err(|_| refuse("the channel's receiver authorizer is not a key".into()))?;
        if !terms.signed_by(signature, &bound) {
            return Err(refuse(format!(
                "closeAuthorization is not {bound}'s signature of closing channel {} at {max_claimable} before {}",
                s.channel, auth.valid_before
            )));
        }
        Ok(())
    }
}
