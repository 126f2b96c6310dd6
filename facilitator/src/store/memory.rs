//! The store in this process: one replica only. Every operation holds one lock for its
//! whole step, which is what makes the multi-key ones atomic; nothing waits inside it. An
//! expired value or index reads as absent; the expired ones are dropped whenever the values
//! number a power of two, so the maps stay within twice what is live.

use super::{Backend, Keep, Result, Rule, Ttl};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

type Index = HashMap<String, i64>;

#[derive(Default)]
pub struct Memory {
    data: Mutex<Data>,
}

#[derive(Default)]
struct Data {
    values: HashMap<String, (String, Option<Instant>)>,
    indexes: HashMap<String, (Index, Option<Instant>)>,
    hashes: HashMap<String, HashMap<String, String>>,
}

fn live(until: &Option<Instant>, now: Instant) -> bool {
    until.is_none_or(|u| now < u)
}

impl Data {
    fn value(&self, key: &str, now: Instant) -> Option<&String> {
        self.values
            .get(key)
            .filter(|(_, u)| live(u, now))
            .map(|(v, _)| v)
    }

    fn put(&mut self, key: &str, value: &str, ttl: Ttl, now: Instant) {
        if self.values.len().is_power_of_two() {
            self.values.retain(|_, (_, u)| live(u, now));
            self.indexes.retain(|_, (_, u)| live(u, now));
        }
        self.values
            .insert(key.to_string(), (value.to_string(), ttl.map(|t| now + t)));
    }

    fn index(&mut self, key: &str, now: Instant) -> &mut (Index, Option<Instant>) {
        let slot = self.indexes.entry(key.to_string()).or_default();
        if !live(&slot.1, now) {
            *slot = Default::default();
        }
        slot
    }
}

impl Memory {
    fn data(&self) -> MutexGuard<'_, Data> {
        // Each operation's writes are made after its checks: a panic leaves no half step.
        self.data.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait::async_trait]
impl Backend for Memory {
    fn name(&self) -> &str {
        "in-process"
    }

    fn shared(&self) -> bool {
        false
    }

    fn round_trips(&self) -> u64 {
        0
    }

    async fn ping(&self) -> Result<()> {
        Ok(())
    }

    async fn get(&self, key: &str) -> Result<Option<String>> {
        Ok(self.data().value(key, Instant::now()).cloned())
    }

    async fn get_many(&self, keys: &[String]) -> Result<Vec<Option<String>>> {
        let (data, now) = (self.data(), Instant::now());
        Ok(keys.iter().map(|k| data.value(k, now).cloned()).collect())
    }

    async fn set(&self, key: &str, value: &str, ttl: Ttl) -> Result<()> {
        self.data().put(key, value, ttl, Instant::now());
        Ok(())
    }

    async fn claim(&self, key: &str, value: &str, ttl: Ttl) -> Result<Option<String>> {
        let (mut data, now) = (self.data(), Instant::now());
        if let Some(there) = data.value(key, now) {
            return Ok(Some(there.clone()));
        }
        data.put(key, value, ttl, now);
        Ok(None)
    }

    async fn replace_if(&self, key: &str, old: &str, new: &str, ttl: Ttl) -> Result<bool> {
        let (mut data, now) = (self.data(), Instant::now());
        if data.value(key, now).map(String::as_str) != Some(old) {
            return Ok(false);
        }
        data.put(key, new, ttl, now);
        Ok(true)
    }

    async fn delete_if(&self, key: &str, value: &str) -> Result<bool> {
        let (mut data, now) = (self.data(), Instant::now());
        if data.value(key, now).map(String::as_str) != Some(value) {
            return Ok(false);
        }
        data.values.remove(key);
        Ok(true)
    }

    async fn delete(&self, key: &str) -> Result<()> {
        self.data().values.remove(key);
        Ok(())
    }

    async fn index_add(&self, key: &str, member: &str, score: i64) -> Result<()> {
        let mut data = self.data();
        let index = data.index(key, Instant::now());
        index.0.insert(member.to_string(), score);
        index.1 = None;
        Ok(())
    }

