//! How views write chain values in JSON, and the JSON Schemas that say so: a public key in
//! base58 ([`Key`]), a u64 amount as a decimal string ([`Amount`]: it exceeds JSON's safe
//! integers), a 32-byte hash in hex ([`Hash`]).
//!
//! Views hold these types, so what a view serializes and what its derived schema
//! (`schemars`) promises are the same thing: the MCP tools' output schemas come from them.
//! A field of a foreign type serialized by hand names the schema with
//! `#[schemars(with = "...")]`: [`Key`], [`Amount`] and [`Hash`] serve for that too.

use anchor_lang::prelude::Pubkey;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;

/// A public key, written in base58.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key(pub Pubkey);

impl Key {
    /// `None` for the all-zero key, which accounts store for "none".
    pub fn opt(k: &Pubkey) -> Option<Key> {
        (*k != Pubkey::default()).then_some(Key(*k))
    }

    /// The keys of a fixed list, without its empty (all-zero) slots.
    pub fn listed(keys: &[Pubkey]) -> Vec<Key> {
        keys.iter().filter_map(Key::opt).collect()
    }
}

impl From<Pubkey> for Key {
    fn from(k: Pubkey) -> Key {
        Key(k)
    }
}

impl From<&Pubkey> for Key {
    fn from(k: &Pubkey) -> Key {
        Key(*k)
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl Serialize for Key {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        let s = Cow::<str>::deserialize(d)?;
        s.parse()
            .map(Key)
            .map_err(|_| serde::de::Error::custom(format!("{s:?} is not a base58 public key")))
    }
}

impl JsonSchema for Key {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "Key".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "pattern": "^[1-9A-HJ-NP-Za-km-z]{32,44}$"})
    }
}

/// An amount in a mint's atomic units (or any u64), written as decimal digits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Amount(pub u64);

impl From<u64> for Amount {
    fn from(n: u64) -> Amount {
        Amount(n)
    }
}

impl std::fmt::Display for Amount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl Serialize for Amount {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Amount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Amount, D::Error> {
        let s = Cow::<str>::deserialize(d)?;
        // Digits only, as the schema's pattern says (`u64::from_str` also takes a `+`).
        s.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| s.parse().ok())
            .flatten()
            .map(Amount)
            .ok_or_else(|| {
                serde::de::Error::custom(format!("{s:?} is not a u64 in decimal digits"))
            })
    }
}

impl JsonSchema for Amount {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "Amount".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "pattern": "^[0-9]{1,20}$"})
    }
}

/// A 32-byte hash (a payment id hash, a capability), written as 64 lowercase hex characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Hash(pub [u8; 32]);

impl Hash {
    /// `None` for the all-zero hash, which accounts store for "none".
    pub fn opt(h: &[u8; 32]) -> Option<Hash> {
        (*h != [0u8; 32]).then_some(Hash(*h))
    }
}

impl std::fmt::Display for Hash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl Serialize for Hash {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Hash {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Hash, D::Error> {
        let s = Cow::<str>::deserialize(d)?;
        let bad = || serde::de::Error::custom(format!("{s:?} is not 64 hex characters"));
        // Hex digits only, as the schema's pattern says (`from_str_radix` also takes a `+`).
        if s.len() != 64 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
        }
        Ok(Hash(out))
    }
}

impl JsonSchema for Hash {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "Hash".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "pattern": "^[0-9a-fA-F]{64}$"})
    }
}

/// `#[serde(with = "json::key")]` on a [`Pubkey`] field: the same as [`Key`].
pub mod key {
    use super::*;

    pub fn serialize<S: Serializer>(k: &Pubkey, s: S) -> Result<S::Ok, S::Error> {
        Key(*k).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Pubkey, D::Error> {
        Key::deserialize(d).map(|k| k.0)
    }
}

/// `#[serde(with = "json::amount")]` on a u64 field: the same as [`Amount`].
pub mod amount {
    use super::*;

    pub fn serialize<S: Serializer>(n: &u64, s: S) -> Result<S::Ok, S::Error> {
        Amount(*n).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        Amount::deserialize(d).map(|n| n.0)
    }
}

/// `#[serde(with = "json::amount_opt")]` on an `Option<u64>` field.
pub mod amount_opt {
    use super::*;

    pub fn serialize<S: Serializer>(n: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        n.map(Amount).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        Ok(Option::<Amount>::deserialize(d)?.map(|n| n.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_and_bad_ones_are_named() {
        let k = Key(Pubkey::new_unique());
        let v = serde_json::to_value(k).unwrap();
        assert_eq!(v, serde_json::json!(k.0.to_string()));
        assert_eq!(serde_json::from_value::<Key>(v).unwrap(), k);
        let a = serde_json::to_value(Amount(u64::MAX)).unwrap();
        assert_eq!(a, "18446744073709551615");
        assert_eq!(serde_json::from_value::<Amount>(a).unwrap().0, u64::MAX);
        let h = Hash([0xab; 32]);
        let v = serde_json::to_value(h).unwrap();
        assert_eq!(v, "ab".repeat(32));
        assert_eq!(serde_json::from_value::<Hash>(v).unwrap(), h);
        assert!(serde_json::from_str::<Amount>("\"+5\"").is_err());
        assert!(serde_json::from_value::<Hash>(serde_json::json!("+a".repeat(32))).is_err());
        for bad in ["\"x\"", "\"-1\"", "\"é\"", "\"\""] {
            assert!(serde_json::from_str::<Amount>(bad).is_err(), "{bad}");
            assert!(serde_json::from_str::<Key>(bad).is_err(), "{bad}");
            assert!(serde_json::from_str::<Hash>(bad).is_err(), "{bad}");
        }
        assert_eq!(Key::opt(&Pubkey::default()), None);
        assert_eq!(Hash::opt(&[0; 32]), None);
    }

    #[test]
    fn every_value_written_matches_its_schema_pattern() {
        let pattern = |s: Schema| s.get("pattern").unwrap().as_str().unwrap().to_string();
        let mut g = SchemaGenerator::default();
        // The patterns as a validator reads them, checked on extreme values.
        let key = pattern(Key::json_schema(&mut g));
        let amount = pattern(Amount::json_schema(&mut g));
        let hash = pattern(Hash::json_schema(&mut g));
        let matches = |p: &str, s: &str| {
            let (class, range) = p
                .trim_start_matches('^')
                .trim_end_matches('$')
                .split_once('{')
                .unwrap();
            let (lo, hi) = range
                .trim_end_matches('}')
                .split_once(',')
                .unwrap_or((range.trim_end_matches('}'), range.trim_end_matches('}')));
            let n = s.chars().count();
            let in_class = |c: char| match class {
                "[1-9A-HJ-NP-Za-km-z]" => c.is_ascii_alphanumeric() && !"0OIl".contains(c),
                "[0-9]" => c.is_ascii_digit(),
                "[0-9a-fA-F]" => c.is_ascii_hexdigit(),
                other => panic!("unknown class {other}"),
            };
            n >= lo.parse().unwrap() && n <= hi.parse().unwrap() && s.chars().all(in_class)
        };
        for k in [
            Pubkey::default(),
            Pubkey::new_from_array([0xff; 32]),
            Pubkey::new_from_array([1; 32]),
        ] {
            assert!(matches(&key, &k.to_string()), "{k}");
        }
        for n in [0, 1, u64::MAX] {
            assert!(matches(&amount, &n.to_string()), "{n}");
        }
        assert!(matches(&hash, &Hash([0xff; 32]).to_string()));
    }
}
