//! A connection to Redis shared by replicas, and the compare-and-write scripts every keeper
//! of state needs: a claim (write unless present), a replacement and a deletion that act
//! only on the value they expect. The facilitator's store and `paid_once` are built on it.
//!
//! Every command is one round trip (a script is EVALSHA, loaded again after a Redis restart);
//! [`RedisStore::round_trips`] counts them for the bench.

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, Script};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A command that does not answer within this is a failure (the store is down).
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long one connection attempt may take.
const CONNECTION_TIMEOUT: Duration = Duration::from_secs(1);

/// Deletes KEYS[1] only while it holds ARGV[1]: a lock released by its holder, or a pending
/// record forgotten by the settlement that wrote it.
const DELETE_IF: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0";

/// Writes ARGV[1] to KEYS[1] (expiring in ARGV[2] ms; never when 0) unless the key exists;
/// returns the value already there, or nothing when written. (`SET NX GET` needs Redis 7.)
const CLAIM: &str = r"
local v = redis.call('GET', KEYS[1])
if v then return v end
if ARGV[2] == '0' then
  redis.call('SET', KEYS[1], ARGV[1])
else
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
return false";

/// Replaces KEYS[1]'s value ARGV[1] with ARGV[2] (expiring in ARGV[3] ms; never when 0: a
/// plain SET drops an earlier expiry); 1 when it did.
const REPLACE_IF: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  if ARGV[3] == '0' then
    redis.call('SET', KEYS[1], ARGV[2])
  else
    redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  end
  return 1
end
return 0";

/// The shared store failed (unreachable, or an error answer): nothing may be sent.
#[derive(Clone, Debug, thiserror::Error)]
#[error("the lock store {store} is unavailable: {message}")]
pub struct StoreUnavailable {
    pub store: String,
    pub message: String,
}

pub struct RedisStore {
    /// Where the store is, for messages: `redis://host:port` (never the credentials).
    pub name: String,
    con: ConnectionManager,
    delete_if: Script,
    claim: Script,
    replace_if: Script,
    round_trips: AtomicU64,
}

impl RedisStore {
    /// Parses `url` and prepares a connection that is made on first use and made again
    /// after a failure (no round trip here). Must run inside a tokio runtime.
    pub fn new(url: &str) -> Result<Self, String> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err("the Redis lock store is made inside a tokio runtime".into());
        }
        let client = Client::open(url).map_err(|e| e.to_string())?;
        let name = match client.get_connection_info().addr() {
            redis::ConnectionAddr::Unix(path) => format!("redis+unix://{}", path.display()),
            addr => format!("redis://{addr}"),
        };
        let config = ConnectionManagerConfig::new()
            .set_response_timeout(Some(RESPONSE_TIMEOUT))
            .set_connection_timeout(Some(CONNECTION_TIMEOUT))
            // Fail fast while Redis is down (each request then answers 503); the next
            // command tries to connect again.
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_millis(100));
        let con =
            ConnectionManager::new_lazy_with_config(client, config).map_err(|e| e.to_string())?;
        Ok(RedisStore {
            name,
            con,
            delete_if: Script::new(DELETE_IF),
            claim: Script::new(CLAIM),
            replace_if: Script::new(REPLACE_IF),
            round_trips: AtomicU64::new(0),
        })
    }

    /// `e`, a failed command, as this store's unavailability.
    pub fn unavailable(&self, e: redis::RedisError) -> StoreUnavailable {
        StoreUnavailable {
            store: self.name.clone(),
            message: e.to_string(),
        }
    }

    /// Commands sent so far (each one round trip).
    pub fn round_trips(&self) -> u64 {
        self.round_trips.load(Ordering::Relaxed)
    }

    fn con(&self) -> ConnectionManager {
        self.round_trips.fetch_add(1, Ordering::Relaxed);
        // A clone shares the one multiplexed connection.
        self.con.clone()
    }

    pub async fn ping(&self) -> redis::RedisResult<()> {
        redis::cmd("PING")
            .query_async::<String>(&mut self.con())
            .await
            .map(drop)
    }

    /// Deletes `key` if it still holds `value`; false when it did not (expired, or another
    /// holder's now).
    pub async fn delete_if(&self, key: &str, value: &str) -> redis::RedisResult<bool> {
        let n: i64 = self
            .delete_if
            .key(key)
            .arg(value)
            .invoke_async(&mut self.con())
            .await?;
        Ok(n == 1)
    }

    /// Runs `script` (EVALSHA, loaded again when Redis lost it) with `keys` and `args`.
    pub async fn invoke<T: redis::FromRedisValue>(
        &self,
        script: &Script,
        keys: &[String],
        args: &[String],
    ) -> redis::RedisResult<T> {
        let mut call = script.prepare_invoke();
        for k in keys {
            call.key(k);
        }
        for a in args {
            call.arg(a);
        }
        call.invoke_async(&mut self.con()).await
    }

    /// Sends one command `cmd`.
    pub async fn query<T: redis::FromRedisValue>(&self, cmd: &redis::Cmd) -> redis::RedisResult<T> {
        cmd.query_async(&mut self.con()).await
    }

    /// Writes `value` unless `key` exists: `None` when written, else the value there. It
    /// expires after `ttl`, or never when `None`.
    pub async fn claim(
        &self,
        key: &str,
        value: &str,
        ttl: Option<Duration>,
    ) -> redis::RedisResult<Option<String>> {
        self.claim
            .key(key)
            .arg(value)
            .arg(ttl.map_or(0, millis))
            .invoke_async(&mut self.con())
            .await
    }

    /// Replaces `old` with `new` at `key` (expiring after `ttl`, or never when `None`); false
    /// when `key` no longer held `old`.
    pub async fn replace_if(
        &self,
        key: &str,
        old: &str,
        new: &str,
        ttl: Option<Duration>,
    ) -> redis::RedisResult<bool> {
        let n: i64 = self
            .replace_if
            .key(key)
            .arg(old)
            .arg(new)
            .arg(ttl.map_or(0, millis))
            .invoke_async(&mut self.con())
            .await?;
        Ok(n == 1)
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}