    async fn index_remove(&self, key: &str, member: &str) -> Result<()> {
        if let Some((index, _)) = self.data().indexes.get_mut(key) {
            index.remove(member);
        }
        Ok(())
    }

    async fn index_range(&self, key: &str, min: i64, limit: usize) -> Result<Vec<(String, i64)>> {
        let mut data = self.data();
        let index = &data.index(key, Instant::now()).0;
        let mut found: Vec<(String, i64)> = index
            .iter()
            .filter(|(_, s)| **s >= min)
            .map(|(m, s)| (m.clone(), *s))
            .collect();
        found.sort_by(|a, b| (b.1, &b.0).cmp(&(a.1, &a.0)));
        found.truncate(limit);
        Ok(found)
    }

    async fn keep_indexed(&self, k: &Keep<'_>) -> Result<()> {
        let (mut data, now) = (self.data(), Instant::now());
        data.put(k.key, k.value, Some(k.ttl), now);
        let expires = now + k.ttl;
        for name in k.indexes {
            let (index, until) = data.index(name, now);
            index.retain(|_, s| *s >= k.drop_below);
            let first = k
                .first_score
                .then(|| index.get(k.member).copied())
                .flatten();
            index.insert(k.member.to_string(), first.unwrap_or(k.score));
            // An index lives as long as the longest-lived of its records.
            *until = until.map(|u| u.max(expires)).or(Some(expires));
        }
        let (Some((bound, prefix)), Some(first)) = (k.bound, k.indexes.first()) else {
            return Ok(());
        };
        let mut others: Vec<(i64, String)> = data
            .index(first, now)
            .0
            .iter()
            .filter(|(m, _)| m.as_str() != k.member)
            .map(|(m, s)| (*s, m.clone()))
            .collect();
        others.sort();
        let over = (others.len() + 1).saturating_sub(bound);
        for (_, member) in others.into_iter().take(over) {
            for name in k.indexes {
                data.index(name, now).0.remove(&member);
            }
            data.values.remove(&format!("{prefix}{member}"));
        }
        Ok(())
    }

    async fn remove_indexed(&self, key: &str, indexes: &[&str], member: &str) -> Result<bool> {
        let (mut data, now) = (self.data(), Instant::now());
        for name in indexes {
            data.index(name, now).0.remove(member);
        }
        let was = data.value(key, now).is_some();
        data.values.remove(key);
        Ok(was)
    }

    async fn entries(&self, hash: &str) -> Result<HashMap<String, String>> {
        Ok(self.data().hashes.get(hash).cloned().unwrap_or_default())
    }

    async fn entry(&self, hash: &str, field: &str) -> Result<Option<String>> {
        Ok(self
            .data()
            .hashes
            .get(hash)
            .and_then(|h| h.get(field))
            .cloned())
    }

    async fn put_entry(&self, hash: &str, field: &str, value: &str) -> Result<()> {
        let mut data = self.data();
        let h = data.hashes.entry(hash.to_string()).or_default();
        h.insert(field.to_string(), value.to_string());
        Ok(())
    }

    async fn replace_entry(&self, hash: &str, field: &str, value: &str) -> Result<bool> {
        let mut data = self.data();
        let Some(slot) = data.hashes.get_mut(hash).and_then(|h| h.get_mut(field)) else {
            return Ok(false);
        };
        *slot = value.to_string();
        Ok(true)
    }

    async fn remove_entry(&self, hash: &str, field: &str) -> Result<()> {
        if let Some(h) = self.data().hashes.get_mut(hash) {
            h.remove(field);
        }
        Ok(())
    }

    async fn insert_admitted(
        &self,
        hash: &str,
        field: &str,
        value: &str,
        rule: &Rule<'_>,
    ) -> Result<std::result::Result<(), String>> {
        let mut data = self.data();
        let h = data.hashes.entry(hash.to_string()).or_default();
        if h.contains_key(field) {
            return Ok(Err("exists".into()));
        }
        let entries: Vec<String> = h.values().cloned().collect();
        if let Err(why) = (rule.check)(&entries) {
            return Ok(Err(why));
        }
        h.insert(field.to_string(), value.to_string());
        Ok(Ok(()))
    }
}
