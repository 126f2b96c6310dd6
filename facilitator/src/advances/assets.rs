//! The mints the plain channel schemes (`upto`, `batch-settlement`) take. No policy decides a
//! plain payment, so the facilitator sponsors channels only in assets its operator chose: by
//! default those a stock x402 client pays by default on the network (`@x402/svm` 2.27's
//! default assets), the demo world's mints on a localnet (set by `trust-gate up`), or the list
//! `PLAIN_ASSETS` names. The gated schemes take any mint the payer's policy allows.

use crate::reject::{Reason, Rejection};
use solana_sdk::pubkey::Pubkey;
use trust_gate_client::Network;

/// Which mints the plain schemes take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlainAssets {
    /// The network's stock assets ([`stock`]).
    Stock,
    /// Exactly these (`PLAIN_ASSETS`).
    List(Vec<Pubkey>),
}

/// `@x402/svm` 2.27's default assets of `network`: USDC, USDT, USDG, PYUSD and CASH on
/// mainnet; USDC, USDG and PYUSD on devnet; none on a localnet (its mints are its own).
pub fn stock(network: Network) -> &'static [&'static str] {
    match network {
        Network::Mainnet => &[
            "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
            "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB",
            "2u1tszSeqZ3qBWF3uNGPFc8TzMk2tdiwknnRMWGWjGWH",
            "2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo",
            "CASHx9KJUStyftLFWGvEVf59SGeG9sh5FfcnZMVPCASH",
        ],
        Network::Devnet => &[
            "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
            "4F6PM96JJxngmHnZLBh9n58RH4aTVNWvDs2nuwrT5BP7",
            "CXk2AMBfi3TwaEL2468s6zP8xq9NxTXjp9gjMgzeUynM",
        ],
        Network::Localnet => &[],
    }
}

impl PlainAssets {
    /// Whether a plain offer in `mint` is taken on `network`.
    pub fn takes(&self, network: Network, mint: &Pubkey) -> bool {
        match self {
            PlainAssets::Stock => stock(network).contains(&mint.to_string().as_str()),
            PlainAssets::List(list) => list.contains(mint),
        }
    }

    /// The refusal of a plain offer in `mint` (400 naming `asset`).
    pub fn refusal(&self, network: Network, mint: &Pubkey, reason: Reason) -> Rejection {
        let which = match self {
            PlainAssets::Stock if stock(network).is_empty() => format!(
                "none by default on {} (PLAIN_ASSETS names them)",
                network.name()
            ),
            PlainAssets::Stock => {
                format!("{} (the network's stock assets)", stock(network).join(", "))
            }
            PlainAssets::List(l) => format!(
                "{} (PLAIN_ASSETS)",
                l.iter()
                    .map(|k| k.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        Rejection::new(
            reason,
            format!("asset {mint} is not one this facilitator sponsors plain channels in; it takes {which}"),
        )
        .hint("pay under the gated scheme, or in one of the assets named")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stock_assets_are_the_networks_and_a_list_is_exact() {
        let usdc: Pubkey = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
            .parse()
            .unwrap();
        assert!(PlainAssets::Stock.takes(Network::Mainnet, &usdc));
        assert!(!PlainAssets::Stock.takes(Network::Devnet, &usdc));
        assert!(!PlainAssets::Stock.takes(Network::Localnet, &usdc));
        for n in [Network::Mainnet, Network::Devnet] {
            for k in stock(n) {
                assert!(k.parse::<Pubkey>().is_ok(), "{k}");
            }
        }
        let mine = Pubkey::new_unique();
        let list = PlainAssets::List(vec![mine]);
        assert!(list.takes(Network::Mainnet, &mine) && !list.takes(Network::Mainnet, &usdc));
        let r = list.refusal(Network::Mainnet, &usdc, Reason::InvalidPayload);
        assert!(
            r.message.contains("asset") && r.message.contains("PLAIN_ASSETS"),
            "{}",
            r.message
        );
    }
}
