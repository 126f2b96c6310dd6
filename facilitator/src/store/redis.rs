//! The store in Redis, shared by every replica. Each operation is one round trip: a command,
//! or a script (EVALSHA, loaded again after a Redis restart) for the ones that change several
//! keys or check before they write.

use super::{millis, Backend, Keep, Result, Rule, Ttl};
use redis::Script;
use std::collections::HashMap;
use trust_gate_server::redis_store::RedisStore;

/// [`Keep`]: KEYS = [the record, the indexes...]; ARGV = [value, ttl ms, member, score,
/// first score kept (1/0), drop below, bound (0: none), the records' prefix].
const KEEP_INDEXED: &str = r"
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
for i = 2, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', '(' .. ARGV[6])
  if ARGV[5] == '1' then
    redis.call('ZADD', KEYS[i], 'NX', ARGV[4], ARGV[3])
  else
    redis.call('ZADD', KEYS[i], ARGV[4], ARGV[3])
  end
  if redis.call('PTTL', KEYS[i]) < tonumber(ARGV[2]) then
    redis.call('PEXPIRE', KEYS[i], ARGV[2])
  end
end
local bound = tonumber(ARGV[7])
if bound > 0 and #KEYS > 1 then
  while redis.call('ZCARD', KEYS[2]) > bound do
    local first = redis.call('ZRANGE', KEYS[2], 0, 1)
    local id = first[1]
    if id == ARGV[3] then id = first[2] end
    for i = 2, #KEYS do redis.call('ZREM', KEYS[i], id) end
    redis.call('DEL', ARGV[8] .. id)
  end
end
return 1";

/// Removes ARGV[1] from the indexes KEYS[2..] and deletes the record KEYS[1].
const REMOVE_INDEXED: &str = r"
for i = 2, #KEYS do redis.call('ZREM', KEYS[i], ARGV[1]) end
return redis.call('DEL', KEYS[1])";

/// Rewrites KEYS[1]'s field ARGV[1] with ARGV[2] only while it is there.
const REPLACE_ENTRY: &str = r"
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  return 1
end
return 0";

pub struct Redis {
    store: RedisStore,
    keep_indexed: Script,
    remove_indexed: Script,
    replace_entry: Script,
}

impl Redis {
    /// Parses `url`; the connection is made on first use (see [`RedisStore::new`]).
    pub fn new(url: &str) -> std::result::Result<Self, String> {
        Ok(Redis {
            store: RedisStore::new(url)?,
            keep_indexed: Script::new(KEEP_INDEXED),
            remove_indexed: Script::new(REMOVE_INDEXED),
            replace_entry: Script::new(REPLACE_ENTRY),
        })
    }

    /// A Redis error as the interface reports it.
    fn checked<T>(&self, r: redis::RedisResult<T>) -> Result<T> {
        r.map_err(|e| self.store.unavailable(e))
    }

    async fn query<T: redis::FromRedisValue>(&self, cmd: &redis::Cmd) -> Result<T> {
        self.checked(self.store.query(cmd).await)
    }

    async fn invoke<T: redis::FromRedisValue>(
        &self,
        script: &Script,
        keys: &[String],
        args: &[String],
    ) -> Result<T> {
        self.checked(self.store.invoke(script, keys, args).await)
    }
}

#[async_trait::async_trait]
impl Backend for Redis {
    fn name(&self) -> &str {
        &self.store.name
    }

    fn shared(&self) -> bool {
        true
    }

    fn round_trips(&self) -> u64 {
        self.store.round_trips()
    }

    async fn ping(&self) -> Result<()> {
        self.checked(self.store.ping().await)
    }

    async fn get(&self, key: &str) -> Result<Option<String>> {
        self.query(redis::cmd("GET").arg(key)).await
    }

    async fn get_many(&self, keys: &[String]) -> Result<Vec<Option<String>>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        self.query(redis::cmd("MGET").arg(keys)).await
    }

    async fn set(&self, key: &str, value: &str, ttl: Ttl) -> Result<()> {
        let mut cmd = redis::cmd("SET");
        cmd.arg(key).arg(value);
        if let Some(ttl) = ttl {
            cmd.arg("PX").arg(millis(ttl));
        }
        self.query(&cmd).await
    }

    async fn claim(&self, key: &str, value: &str, ttl: Ttl) -> Result<Option<String>> {
        self.checked(self.store.claim(key, value, ttl).await)
    }

    async fn replace_if(&self, key: &str, old: &str, new: &str, ttl: Ttl) -> Result<bool> {
        self.checked(self.store.replace_if(key, old, new, ttl).await)
    }

    async fn delete_if(&self, key: &str, value: &str) -> Result<bool> {
        self.checked(self.store.delete_if(key, value).await)
    }

    async fn delete(&self, key: &str) -> Result<()> {
        self.query(redis::cmd("DEL").arg(key)).await
    }

    async fn index_add(&self, key: &str, member: &str, score: i64) -> Result<()> {
        self.query(redis::cmd("ZADD").arg(key).arg(score).arg(member))
            .await
    }

    async fn index_remove(&self, key: &str, member: &str) -> Result<()> {
        self.query(redis::cmd("ZREM").arg(key).arg(member)).await
    }

    async fn index_range(&self, key: &str, min: i64, limit: usize) -> Result<Vec<(String, i64)>> {
        let found: Vec<(String, f64)> = self
            .query(
                redis::cmd("ZRANGE")
                    .arg(key)
                    .arg("+inf")
                    .arg(min)
                    .arg("BYSCORE")
                    .arg("REV")
                    .arg("LIMIT")
                    .arg(0)
                    // Redis reads a count past i64 as an error; a negative one as "all".
                    .arg(i64::try_from(limit).unwrap_or(-1))
                    .arg("WITHSCORES"),
            )
            .await?;
        Ok(found.into_iter().map(|(m, s)| (m, s as i64)).collect())
    }

    async fn keep_indexed(&self, k: &Keep<'_>) -> Result<()> {
        let mut keys = vec![k.key.to_string()];
        keys.extend(k.indexes.iter().map(|i| i.to_string()));
        let (bound, prefix) = k.bound.unwrap_or((0, ""));
        let args = [
            k.value.to_string(),
            millis(k.ttl).to_string(),
            k.member.to_string(),
            k.score.to_string(),
            if k.first_score { "1" } else { "0" }.to_string(),
            k.drop_below.to_string(),
            bound.to_string(),
            prefix.to_string(),
        ];
        self.invoke::<i64>(&self.keep_indexed, &keys, &args)
            .await
            .map(drop)
    }

    async fn remove_indexed(&self, key: &str, indexes: &[&str], member: &str) -> Result<bool> {
        let mut keys = vec![key.to_string()];
        keys.extend(indexes.iter().map(|i| i.to_string()));
        let n: i64 = self
            .invoke(&self.remove_indexed, &keys, &[member.to_string()])
            .await?;
        Ok(n == 1)
    }

    async fn entries(&self, hash: &str) -> Result<HashMap<String, String>> {
        self.query(redis::cmd("HGETALL").arg(hash)).await
    }

    async fn entry(&self, hash: &str, field: &str) -> Result<Option<String>> {
        self.query(redis::cmd("HGET").arg(hash).arg(field)).await
    }

    async fn put_entry(&self, hash: &str, field: &str, value: &str) -> Result<()> {
        self.query(redis::cmd("HSET").arg(hash).arg(field).arg(value))
            .await
    }

    async fn replace_entry(&self, hash: &str, field: &str, value: &str) -> Result<bool> {
        let n: i64 = self
            .invoke(
                &self.replace_entry,
                &[hash.to_string()],
                &[field.to_string(), value.to_string()],
            )
            .await?;
        Ok(n == 1)
    }

    async fn remove_entry(&self, hash: &str, field: &str) -> Result<()> {
        self.query(redis::cmd("HDEL").arg(hash).arg(field)).await
    }

    async fn insert_admitted(
        &self,
        hash: &str,
        field: &str,
        value: &str,
        rule: &Rule<'_>,
    ) -> Result<std::result::Result<(), String>> {
        let mut args = vec![field.to_string(), value.to_string()];
        args.extend(rule.args.iter().cloned());
        let answer: String = self.invoke(rule.script, &[hash.to_string()], &args).await?;
        Ok(if answer == "ok" { Ok(()) } else { Err(answer) })
    }
}
