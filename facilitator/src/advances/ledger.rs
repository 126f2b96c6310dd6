//! The ledger of what the facilitator advanced: for each channel it sponsors (its rent payer
//! and fee payer), whose open it was, which scheme's, and the lamports of rent it holds (the
//! channel's, the escrow's, the gate record's). In the store (see [`crate::store`]), so that
//! every replica counts the same: one hash, a field a channel, its JSON; a reservation checks
//! the bounds and writes in one step, so two replicas cannot both take the last place.

use crate::store::{Rule, Store, StoreUnavailable};
use serde::{Deserialize, Serialize};
use solana_sdk::pubkey::Pubkey;
use std::collections::HashMap;

const KEY: &str = "trust-gate:advances";

/// Which scheme a channel is: each counts against its own bound per payer wallet, so that a
/// wallet with a session open can still pay an `upto` request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChannelKind {
    Upto,
    Session,
}

/// What the facilitator advanced for one channel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Advance {
    /// The channel's payer wallet (the open's signer).
    pub payer: String,
    pub kind: ChannelKind,
    /// The rent the facilitator holds in it now (an estimate until the open is read).
    pub lamports: u64,
    /// Not closed yet: counted against its payer.
    pub open: bool,
    /// When it was reserved (unix seconds): a reservation not yet on chain is kept this long
    /// by a rebuild from the chain.
    pub reserved_at: i64,
}

/// The bounds a reservation must stay within.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Unclosed channels of one payer wallet and kind.
    pub per_payer: usize,
    /// Lamports of rent advanced in all.
    pub total: u64,
}

/// Why a reservation was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Full {
    /// The payer has `open` unclosed channels of this kind already.
    Payer { open: usize },
    /// `advanced` lamports are out already.
    Total { advanced: u64 },
    /// The channel has a reservation (a second deposit of the same open).
    Exists,
}

/// Whether `entries` admit one more channel of `payer` and `kind` holding `lamports`.
pub fn admits<'a>(
    entries: impl IntoIterator<Item = &'a Advance>,
    payer: &str,
    kind: ChannelKind,
    lamports: u64,
    bounds: Bounds,
) -> Result<(), Full> {
    let (mut open, mut advanced) = (0usize, 0u64);
    for e in entries {
        advanced = advanced.saturating_add(e.lamports);
        if e.open && e.kind == kind && e.payer == payer {
            open += 1;
        }
    }
    if open >= bounds.per_payer {
        return Err(Full::Payer { open });
    }
    if advanced.saturating_add(lamports) > bounds.total {
        return Err(Full::Total { advanced });
    }
    Ok(())
}

impl Full {
    /// As the reservation rule answers it (in either backend).
    fn answer(&self) -> String {
        match self {
            Full::Payer { open } => format!("payer:{open}"),
            Full::Total { advanced } => format!("total:{advanced}"),
            Full::Exists => "exists".into(),
        }
    }

    fn of_answer(answer: &str) -> Full {
        let number = |s: &str| s.parse::<u64>().unwrap_or(u64::MAX);
        match answer.split_once(':') {
            Some(("payer", n)) => Full::Payer {
                open: number(n) as usize,
            },
            Some(("total", n)) => Full::Total {
                advanced: number(n),
            },
            _ => Full::Exists,
        }
    }
}

/// [`admits`] and the write, as Redis runs it: "ok", "exists", "payer:<open>" or
/// "total:<advanced>". ARGV: channel, entry JSON, payer, kind, per-payer bound, total bound,
/// lamports. (Lua numbers are doubles: exact to 2^53 lamports, 9 million SOL.)
const RESERVE: &str = r"
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 'exists' end
local open, advanced = 0, 0
for _, v in ipairs(redis.call('HVALS', KEYS[1])) do
  local e = cjson.decode(v)
  advanced = advanced + e.lamports
  if e.open and e.payer == ARGV[3] and e.kind == ARGV[4] then open = open + 1 end
end
if open >= tonumber(ARGV[5]) then return 'payer:' .. open end
if advanced + tonumber(ARGV[7]) > tonumber(ARGV[6]) then
  return 'total:' .. string.format('%.0f', advanced)
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 'ok'";

pub struct Ledger {
    /// When this process last rebuilt it from the chain (unix seconds).
    rebuilt_at: std::sync::atomic::AtomicI64,
    store: Store,
    reserve: redis::Script,
}

impl Ledger {
    pub fn new(store: Store) -> Self {
        Ledger {
            rebuilt_at: std::sync::atomic::AtomicI64::new(0),
            store,
            reserve: redis::Script::new(RESERVE),
        }
    }

    /// Whether a rebuild is due at `now` (every `every` seconds), and if so, takes it.
    pub fn rebuild_due(&self, now: i64, every: i64) -> bool {
        use std::sync::atomic::Ordering;
        let last = self.rebuilt_at.load(Ordering::Relaxed);
        now.saturating_sub(last) >= every
            && self
                .rebuilt_at
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }

    /// Reserves `channel` for `advance` within `bounds` (checked and written in one step).
    pub async fn reserve(
        &self,
        channel: &Pubkey,
        advance: &Advance,
        bounds: Bounds,
    ) -> Result<Result<(), Full>, StoreUnavailable> {
        let kind = serde_json::to_value(advance.kind)
            .ok()
            .and_then(|k| k.as_str().map(String::from))
            .unwrap_or_default();
        let args = [
            advance.payer.clone(),
            kind,
            bounds.per_payer.to_string(),
            bounds.total.to_string(),
            advance.lamports.to_string(),
        ];
        let check = |values: &[String]| {
            let entries: Vec<Advance> = values
                .iter()
                .filter_map(|v| serde_json::from_str(v).ok())
                .collect();
            admits(
                &entries,
                &advance.payer,
                advance.kind,
                advance.lamports,
                bounds,
            )
            .map_err(|full| full.answer())
        };
        let rule = Rule {
            script: &self.reserve,
            args: &args,
            check: &check,
        };
        let json = serde_json::to_string(advance).unwrap_or_default();
        let answer = self
            .store
            .insert_admitted(KEY, &channel.to_string(), &json, &rule)
            .await?;
        Ok(answer.map_err(|a| Full::of_answer(&a)))
    }

    /// Changes `channel`'s entry with `f`, if it is there (a closed or settled channel whose
    /// reservation a rebuild already dropped is not written back).
    pub async fn update(
        &self,
        channel: &Pubkey,
        f: impl FnOnce(&mut Advance),
    ) -> Result<(), StoreUnavailable> {
        let field = channel.to_string();
        let raw = self.store.entry(KEY, &field).await?;
        let Some(mut e) = raw.and_then(|s| serde_json::from_str::<Advance>(&s).ok()) else {
            return Ok(());
        };
        f(&mut e);
        let json = serde_json::to_string(&e).unwrap_or_default();
        self.store.replace_entry(KEY, &field, &json).await.map(drop)
    }

    /// Writes `channel`'s entry as the chain shows it (a rebuild).
    pub async fn put(&self, channel: &Pubkey, advance: &Advance) -> Result<(), StoreUnavailable> {
        let json = serde_json::to_string(advance).unwrap_or_default();
        self.store.put_entry(KEY, &channel.to_string(), &json).await
    }

    /// Forgets `channel` (its rent all back, or its open never sent).
    pub async fn remove(&self, channel: &Pubkey) -> Result<(), StoreUnavailable> {
        self.store.remove_entry(KEY, &channel.to_string()).await
    }

    /// Every entry.
    pub async fn all(&self) -> Result<HashMap<Pubkey, Advance>, StoreUnavailable> {
        Ok(self
            .store
            .entries(KEY)
            .await?
            .into_iter()
            .filter_map(|(k, v)| Some((k.parse().ok()?, serde_json::from_str(&v).ok()?)))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn advance(payer: &str, kind: ChannelKind, lamports: u64, open: bool) -> Advance {
        Advance {
            payer: payer.into(),
            kind,
            lamports,
            open,
            reserved_at: 0,
        }
    }

    #[test]
    fn a_payer_gets_its_bound_per_kind_and_all_payers_the_total() {
        let bounds = Bounds {
            per_payer: 2,
            total: 10,
        };
        let entries = [
            advance("a", ChannelKind::Session, 3, true),
            advance("a", ChannelKind::Session, 3, true),
            advance("a", ChannelKind::Upto, 1, false),
        ];
        assert_eq!(
            admits(&entries, "a", ChannelKind::Session, 1, bounds),
            Err(Full::Payer { open: 2 })
        );
        // The other kind, another payer: in, while the total holds.
        assert_eq!(admits(&entries, "a", ChannelKind::Upto, 3, bounds), Ok(()));
        assert_eq!(
            admits(&entries, "b", ChannelKind::Session, 3, bounds),
            Ok(())
        );
        assert_eq!(
            admits(&entries, "b", ChannelKind::Session, 4, bounds),
            Err(Full::Total { advanced: 7 })
        );
    }

    #[tokio::test]
    async fn in_process_a_reservation_is_taken_once_and_changed_in_place() {
        let l = Ledger::new(crate::store::open(None).unwrap());
        let bounds = Bounds {
            per_payer: 1,
            total: 100,
        };
        let (a, b) = (Pubkey::new_unique(), Pubkey::new_unique());
        let e = advance("p", ChannelKind::Upto, 10, true);
        assert_eq!(l.reserve(&a, &e, bounds).await.unwrap(), Ok(()));
        assert_eq!(l.reserve(&a, &e, bounds).await.unwrap(), Err(Full::Exists));
        assert_eq!(
            l.reserve(&b, &e, bounds).await.unwrap(),
            Err(Full::Payer { open: 1 })
        );
        l.update(&a, |e| e.open = false).await.unwrap();
        assert_eq!(l.reserve(&b, &e, bounds).await.unwrap(), Ok(()));
        l.remove(&a).await.unwrap();
        assert_eq!(l.all().await.unwrap().len(), 1);
    }
}
